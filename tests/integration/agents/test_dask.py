"""Dask workers as Berth jobs on real agents: ``BerthCluster.scale(jobs=2)`` submits two
worker jobs, a ``Client`` computes on them, ``adapt`` asks for workers on its own, and
closing the cluster leaves no job and no worker process behind.

The jobs run as ``nobody`` (the test agents run as root), which cannot read this
interpreter's installation under ``/root``: the workers run Debian's ``python3`` (the
same minor version) with this environment's packages on ``PYTHONPATH``, copied where
``nobody`` can read them when the checkout itself is not readable.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import RUNNER
from tests.support.waiting import wait_until

pytest.importorskip("dask_jobqueue")

from distributed import Client

from berth_client.dask import BerthCluster

SYSTEM_PYTHON = Path("/usr/bin/python3")
#: What a worker imports, with what those import.
WORKER_PACKAGES = ("distributed",)


def _as_nobody(*command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "env", "HOME=/tmp",
         *(f"{k}={v}" for k, v in env.items()), *command],
        capture_output=True, text=True, timeout=60, cwd="/tmp",
    )  # fmt: skip


def _worker_site(scratch: Path) -> str:
    """A ``PYTHONPATH`` from which ``nobody`` imports ``distributed`` with Debian's
    python3: this environment's site-packages if readable, else a copy of just the
    distributions a worker needs."""
    site = next(p for p in sys.path if p.endswith("site-packages"))
    probe = (str(SYSTEM_PYTHON), "-c", "import distributed")
    if _as_nobody(*probe, env={"PYTHONPATH": site}).returncode == 0:
        return site
    copy = scratch / "site"
    wanted, seen = list(WORKER_PACKAGES), set()
    while wanted:
        name = wanted.pop()
        dist = importlib.metadata.distribution(name)
        if dist.metadata["Name"].lower() in seen:
            continue
        seen.add(dist.metadata["Name"].lower())
        for file in dist.files or ():
            source = Path(str(dist.locate_file(file)))
            if source.is_file() and source.is_relative_to(site):
                target = copy / source.relative_to(site)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        for text in dist.requires or ():
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name)
    for path in [scratch, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    assert _as_nobody(*probe, env={"PYTHONPATH": str(copy)}).returncode == 0
    return str(copy)


def _workers_left() -> list[str]:
    found = subprocess.run(["pgrep", "-af", "distributed.cli.dask_worker"],
                           capture_output=True, text=True)  # fmt: skip
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


@pytest.fixture
def dask_cluster(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> BerthCluster:
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no /usr/bin/python3 for the workers, which run as nobody")
    site = _worker_site(tmp_path_factory.mktemp("dask", numbered=True))
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
        script = dask_cluster.job_script()
        assert "#BERTH -r cpus=1,mem_gb=1" in script
        assert "#BERTH -t 300" in script
        dask_cluster.scale(jobs=2)
        with Client(dask_cluster) as client:
            client.wait_for_workers(2, timeout=90)

            def square(x: int) -> int:
                return x * x

            assert sum(client.gather(client.map(square, range(10)))) == 285
            jobs = cluster.call("GET", "/v1/jobs?state=RUNNING").json()["jobs"]
            workers = [j for j in jobs if j["name"] == "dask-worker"]
            assert len(workers) == 2  # each worker is a Berth job of one cpu
            assert {j["resources"]["cpus"] for j in workers} == {1}
        ids = [j["job_id"] for j in workers]
    # Closing the cluster cancelled its jobs; their processes are gone.
    for job_id in ids:
        assert cluster.wait_state(job_id, "CANCELLED", seconds=30)["job_state"] == "CANCELLED"
    wait_until(lambda: not _workers_left(), 30, "the worker processes to go")


def test_adapt_asks_berth_for_workers_as_work_comes(
    cluster: Cluster, dask_cluster: BerthCluster
) -> None:
    with dask_cluster:
        dask_cluster.adapt(minimum_jobs=0, maximum_jobs=2)
        with Client(dask_cluster) as client:
            total = client.submit(sum, range(100)).result(timeout=120)
            assert total == 4950
            names = [j["name"] for j in cluster.call("GET", "/v1/jobs").json()["jobs"]]
            assert "dask-worker" in names  # adapt submitted at least one worker job
    wait_until(lambda: not _workers_left(), 60, "the worker processes to go")
