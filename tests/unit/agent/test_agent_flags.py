"""The agent refuses flags that would stop it once started, in one line, before it
starts: its daemons' URLs, its work folder, the account it would run jobs as."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from berth.agent.cli import add_arguments, run, setup_problem


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    status = run(parser.parse_args(argv))
    return status, capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (["--url", "garbage"], "berth agent: --url must be http(s)://HOST:PORT, got 'garbage'"),
        (
            ["--url", "http://127.0.0.1:1,ftp://head"],
            "berth agent: --url must be http(s)://HOST:PORT, got 'ftp://head'",
        ),
        (["--workdir", "/proc/berth-none"], "berth agent: --workdir /proc/berth-none: No such"),
    ],
)
def test_a_flag_that_would_stop_the_agent_is_refused_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], line: str
) -> None:
    argv = ["--url", "http://127.0.0.1:1", "--token", "t", "--name", "n1"]
    argv += ["--workdir", str(tmp_path / "work"), "--no-cgroups", *flags]
    status, err = refusal(argv, capsys)
    assert status == 2
    assert err.splitlines() == [err.strip()]  # (one line, no traceback)
    assert err.startswith(line), err


@pytest.mark.skipif(os.geteuid() != 0, reason="an agent maps jobs to accounts only as root")
@pytest.mark.parametrize(
    ("account", "problem"),
    [
        ("berth-no-such-user", "--run-as: user 'berth-no-such-user' has no local account on"),
        ("root", "--run-as: user 'root' maps to root here; jobs never run as root"),
        ("nobody", None),
    ],
)
def test_run_as_names_an_account_jobs_can_run_as(
    tmp_path: Path, account: str, problem: str | None
) -> None:
    """(Asked of the check itself: an agent that took a bad account would run on.)"""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    argv = ["--url", "http://127.0.0.1:1", "--workdir", str(tmp_path), "--run-as", account]
    found = setup_problem(parser.parse_args(argv), "t")
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert found.startswith(problem), found
