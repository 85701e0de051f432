"""Dask workers as Berth jobs on real agents: ``BerthCluster.scale(jobs=2)`` submits two
worker jobs, a ``Client`` computes on them, ``adapt`` asks for workers on its own, and
closing the cluster leaves no job and no worker process behind.

The jobs run as ``nobody`` (the test agents run as root): the workers run Debian's
``python3`` with this environment's packages (:mod:`tests.support.nobody_env`).
"""

from __future__ import annotations

import subprocess

import pytest

from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import RUNNER
from tests.support.nobody_env import SYSTEM_PYTHON, readable_site
from tests.support.waiting import wait_until

pytest.importorskip("dask_jobqueue")

from distributed import Client
from distributed.core import Status

from berth_client.dask import BerthCluster


def _workers_left() -> list[str]:
    found = subprocess.run(["pgrep", "-af", "distributed.cli.dask_worker"],
                           capture_output=True, text=True)  # fmt: skip
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


@pytest.fixture
def dask_cluster(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> BerthCluster:
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no /usr/bin/python3 for the workers, which run as nobody")
    scratch = tmp_path_factory.mktemp("dask", numbered=True)
    site = readable_site(scratch, ["distributed"], ["distributed"])
    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    cluster.add_agent("n2", "cpus=2,mem_gb=4")
    return BerthCluster(
        url=cluster.daemon.url,
        token=RUNNER,
        cores=1,
        memory="1GiB",
        walltime="00:05:00",
        python=str(SYSTEM_PYTHON),
        job_script_prologue=[f"export PYTHONPATH={site}"],
        chdir=str(cluster.jobs_dir),
        scheduler_options={"host": "127.0.0.1", "dashboard_address": None},
        death_timeout=20,
    )


def test_a_client_computes_on_workers_berth_started(
    cluster: Cluster, dask_cluster: BerthCluster
) -> None:
    with dask_cluster:
        script = dask_cluster.job_script()  # type: ignore[no-untyped-call]
        assert "#BERTH -r cpus=1,mem_gb=1" in script
        assert "#BERTH -t 300" in script
        dask_cluster.scale(jobs=2)  # type: ignore[no-untyped-call]
        with Client(dask_cluster) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(2, timeout=90)

            def square(x: int) -> int:
                return x * x

            assert sum(client.gather(client.map(square, range(10)))) == 285
            jobs = cluster.call("GET", "/v1/jobs?state=RUNNING").json()["jobs"]
            workers = [j for j in jobs if j["name"] == "dask-worker"]
            assert len(workers) == 2  # each worker is a Berth job of one cpu
            assert {j["resources"]["cpus"] for j in workers} == {1}
            # Held here, the worker objects outlive the close: it must mark them closed
            # itself (it asserts so), not leave them to the garbage collector.
            made = list(dask_cluster.workers.values())
        ids = [j["job_id"] for j in workers]
    assert [w.status for w in made] == [Status.closed] * 2
    # Closing the cluster cancelled its jobs; their processes are gone.
    for job_id in ids:
        assert cluster.wait_state(job_id, "CANCELLED", seconds=30)["job_state"] == "CANCELLED"
    wait_until(lambda: not _workers_left(), 30, "the worker processes to go")


def test_adapt_asks_berth_for_workers_as_work_comes(
    cluster: Cluster, dask_cluster: BerthCluster
) -> None:
    with dask_cluster:
        dask_cluster.adapt(minimum_jobs=0, maximum_jobs=2)
        with Client(dask_cluster) as client:  # type: ignore[no-untyped-call]
            total = client.submit(sum, range(100)).result(timeout=120)
            assert total == 4950
            names = [j["name"] for j in cluster.call("GET", "/v1/jobs").json()["jobs"]]
            assert "dask-worker" in names  # adapt submitted at least one worker job
    wait_until(lambda: not _workers_left(), 60, "the worker processes to go")
