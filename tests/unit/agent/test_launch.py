"""From the daemon's order to the shepherd's spec: who runs it, where, with what env."""

from __future__ import annotations

import os
import pwd
from typing import Any

import pytest

from berth.agent.launch import LaunchRefused, account_for, build_spec

ORDER: dict[str, Any] = {
    "job_id": 42, "attempt": 0, "name": "sim", "user": "nobody", "command": "./run",
    "time_limit": 600, "nodes": ["n3", "n1"], "cpus": 4, "gpus": 2, "chdir": "/tmp",
    "output": "out-%x-%j.txt", "error": None, "submit_time": 7,
}  # fmt: skip


def test_the_job_environment_and_files() -> None:
    spec = build_spec(ORDER, "n3", [1, 3], 5.0, "/var/lib/x")
    env = spec["env"]
    assert env["BERTH_JOB_ID"] == "42"
    assert env["BERTH_JOB_NAME"] == "sim"
    assert env["BERTH_NODELIST"] == "n3,n1"
    assert env["BERTH_NUM_NODES"] == "2"
    assert env["BERTH_CPUS_ON_NODE"] == "4"
    assert env["CUDA_VISIBLE_DEVICES"] == "1,3"
    assert spec["stdout"] == "/tmp/out-sim-42.txt"
    assert spec["stderr"] == "/tmp/berth-42.err"
    assert spec["time_limit"] == 600.0
    assert spec["grace"] == 5.0


def test_the_agent_token_never_reaches_a_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BERTH_AGENT_TOKEN", "secret")
    assert "BERTH_AGENT_TOKEN" not in build_spec(ORDER, "n3", [], 5.0, "/x")["env"]


@pytest.mark.skipif(os.geteuid() != 0, reason="account mapping applies to a root agent")
def test_a_root_agent_runs_jobs_as_the_submitter_and_never_as_root() -> None:
    nobody = pwd.getpwnam("nobody")
    account = account_for("nobody")
    assert (account.uid, account.gid) == (nobody.pw_uid, nobody.pw_gid)
    with pytest.raises(LaunchRefused, match="no local account"):
        account_for("no-such-user-here")
    with pytest.raises(LaunchRefused, match="never run as root"):
        account_for("root")
    with pytest.raises(LaunchRefused, match="never run as root"):
        account_for("alice", run_as="root")
    assert account_for("alice", run_as="nobody").uid == nobody.pw_uid


@pytest.mark.skipif(os.geteuid() == 0, reason="a non-root agent runs jobs as itself")
def test_a_plain_agent_runs_jobs_as_itself() -> None:
    assert account_for("anyone").uid is None
