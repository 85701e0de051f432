"""Berth's PSI/J executor on real agents: PSI/J jobs run through PSI/J's launchers, their
states follow Berth's event stream (QUEUED, ACTIVE, COMPLETED, FAILED, CANCELED), and
attach, list and cancel work. The mapping of a ``JobSpec`` is checked without a daemon.

The agents run jobs as ``nobody``: the PSI/J work directory (where the launcher scripts
are deployed) and the jobs' files are in the cluster's world-writable jobs directory.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import RUNNER

pytest.importorskip("psij")

from psij import (
    Job,
    JobAttributes,
    JobExecutor,
    JobSpec,
    JobState,
    ResourceSpecV1,
    SubmitException,
)

from berth_client.psij import BerthExecutorConfig, BerthJobExecutor

TIMEOUT = timedelta(seconds=60)


@pytest.fixture
def executor(cluster: Cluster) -> JobExecutor:
    cluster.add_agent("n1", "cpus=4,mem_gb=8")
    cluster.add_agent("n2", "cpus=4,mem_gb=8")
    work = cluster.jobs_dir / "psij-work"
    work.mkdir(mode=0o777)
    work.chmod(0o777)
    config = BerthExecutorConfig(token=RUNNER, work_directory=work)
    made = JobExecutor.get_instance("berth", url=cluster.daemon.url, config=config)
    # PSI/J loads the executor's module from its file, as a module of its own.
    assert type(made).__name__ == "BerthJobExecutor"
    assert made.name == "berth"
    return made


def _spec(cluster: Cluster, executable: str, *arguments: str, **more: object) -> JobSpec:
    return JobSpec(
        executable=executable,
        arguments=list(arguments),
        directory=cluster.jobs_dir,
        attributes=JobAttributes(duration=timedelta(minutes=2)),
        **more,  # type: ignore[arg-type]
    )


def test_a_job_runs_with_its_environment_and_files_and_completes(
    cluster: Cluster, executor: JobExecutor
) -> None:
    (cluster.jobs_dir / "in.txt").write_text("from stdin")
    out = cluster.jobs_dir / "out.txt"
    seen: list[JobState] = []
    job = Job(_spec(cluster, "/bin/bash", "-c", "cat; echo -n \" $GREETING\"",
                    stdin_path=cluster.jobs_dir / "in.txt", stdout_path=out,
                    environment={"GREETING": "and its environment"}))  # fmt: skip
    job.set_job_status_callback(lambda _, status: seen.append(status.state))
    executor.submit(job)
    assert job.native_id is not None
    status = job.wait(timeout=TIMEOUT)
    assert status is not None
    assert status.state == JobState.COMPLETED, status
    assert out.read_text() == "from stdin and its environment"
    assert seen[-1] == JobState.COMPLETED
    assert JobState.ACTIVE in seen  # from the event stream, in order
    assert seen.index(JobState.QUEUED) < seen.index(JobState.ACTIVE)
    assert cluster.job(int(job.native_id))["job_state"] == "COMPLETED"


def test_a_failing_job_fails_with_its_exit_code(cluster: Cluster, executor: JobExecutor) -> None:
    job = Job(_spec(cluster, "/bin/bash", "-c", "exit 7"))
    executor.submit(job)
    status = job.wait(timeout=TIMEOUT)
    assert status is not None
    assert status.state == JobState.FAILED
    assert status.exit_code == 7
    missing = Job(_spec(cluster, "/bin/no_such_file_or_directory"))
    executor.submit(missing)
    status = missing.wait(timeout=TIMEOUT)
    assert status is not None
    assert status.state == JobState.FAILED
    assert status.exit_code == 127


def test_cancel_list_and_attach(cluster: Cluster, executor: JobExecutor) -> None:
    job = Job(_spec(cluster, "/bin/sleep", "60"))
    executor.submit(job)
    job.wait(target_states=[JobState.ACTIVE], timeout=TIMEOUT)
    assert job.native_id in executor.list()
    other = Job()
    second = JobExecutor.get_instance("berth", url=cluster.daemon.url,
                                      config=BerthExecutorConfig(token=RUNNER))  # fmt: skip
    second.attach(other, job.native_id)
    assert other.status.state == JobState.ACTIVE
    same = Job()  # the same executor may follow one Berth job as two PSI/J jobs
    executor.attach(same, job.native_id)
    job.cancel()
    for followed in (job, other, same):
        status = followed.wait(timeout=TIMEOUT)
        assert status is not None
        assert status.state == JobState.CANCELED
    assert job.native_id not in executor.list()


def test_the_multiple_launcher_runs_every_process(cluster: Cluster, executor: JobExecutor) -> None:
    out = cluster.jobs_dir / "many.txt"
    spec = _spec(cluster, "/bin/bash", "-c", "echo $_PSI_J_PROCESS_INDEX_", stdout_path=out,
                 resources=ResourceSpecV1(process_count=3), launcher="multiple")  # fmt: skip
    job = Job(spec)
    executor.submit(job)
    status = job.wait(timeout=TIMEOUT)
    assert status is not None
    assert status.state == JobState.COMPLETED, status
    assert sorted(out.read_text().split()) == ["1", "2", "3"]
    assert cluster.job(int(str(job.native_id)))["slots"]["count"] == 3


def test_a_job_berth_refuses_raises_submit_exception(
    cluster: Cluster, executor: JobExecutor
) -> None:
    job = Job(_spec(cluster, "/bin/true", resources=ResourceSpecV1(process_count=64)))
    with pytest.raises(SubmitException, match="Berth"):
        executor.submit(job)


def test_a_spec_maps_onto_a_berth_job(tmp_path: Path) -> None:
    executor = BerthJobExecutor("http://127.0.0.1:1", BerthExecutorConfig(work_directory=tmp_path))
    attributes = JobAttributes(
        duration=timedelta(minutes=90),
        queue_name="gpu",
        account="physics",
        custom_attributes={"berth.dependency": "afterok:12", "slurm.constraint": "x"},
    )
    resources = ResourceSpecV1(node_count=2, processes_per_node=4, cpu_cores_per_process=2,
                               gpu_cores_per_process=1, memory=16 * 2**30)  # fmt: skip
    spec = JobSpec(executable="/bin/hostname", arguments=["-s"], directory=tmp_path,
                   environment={"A": "x y", "N": 3}, attributes=attributes,
                   resources=resources, launcher="mpirun", name="sim")  # fmt: skip
    body = executor.job_body(Job(spec))
    assert body["time_limit"] == 5400
    assert (body["partition"], body["account"], body["name"]) == ("gpu", "physics", "sim")
    assert body["dependency"] == "afterok:12"
    assert "constraint" not in body  # another executor's attribute
    assert body["slots"] == {"count": 8, "per_slot": {"cpus": 2, "gpus": 1, "mem_gb": 2}}
    assert body["nodes"] == {"count": 2, "exclusive": False}
    assert body["chdir"] == str(tmp_path.resolve())
    script = body["script"]
    assert "export A='x y'\nexport N=3\n" in script
    assert "mpi_launch.sh" in script
    assert script.rstrip().endswith("/bin/hostname -s")


def test_with_several_daemons_the_stream_follows_a_standby_to_the_leader(
    cluster: Cluster,
) -> None:
    """The executor is given a standby first (Berth's own standby server, pointing to
    the cluster's daemon as the leader): submissions and the event stream both follow
    its redirect, so the job's states still come from the leader's stream."""
    import threading

    import uvicorn

    from berth.runtime.ha import Standby
    from tests.integration.conftest import free_port

    cluster.add_agent("n1", "cpus=4,mem_gb=8")
    standby = Standby("standby-for-the-test")
    standby.leader_url = cluster.daemon.url
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(standby, host="127.0.0.1", port=port,
                                          log_level="warning", lifespan="on"))  # fmt: skip
    serving = threading.Thread(target=server.run, daemon=True)
    serving.start()
    try:
        while not server.started:
            serving.join(0.05)
        work = cluster.jobs_dir / "psij-work"
        work.mkdir(mode=0o777)
        work.chmod(0o777)
        config = BerthExecutorConfig(token=RUNNER, work_directory=work)
        urls = f"http://127.0.0.1:{port},{cluster.daemon.url}"
        executor = JobExecutor.get_instance("berth", url=urls, config=config)
        job = Job(_spec(cluster, "/bin/true"))
        executor.submit(job)
        status = job.wait(timeout=TIMEOUT)
        assert status is not None
        assert status.state == JobState.COMPLETED, status
    finally:
        server.should_exit = True
        serving.join(10)
