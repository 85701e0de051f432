"""Eating our own cooking: ``berth emulate --sweep --dask berth://...`` runs the sweep's
replays on Dask workers that are Berth jobs on real agents, with the same table as a
local run, and leaves no job running."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import RUNNER
from tests.support.nobody_env import SYSTEM_PYTHON, readable_site

pytest.importorskip("dask_jobqueue")

import dask

from berth.emulate.samples import KTH_SAMPLE
from berth.runtime.main import main

SOURCES = Path(__file__).resolve().parents[3]
GRID = 'policies = ["easy", "conservative"]\nestimates = ["user", "exact"]\nfirst = 150\n'


def _sweep(tmp_path: Path, *more: str) -> list[dict[str, str]]:
    grid, table = tmp_path / "grid.toml", tmp_path / f"sweep{len(more)}.csv"
    grid.write_text(GRID)
    argv = ["emulate", str(KTH_SAMPLE), "--sweep", str(grid), "--csv", str(table),
            "--workers", "2", "--no-progress", *more]  # fmt: skip
    assert main(argv) == 0
    with table.open() as stream:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(stream)]


def test_a_sweep_runs_on_workers_that_are_berth_jobs(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no /usr/bin/python3 for the workers, which run as nobody")
    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    cluster.add_agent("n2", "cpus=2,mem_gb=4")
    scratch = tmp_path / "env"
    scratch.mkdir()
    site = readable_site(scratch, ["distributed", "tqdm"], ["distributed", "berth.emulate.sweep"],
                         [SOURCES / "server" / "berth", SOURCES / "clients" / "berth_client"])  # fmt: skip
    monkeypatch.setenv("BERTH_TOKEN", RUNNER)
    settings = {
        "jobqueue.berth.python": str(SYSTEM_PYTHON),
        "jobqueue.berth.job-script-prologue": [f"export PYTHONPATH={site}"],
        "jobqueue.berth.chdir": str(cluster.jobs_dir),
        "jobqueue.berth.memory": "1GiB",
        "jobqueue.berth.scheduler-options": {"host": "127.0.0.1", "dashboard_address": None},
    }
    with dask.config.set(settings):
        on_berth = _sweep(tmp_path, "--dask", f"berth://{cluster.daemon.url.split('://')[1]}")
    assert on_berth == _sweep(tmp_path)  # the same table as a local cluster's
    assert len(on_berth) == 4
    workers = [j for j in cluster.call("GET", "/v1/jobs").json()["jobs"]
               if j["name"] == "dask-worker"]  # fmt: skip
    assert workers, "the replays ran on Berth jobs"
    assert {j["job_state"] for j in workers} <= {"CANCELLED", "COMPLETED", "FAILED"}


def test_a_sweep_whose_workers_cannot_start_stops_naming_their_jobs(
    cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every worker job fails (no such Python on the node): the sweep would wait for
    ever on a cluster that will never have a worker; it stops, naming each job's end."""
    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    monkeypatch.setenv("BERTH_TOKEN", RUNNER)
    settings = {
        "jobqueue.berth.python": str(tmp_path / "no-such-python"),
        "jobqueue.berth.chdir": str(cluster.jobs_dir),
        "jobqueue.berth.memory": "1GiB",
        "jobqueue.berth.scheduler-options": {"host": "127.0.0.1", "dashboard_address": None},
    }
    with dask.config.set(settings), pytest.raises(SystemExit) as stopped:
        _sweep(tmp_path, "--dask", f"berth://{cluster.daemon.url.split('://')[1]}")
    message = str(stopped.value.code)
    assert message.startswith("berth: every Dask worker job ended without a worker: job ")
    assert message.count(" FAILED") == 2, message  # (--workers 2)
    jobs = cluster.call("GET", "/v1/jobs").json()["jobs"]
    assert {j["job_state"] for j in jobs} == {"FAILED"}
