"""Slurm's options that scripts lean on, against a daemon process: ``--parsable`` (the id
alone), ``--me`` (the token's own user), ``--begin`` (start no earlier), ``--hold`` with
``scontrol hold`` / ``release`` by the job's user."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from berth.runtime.main import main
from tests.integration.conftest import ALICE, OPERATOR, DaemonProcess


def test_submit_parsable_prints_the_id_alone_as_sbatch_does(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    assert main(["submit", *auth, "-r", "cpus=32", "-t", "600", "--parsable"]) == 0
    assert capsys.readouterr().out == "1\n"
    assert main(["submit", *auth, "-r", "cpus=1", "-t", "60", "-a", "0-2", "--parsable"]) == 0
    assert capsys.readouterr().out == "2\n"  # the array's id (tasks 2-4)
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --parsable\n#SBATCH -t 1\ntrue\n")
    assert main(["submit", *auth, "-r", "cpus=1", str(script)]) == 0
    assert capsys.readouterr().out == "5\n"  # asked for in the script, as sbatch takes it
    too_soon = str(int(time.time()) + 120)  # the cluster is full for ten minutes
    argv = ["submit", *auth, "-r", "cpus=32", "-t", "60", "--deadline", too_soon, "--parsable"]
    assert main(argv) == 3
    rejected = capsys.readouterr()
    assert rejected.out == ""
    assert rejected.err.startswith("job 6 rejected: ")
    with pytest.raises(SystemExit, match="--parsable prints the id of a job submitted"):
        main([*argv, "--test-only"])
    capsys.readouterr()
    assert main(["cancel", *auth, "--array", "2", "99"]) == 1  # (the array, then no such one)
    said = capsys.readouterr()
    assert said.out == "array 2: 3 task(s) cancelled\n"
    assert said.err == "berth cancel: 99: no job 99\n"


def test_me_is_the_token_s_own_user_as_squeue_and_scancel_take_it(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    """An operator sees every user's jobs; ``--me`` narrows a listing or a cancel to the
    token's own user."""
    operator = ["--url", daemon.url, "--token", OPERATOR]
    for token in (ALICE, OPERATOR, ALICE):
        argv = ["submit", "--url", daemon.url, "--token", token, "-r", "cpus=32", "-t", "600"]
        assert main(argv) == 0
    capsys.readouterr()
    assert main(["queue", *operator, "--me"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [row.split()[:3] for row in rows] == [["2", "job", "admin"]]
    with pytest.raises(SystemExit, match="berth queue: give --user or --me, not both"):
        main(["queue", *operator, "--me", "-u", "alice"])
    assert main(["cancel", *operator, "--me"]) == 0
    assert capsys.readouterr().out == "1 job(s) cancelled: 2\n"
    assert main(["queue", *operator, "-t", "pd,r"]) == 0
    assert sorted(row.split()[0] for row in capsys.readouterr().out.splitlines()[1:]) == ["1", "3"]


def test_begin_holds_the_start_back_as_sbatch_begin_does(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    # The cluster is idle: only the begin time holds the job back.
    assert main(["submit", *auth, "-r", "cpus=1", "-t", "60", "--begin", "now+1hour"]) == 0
    line = capsys.readouterr().out
    assert re.fullmatch(
        r"job 1 accepted \(PENDING\); guaranteed to start by \S+ \S+ \(in (59m|1h)\)\n",
        line,
    ), line
    script = tmp_path / "later.sh"
    script.write_text("#!/bin/bash\n#SBATCH --begin=now+2hours\n#SBATCH -t 1\ntrue\n")
    assert main(["submit", *auth, "-r", "cpus=1", str(script)]) == 0
    assert re.search(r"guaranteed to start by \S+ \S+ \(in (1h59m|2h)\)", capsys.readouterr().out)
    assert main(["show", *auth, "2", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["job"]
    assert abs(shown["begin_time"] - (time.time() + 7200)) < 60
    assert shown["guaranteed_start"] >= shown["begin_time"]
    assert main(["show", *auth, "2"]) == 0
    assert re.search(r"begin_time: \S+ \S+ \(in (1h59m|2h)\)", capsys.readouterr().out)
    with pytest.raises(SystemExit):
        main(["submit", *auth, "-r", "cpus=1", "-t", "60", "--begin", "yesterday-ish"])
    assert "--begin 'yesterday-ish'" in capsys.readouterr().err


def test_a_user_submits_held_holds_and_releases_as_with_sbatch_and_scontrol(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    assert main(["submit", *auth, "-r", "cpus=32", "-t", "600", "--parsable"]) == 0  # (full)
    capsys.readouterr()
    assert main(["submit", *auth, "-r", "cpus=1", "-t", "60", "--hold"]) == 0
    assert capsys.readouterr().out == (
        "job 2 accepted (HELD); held at submission: waits until released (berth release)\n"
    )
    script = tmp_path / "held.sh"
    script.write_text("#!/bin/bash\n#SBATCH -H\n#SBATCH -t 1\ntrue\n")
    assert main(["submit", *auth, "-r", "cpus=1", str(script)]) == 0
    assert "job 3 accepted (HELD)" in capsys.readouterr().out
    assert main(["release", *auth, "2", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("job 2 PENDING")
    assert main(["hold", *auth, "2", "--reason", "not yet"]) == 0
    assert capsys.readouterr().out == "job 2 HELD (not yet)\n"
    operator = ["--url", daemon.url, "--token", OPERATOR]
    assert main(["hold", *operator, "3"]) == 0
    capsys.readouterr()
    assert main(["release", *auth, "2", "3", "99"]) == 1  # (3: the operator's hold)
    said = capsys.readouterr()
    assert said.out.startswith("job 2 PENDING")
    assert said.err.splitlines() == [
        "berth release: 3: job 3 is held (held by admin): only an operator or its account's "
        "coordinator can release it",
        "berth release: 99: no job 99",
    ]
