"""``berth admin nodes / drain / resume / down / hold / release / priority`` against a
QoPS daemon process: several nodes (Slurm hostlists) changed in one request or refused
as a whole with why; each job changed or named with why not; exit status 1 then."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.runtime.main import main
from tests.integration.conftest import ALICE, OPERATOR, DaemonProcess


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    process = DaemonProcess(tmp_path, "--policy", "qops")  # (4 nodes of 8 cpus)
    yield process
    process.stop()


def test_operators_change_nodes_and_jobs_from_the_cli(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    user, operator = (
        ["--url", daemon.url, "--token", ALICE],
        ["--url", daemon.url, "--token", OPERATOR],
    )
    assert main(["submit", *user, "-r", "cpus=32", "-t", "600", "-J", "first"]) == 0
    flags = ["-r", "cpus=32", "-t", "600", "-J", "due", "--deadline", "now+3hours"]
    assert main(["submit", *user, *flags]) == 0  # (job 2: every node, after job 1)
    capsys.readouterr()

    assert main(["admin", "nodes", *operator]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["NODE", "STATE", "RESOURCES", "USED", "REASON"]
    assert [row.split()[:4] for row in table[1:]] == [
        [f"node00{i}", "up", "cpus=8,mem_gb=32", "cpus=8"] for i in range(1, 5)
    ]

    # Draining any node leaves job 2 no start: refused, naming the job and its deadline.
    assert main(["admin", "drain", "node002", "--reason", "disk", *operator]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("berth admin drain node002: taking node 'node002' out")
    assert "job 2 (guaranteed start" in captured.err
    assert "to end by its deadline" in captured.err

    # Several nodes go in one request, refused as a whole: an unknown one is named.
    drain = ["admin", "drain", "node002", "nosuch", "--reason", "disk", "--force", *operator]
    assert main(drain) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "berth admin drain node002,nosuch: no node 'nosuch' (name)\n"
    # --force drains it.
    assert main(drain[:3] + drain[4:]) == 0
    assert capsys.readouterr().out == "node node002 drained (disk)\n"
    assert main(["admin", "nodes", *operator]) == 0
    assert capsys.readouterr().out.splitlines()[2].split() == [
        *("node002", "drained", "cpus=8,mem_gb=32", "cpus=8", "disk")
    ]
    assert main(["admin", "nodes", "--state", "drained", *operator]) == 0
    assert [row.split()[0] for row in capsys.readouterr().out.splitlines()[1:]] == ["node002"]
    # Slurm's hostlists name several nodes (each once), changed in one request and
    # refused as a whole: node001 is up.
    assert main(["admin", "resume", "node[001-002],node002", *operator]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "berth admin resume node[001-002]: node 'node001' is already up (names)\n"
    )
    assert main(["admin", "resume", "node002", *operator]) == 0
    assert capsys.readouterr().out == "node node002 up\n"
    # (--json: the nodes as changed, one document)
    assert main(["admin", "drain", "node[003-004]", "--force", "--json", *operator]) == 0
    changed = json.loads(capsys.readouterr().out)
    assert [(n["name"], n["state"]) for n in changed] == [
        ("node003", "drained"),
        ("node004", "drained"),
    ]
    assert main(["admin", "resume", "node[003-004]", *operator]) == 0
    assert capsys.readouterr().out == "node node003 up\nnode node004 up\n"

    # Jobs: a hold, a release (job 1 runs: named), a political priority.
    assert main(["admin", "hold", "2", "--reason", "asked", *operator]) == 0
    assert capsys.readouterr().out == "job 2 HELD\n"
    assert main(["admin", "release", "2", "1", *operator]) == 1
    captured = capsys.readouterr()
    assert captured.out == "job 2 PENDING\n"
    assert captured.err.startswith("berth admin release 1: only a held job can be released")
    assert main(["admin", "priority", "2", "0.5", *operator]) == 0
    assert capsys.readouterr().out == "job 2 political priority 0.5\n"
    with pytest.raises(SystemExit) as refused:
        main(["admin", "priority", "2", "5", *operator])
    assert refused.value.code == 2
    assert "expected a number from 0 to 1, got '5'" in capsys.readouterr().err

    # A release admits the job again; with a node drained its deadline cannot be met.
    assert main(["admin", "hold", "2", *operator]) == 0
    assert main(["admin", "drain", "node004", *operator]) == 0  # (breaks nothing held)
    capsys.readouterr()
    assert main(["admin", "release", "2", *operator]) == 0
    assert capsys.readouterr().out.startswith("job 2 REJECTED: ")

    # Only operators.
    assert main(["admin", "down", "node003", *user]) == 1
    assert "is not an operator" in capsys.readouterr().err
