"""The shepherd and the agent's job directories with real processes: ends, time limits,
cancels that leave nothing behind, suspend/resume, and adoption after a restart."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from berth.agent.jobs import LocalJobs, job_key
from berth.agent.proc import alive, read_json, start_ticks
from berth.agent.shepherd import Shepherd
from tests.support.waiting import wait_until


def spec(tmp: Path, command: str, time_limit: float = 60, grace: float = 0.5) -> dict[str, Any]:
    return {
        "job_id": 1,
        "command": command,
        "cwd": str(tmp),
        "stdout": str(tmp / "out"),
        "stderr": str(tmp / "err"),
        "env": {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join(sys.path)},
        "time_limit": time_limit,
        "grace": grace,
    }


def ended(jobs: LocalJobs, key: str, seconds: float = 10.0) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        jobs.refresh()
        return jobs.jobs[key].ended

    result: dict[str, Any] = wait_until(done, seconds)
    jobs.close()
    return result


def test_exit_status_and_output(tmp_path: Path) -> None:
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, spec(tmp_path, "echo hello $BERTH_X; exit 3") | {"env": {"BERTH_X": "x"}})
    end = ended(jobs, job_key(1, 0))
    assert end["state"] == "FAILED"
    assert end["exit_code"] == 3
    assert (tmp_path / "out").read_text() == "hello x\n"
    jobs.launch(2, 0, spec(tmp_path, "true"))
    assert ended(jobs, job_key(2, 0))["state"] == "COMPLETED"


def test_time_limit_kills_a_job_that_ignores_sigterm(tmp_path: Path) -> None:
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, spec(tmp_path, "trap '' TERM; sleep 30", time_limit=0.5))
    end = ended(jobs, job_key(1, 0))
    assert end["state"] == "TIMEOUT"
    assert end["ended_at"] - end["started_at"] < 5


def test_cancel_leaves_no_process_behind(tmp_path: Path) -> None:
    """Children that ignore SIGTERM, and one that escaped to a session of its own."""
    pids = tmp_path / "pids"
    command = (
        f"trap '' TERM; (trap '' TERM; sleep 60) & echo $! >> {pids}; "
        f"setsid sh -c 'trap \"\" TERM; echo $$ >> {pids}; sleep 60' & "
        f"echo $$ >> {pids}; sleep 60"
    )
    jobs = LocalJobs(tmp_path / "agent")
    key = job_key(7, 0)
    jobs.launch(7, 0, spec(tmp_path, command))
    wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 3)
    started = {int(p): start_ticks(int(p)) for p in pids.read_text().split()}
    assert all(ticks is not None for ticks in started.values())
    assert jobs.cancel(key, "cancelled by alice")
    end = ended(jobs, key)
    assert end["state"] == "CANCELLED"
    assert end["reason"] == "cancelled by alice"
    survivors = [pid for pid, ticks in started.items() if alive(pid, ticks)]
    assert survivors == []


def test_suspend_stops_the_group_and_time_limit_counts_run_time(tmp_path: Path) -> None:
    ticks = tmp_path / "ticks"
    jobs = LocalJobs(tmp_path / "agent")
    key = job_key(1, 0)
    command = f"while true; do echo x >> {ticks}; sleep 0.05; done"
    jobs.launch(1, 0, spec(tmp_path, command, 2.5))
    wait_until(lambda: ticks.exists())
    jobs.suspend(key, True)
    # The shepherd stops the group when it reads the agent's signal: wait until the
    # group is stopped (a fixed pause failed on a loaded machine), not a fixed time.
    shepherd = tmp_path / "agent" / "jobs" / key / "shepherd.json"
    wait_until(lambda: (read_json(shepherd) or {}).get("pid"))
    pid = (read_json(shepherd) or {})["pid"]
    wait_until(lambda: group_stopped(pid))
    frozen = ticks.read_text()
    time.sleep(3.0)  # longer than the time limit: suspended time does not count
    assert ticks.read_text() == frozen
    jobs.refresh()
    assert jobs.jobs[key].ended is None
    jobs.suspend(key, False)
    end = ended(jobs, key)
    assert end["state"] == "TIMEOUT"
    assert len(ticks.read_text()) > len(frozen)


def group_stopped(pgid: int) -> bool:
    """Whether every process of the job's group is stopped (``T``), counting a shell
    that waits in ``D`` for a vforked child the stop caught before its exec."""
    states = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[2]) == pgid:
            states.append(fields[0])
    return "T" in states and all(state in "TtD" for state in states)


def test_a_suspend_sent_at_once_is_not_lost(tmp_path: Path) -> None:
    """The daemon can ask for a suspend as soon as a job starts (gang rows turn): the
    agent signals its own new shepherd before the shepherd has written its pid, and the
    shepherd, born with the agent's signals blocked, stops the job when it can."""
    jobs = LocalJobs(tmp_path / "agent")
    key = job_key(1, 0)
    jobs.launch(1, 0, spec(tmp_path, "sleep 30"))
    jobs.suspend(key, True)  # at once: shepherd.json is most likely not written yet
    assert jobs.jobs[key].suspended
    shepherd = tmp_path / "agent" / "jobs" / key / "shepherd.json"
    wait_until(lambda: (read_json(shepherd) or {}).get("pid"))
    pid = (read_json(shepherd) or {})["pid"]
    wait_until(lambda: group_stopped(pid))
    jobs.cancel(key, "done")
    assert ended(jobs, key)["state"] == "CANCELLED"


def test_a_restarted_agent_adopts_running_jobs_and_reports_lost_ones(tmp_path: Path) -> None:
    workdir = tmp_path / "agent"
    first = LocalJobs(workdir)
    first.launch(1, 0, spec(tmp_path, "sleep 0.5"))
    first.launch(2, 0, spec(tmp_path, "sleep 60"))
    wait_until(lambda: read_json(workdir / "jobs" / "2.0" / "shepherd.json") is not None)
    wait_until(lambda: (read_json(workdir / "jobs" / "2.0" / "shepherd.json") or {}).get("pid"))
    # The agent dies; the shepherd of job 2 is killed too (as a reboot would).
    shepherd = read_json(workdir / "jobs" / "2.0" / "shepherd.json")
    assert shepherd is not None
    os.kill(shepherd["shepherd_pid"], signal.SIGKILL)
    wait_until(lambda: not alive(shepherd["shepherd_pid"], shepherd["shepherd_ticks"]))
    first.close()  # the agent is gone (its shepherds are not)
    second = LocalJobs(workdir)
    assert set(second.jobs) == {"1.0", "2.0"}
    assert ended(second, "1.0")["state"] == "COMPLETED"  # adopted, then ended normally
    lost = ended(second, "2.0")
    assert lost["state"] == "NODE_FAIL"
    assert not alive(shepherd["pid"], shepherd["ticks"])  # its job was killed too
    second.forget(["1.0", "2.0"])
    third = LocalJobs(workdir)
    assert third.jobs == {}
    assert third.known("1.0")
    assert third.known("2.0")


def test_a_reused_pid_is_never_adopted(tmp_path: Path) -> None:
    workdir = tmp_path / "agent"
    jobdir = workdir / "jobs" / "5.0"
    jobdir.mkdir(parents=True)
    # A shepherd record naming a live process (this test) with another start time.
    me = os.getpid()
    ticks = start_ticks(me)
    assert ticks is not None
    (jobdir / "shepherd.json").write_text(
        f'{{"shepherd_pid": {me}, "shepherd_ticks": {ticks + 1}, "pid": {me},'
        f' "ticks": {ticks + 1}, "started_at": 1.0}}'
    )
    jobs = LocalJobs(workdir)
    assert jobs.jobs["5.0"].ended is not None
    assert jobs.jobs["5.0"].ended["state"] == "NODE_FAIL"
    assert not jobs.cancel("5.0", "x")  # and nothing was signalled


def test_the_shepherd_is_named_for_ps(tmp_path: Path) -> None:
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, spec(tmp_path, "sleep 5"))
    record = wait_until(
        lambda: (
            (read_json(tmp_path / "agent/jobs/1.0/shepherd.json") or {}).get("pid")
            and read_json(tmp_path / "agent/jobs/1.0/shepherd.json")
        )
    )
    comm = Path(f"/proc/{record['shepherd_pid']}/comm").read_text().strip()
    assert comm == "berth-shepherd"
    assert jobs.cancel("1.0", "done")
    ended(jobs, "1.0")


def test_the_exit_status_survives_an_exit_between_two_looks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's main process may exit after Popen last looked at it and before the
    loop that reaps re-parented descendants: its status must not be lost (Popen would
    then report 0). Popen is made to look too early here, every time."""
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    (jobdir / "spec.json").write_text(json.dumps(spec(tmp_path, "exit 4")))
    shepherd = Shepherd(jobdir)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])  # _start blocks the watched ones
    try:
        assert shepherd._start() is None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert shepherd.process is not None
    monkeypatch.setattr(shepherd.process, "poll", lambda: None)
    wait_until(lambda: _state(shepherd.pid) == "Z", what="the job exited, not yet reaped")
    shepherd._reap()
    assert shepherd.status == 4


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]
