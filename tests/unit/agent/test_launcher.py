"""The launcher forks the agent's shepherds and hands back pidfds: the shepherds are its
children, not the agent's, yet the agent signals and watches them; a launcher that dies
is replaced, and one whose agent is gone leaves (its shepherds keep running)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from berth.agent import launcher
from berth.agent.jobs import LocalJobs, job_key
from berth.agent.proc import alive, parent_of, read_json, start_ticks
from berth.agent.shepherd import spawn
from tests.support.waiting import wait_until
from tests.unit.agent.test_shepherd import ended, spec


def launcher_pid(jobs: LocalJobs) -> int:
    process = jobs._launcher._process
    assert process is not None, "the launcher started"
    return process.pid


def test_shepherds_are_the_launchers_children_and_answer_the_agent(tmp_path: Path) -> None:
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, spec(tmp_path, "sleep 30"))
    child = jobs._children[job_key(1, 0)]
    assert not child.own
    assert parent_of(child.pid) == launcher_pid(jobs) != os.getpid()
    # Cancelled through its pidfd at once, before it may have written shepherd.json.
    assert jobs.cancel(job_key(1, 0), "not needed")
    end = ended(jobs, job_key(1, 0))
    assert (end["state"], end["reason"]) == ("CANCELLED", "not needed")


def test_a_launcher_that_died_is_replaced(tmp_path: Path) -> None:
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, spec(tmp_path, "true"))
    first = launcher_pid(jobs)
    assert ended(jobs, job_key(1, 0))["state"] == "COMPLETED"  # (closes the launcher)
    jobs.launch(2, 0, spec(tmp_path, "sleep 30"))
    second = launcher_pid(jobs)
    os.kill(second, signal.SIGKILL)
    wait_until(lambda: start_ticks(second) is None, what="the launcher died")
    # Job 2 runs on without it; job 3 gets a new launcher.
    jobs.launch(3, 0, spec(tmp_path, "exit 4"))
    third = launcher_pid(jobs)
    assert len({first, second, third}) == 3
    assert ended(jobs, job_key(3, 0))["exit_code"] == 4
    record = read_json(tmp_path / "agent" / "jobs" / "2.0" / "shepherd.json")
    assert record is not None
    assert alive(record["shepherd_pid"], record["shepherd_ticks"])
    assert jobs.cancel(job_key(2, 0), "done")  # its pidfd outlives the launcher
    wait_until(lambda: not alive(record["pid"], record["ticks"]), what="job 2 cancelled")


def test_the_launcher_leaves_with_its_agent_and_the_jobs_stay(tmp_path: Path) -> None:
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, spec(tmp_path, "sleep 30"))
    launcher = launcher_pid(jobs)
    wait_until(lambda: read_json(tmp_path / "agent" / "jobs" / "1.0" / "shepherd.json"))
    record = read_json(tmp_path / "agent" / "jobs" / "1.0" / "shepherd.json")
    assert record is not None
    jobs._launcher._channel.close()  # type: ignore[union-attr] # as when the agent dies
    wait_until(lambda: start_ticks(launcher) is None, what="the launcher left")
    assert alive(record["pid"], record["ticks"]), "the job runs on"
    again = LocalJobs(tmp_path / "agent")  # a restarted agent adopts it
    assert again.cancel(job_key(1, 0), "stop")
    assert ended(again, job_key(1, 0))["state"] == "CANCELLED"
    jobs._launcher._channel = None
    jobs.close()


def test_without_a_launcher_the_agent_forks_the_shepherd_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = LocalJobs(tmp_path / "agent")

    def broken(_jobdir: Path) -> tuple[int, int]:
        raise OSError("no launcher here")

    monkeypatch.setattr(jobs._launcher, "spawn", broken)
    jobs.launch(1, 0, spec(tmp_path, "exit 3"))
    child = jobs._children[job_key(1, 0)]
    assert child.own
    assert parent_of(child.pid) == os.getpid()
    assert ended(jobs, job_key(1, 0))["exit_code"] == 3
    wait_until(lambda: not jobs.refresh() and job_key(1, 0) not in jobs._children)
    with pytest.raises(ChildProcessError):  # reaped by the agent: no zombie left
        os.waitpid(child.pid, os.WNOHANG)
    jobs.close()


def test_a_stuck_launcher_is_killed_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "ANSWER_SECONDS", 0.5)
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, spec(tmp_path, "true"))
    stuck = launcher_pid(jobs)
    os.kill(stuck, signal.SIGSTOP)
    jobs.launch(2, 0, spec(tmp_path, "echo ran >> runs"))  # waits 0.5 s, then replaces it
    assert launcher_pid(jobs) != stuck
    assert start_ticks(stuck) is None, "the stuck launcher was killed"
    assert ended(jobs, job_key(2, 0))["state"] == "COMPLETED"
    assert (tmp_path / "runs").read_text() == "ran\n"


def test_a_second_shepherd_for_the_same_job_does_nothing(tmp_path: Path) -> None:
    """As when a launcher given up as stuck had started the job after all."""
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, spec(tmp_path, "echo ran >> runs; sleep 30"))
    jobdir = tmp_path / "agent" / "jobs" / "1.0"
    wait_until(lambda: read_json(jobdir / "shepherd.json"))
    first = read_json(jobdir / "shepherd.json")
    second = spawn(jobdir)
    assert os.waitpid(second, 0)[1] == 0  # it left at once, starting nothing
    assert read_json(jobdir / "shepherd.json") == first
    assert jobs.cancel(job_key(1, 0), "done")
    assert ended(jobs, job_key(1, 0))["state"] == "CANCELLED"
    third = spawn(jobdir)  # after the end: the job is not run again
    assert os.waitpid(third, 0)[1] == 0
    assert (tmp_path / "runs").read_text() == "ran\n"
    assert read_json(jobdir / "exit.json") is not None
