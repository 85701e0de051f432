"""``berth submit / queue / show / cancel`` against a daemon process."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from berth.runtime.main import main
from tests.integration.conftest import ALICE, OPERATOR, DaemonProcess
from tests.support.waiting import wait_until


def test_submit_queue_show_cancel(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    assert main(["submit", *auth, "-r", "cpus=32", "-t", "600", "-J", "whole"]) == 0
    assert main(["submit", *auth, "-r", "cpus=16,mem_gb=8", "-t", "60", "-J", "waits"]) == 0
    out = capsys.readouterr().out.splitlines()
    # (running already: when and where it started, and when its time limit ends it)
    started = (
        r"job 1 accepted \(RUNNING\); started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \((now|\d+s ago)\)"
    )
    ends = r"; ends by \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(in (9|10)m\) at the latest"
    assert re.fullmatch(started + r" on node\[001-004\]" + ends, out[0]), out[0]
    assert out[1].startswith("job 2 accepted (PENDING); guaranteed to start by ")

    assert main(["queue", *auth]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == [
        "JOBID",
        "NAME",
        "USER",
        "STATE",
        "START",
        "GUARANTEED",
        "RESOURCES",
    ]
    assert [row.split()[:4] for row in table[1:]] == [
        ["1", "whole", "alice", "RUNNING"],
        ["2", "waits", "alice", "PENDING"],
    ]
    start_col, guarantee_col = table[0].index("START"), table[0].index("GUARANTEED")
    predicted = table[2][start_col:guarantee_col].strip()
    guaranteed = table[2][guarantee_col : table[0].index("RESOURCES")].strip()
    assert predicted == guaranteed  # under conservative the prediction is the guarantee
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(in \d+m\)", predicted), predicted
    # (each waiting job's page says its predicted start, and the cluster's time: no plan)
    assert main(["queue", *auth, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert abs(listed["now"] - time.time()) < 60
    waiting = next(job for job in listed["jobs"] if job["job_id"] == 2)
    assert listed["predicted"] == {"2": waiting["guaranteed_start"]}

    assert main(["show", *auth, "2"]) == 0
    lines = {
        line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
        for line in capsys.readouterr().out.splitlines()
    }
    # Local time, "in 10m", not epoch seconds: the same time as the queue showed, and the
    # same minutes to go give or take the one a slow machine can pass between the two.
    shown_at, shown_in = lines["guaranteed_start"].split(" (")
    queued_at, queued_in = guaranteed.split(" (")
    assert shown_at == queued_at
    assert re.fullmatch(r"in \d+m\)", shown_in), shown_in
    assert abs(int(shown_in[3:-2]) - int(queued_in[3:-2])) <= 1
    assert lines["submit_time"].endswith("ago)") or lines["submit_time"].endswith("(now)")

    assert main(["show", *auth, "2", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["start"]["blocked_by"]["running_jobs_to_end"] == [1]

    assert main(["cancel", *auth, "1"]) == 0
    assert capsys.readouterr().out.strip() == "job 1 CANCELLED"


def test_queue_and_history_take_states_as_slurm_writes_them(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-t pd,R`` (squeue) and ``-s CA,pending`` (sacct): a list, in any case, with
    Slurm's short codes; ``-u`` for the user. An unknown state is refused before any
    request, naming the option and what it takes."""
    auth = ["--url", daemon.url, "--token", ALICE]
    for _ in range(3):  # one runs (the whole cluster), two wait
        assert main(["submit", *auth, "-r", "cpus=32", "-t", "600"]) == 0
    assert main(["cancel", *auth, "3"]) == 0
    capsys.readouterr()

    def listed(*words: str) -> list[tuple[str, str]]:
        assert main([*words, *auth]) == 0
        return [
            (row.split()[0], row.split()[3]) for row in capsys.readouterr().out.splitlines()[1:]
        ]

    assert listed("queue", "-t", "pd") == [("2", "PENDING")]
    assert sorted(listed("queue", "-t", "R,PD", "-u", "alice")) == [
        ("1", "RUNNING"),
        ("2", "PENDING"),
    ]
    assert listed("queue", "-t", "ca") == [("3", "CANCELLED")]
    assert main(["history", *auth, "-s", "CA,pending", "-u", "alice"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [(row.split()[0], row.split()[4]) for row in rows] == [
        ("3", "CANCELLED"),
        ("2", "PENDING"),
    ]
    with pytest.raises(SystemExit) as refused:
        main(["queue", *auth, "-t", "pending,bogus"])
    assert refused.value.code == 2
    assert (
        "argument --state/-t: unknown job state 'BOGUS': one of PENDING" in capsys.readouterr().err
    )


def test_cancel_takes_scancel_s_filters_instead_of_ids(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    """``berth cancel -n sweep``, ``-t pd``, ``-u alice``: every job not ended that the
    filters select, in one request; users only ever reach their own jobs."""
    auth = ["--url", daemon.url, "--token", ALICE]
    for name in ("whole", "keep", "sweep", "sweep"):  # the first runs, the rest wait
        assert main(["submit", *auth, "-r", "cpus=32", "-t", "600", "-J", name]) == 0
    capsys.readouterr()
    assert main(["cancel", *auth, "-n", "sweep"]) == 0
    assert capsys.readouterr().out == "2 job(s) cancelled: 3, 4\n"
    assert main(["cancel", *auth, "-t", "pd,ca"]) == 0  # (3 and 4 have ended already)
    assert capsys.readouterr().out == "1 job(s) cancelled: 2\n"
    assert main(["cancel", *auth, "-u", "bob"]) == 1  # (another user's)
    assert "users may list only their own jobs" in capsys.readouterr().err
    assert main(["cancel", *auth, "-u", "alice", "-t", "R"]) == 0
    assert capsys.readouterr().out == "1 job(s) cancelled: 1\n"
    assert main(["cancel", *auth, "-u", "alice"]) == 0
    assert capsys.readouterr().out == "no job selected: nothing cancelled\n"
    for words in ([], ["1", "-u", "alice"], ["--array", "-n", "sweep"]):
        assert main(["cancel", *auth, *words]) == 2
        assert (
            "give job ids, or filters (-u, --me, -t, -n, -A, -p) instead" in capsys.readouterr().err
        )
    assert main(["queue", *auth, "--all", "--json"]) == 0
    jobs = {job["job_id"]: job for job in json.loads(capsys.readouterr().out)["jobs"]}
    assert [jobs[job]["job_state"] for job in (1, 2, 3, 4)] == ["CANCELLED"] * 4
    assert jobs[3]["state_reason"] == "cancelled by alice (every job of name=sweep)"


def test_queue_shows_deadlines_when_a_job_has_one(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    assert main(["submit", *auth, "-r", "cpus=32", "-t", "600", "-J", "plain"]) == 0
    assert main(["queue", *auth]) == 0
    assert "DEADLINE" not in capsys.readouterr().out  # (no job has one: no column)
    flags = ["-r", "cpus=8", "-t", "600", "-J", "due", "--deadline", "now+3hours"]
    assert main(["submit", *auth, *flags]) == 0
    capsys.readouterr()
    assert main(["queue", *auth]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == [
        *("JOBID", "NAME", "USER", "STATE", "START", "GUARANTEED", "DEADLINE", "RESOURCES")
    ]
    column = slice(table[0].index("DEADLINE"), table[0].index("RESOURCES"))
    shown = {row.split()[1]: row[column].strip() for row in table[1:]}
    assert shown["plain"] == "-"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(in (2h59m|3h)\)", shown["due"])


def test_submit_test_only_answers_what_the_job_would_get_and_submits_nothing(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    assert main(["submit", *auth, "-r", "cpus=32", "-t", "600"]) == 0
    capsys.readouterr()
    assert main(["submit", *auth, "-r", "cpus=16", "-t", "60", "--test-only"]) == 0
    line = capsys.readouterr().out.strip()
    assert re.fullmatch(
        r"the job would be accepted: earliest placement on the nodes; "
        r"predicted to start (\S+ \S+); guaranteed to start by \1 \(nothing submitted\)",
        line,
    ), line
    too_soon = str(int(time.time()) + 120)  # the cluster is full for ten minutes
    argv = ["submit", *auth, "-r", "cpus=32", "-t", "60", "--deadline", too_soon]
    assert main([*argv, "--test-only"]) == 3
    assert capsys.readouterr().out.startswith("the job would be rejected: ")
    assert main([*argv, "--test-only", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["accepted"] is False
    with pytest.raises(SystemExit, match="--test-only asks about one job, not an array"):
        main(["submit", *auth, "-r", "cpus=1", "-t", "60", "--array", "0-3", "--test-only"])
    assert main(["queue", *auth]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2  # the header and job 1 only


def test_errors_are_one_clear_line(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    assert main(["submit", *auth, "-r", "cpus=999", "-t", "60"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "berth submit: requests 999 cpus but the cluster has only 32 (resources.cpus)"
    assert main(["show", "--url", daemon.url, "--token", "nope", "1"]) == 1
    assert "unknown bearer token" in capsys.readouterr().err
    assert main(["queue", "--url", "http://127.0.0.1:9", "--token", ALICE]) == 1
    assert "cannot reach" in capsys.readouterr().err


def test_submit_slots_on_nodes(daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    argv = ["submit", *auth, "-N", "2", "--slots", "4", "--per-slot", "cpus=2", "-t", "60"]
    assert main([*argv, "--json"]) == 0
    job = json.loads(capsys.readouterr().out)["job"]
    assert job["slots"]["count"] == 4
    assert job["slots"]["nodes"] == 2
    assert len(job["nodes"]) == 2  # four 2-cpu slots over exactly two nodes
    assert sum(held["cpus"] for held in job["nodes"].values()) == 8
    with pytest.raises(SystemExit, match="--slots and --per-slot go together"):
        main(["submit", *auth, "--slots", "4", "-t", "60"])
    with pytest.raises(SystemExit, match="--resources or --slots, not both"):
        main(["submit", *auth, "-r", "cpus=1", "--slots", "1", "--per-slot", "cpus=1", "-t", "6"])


def test_partition_commands(daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]) -> None:
    """An operator makes a gang partition; jobs go to it; the matrix is drawn."""
    admin = ["--url", daemon.url, "--token", OPERATOR]
    auth = ["--url", daemon.url, "--token", ALICE]
    create = ["partition", "create", "g", "--nodes", "node001,node002", "--scheme", "bc"]
    assert main([*create, "--slot-seconds", "1", *admin]) == 0
    assert capsys.readouterr().out.split()[:2] == ["g", "gang"]
    for _ in range(2):
        assert main(["submit", *auth, "-r", "cpus=16", "-t", "600", "-p", "g"]) == 0
    capsys.readouterr()
    assert main(["partition", "list", *auth]) == 0
    table = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in table[1:]] == [["default", "conservative"], ["g", "gang"]]

    def drawn() -> list[str]:
        assert main(["partition", "matrix", "g", *auth]) == 0
        return capsys.readouterr().out.splitlines()

    # Both join at the next one-second boundary: two rows, one job each, taking turns.
    lines = wait_until(lambda: (d := drawn()) and "2 row(s)" in d[0] and d, 10, "two rows")
    assert lines[0].startswith("gang partition g: bc, 1-s slots, 2 row(s)")
    assert sorted(line[2:] for line in lines[1:3]) == ["row 0   1 [0-15]", "row 1   2 [0-15]"]
    assert sum(line.startswith(">") for line in lines[1:3]) == 1
    assert lines[3] == "  processors: node001 [0-7], node002 [8-15]"
    assert main(["partition", "delete", "g", *admin]) == 1  # it has jobs
    assert "still has 2 job(s)" in capsys.readouterr().err
    assert main(["partition", "drain", "g", *admin]) == 0
    assert "gang (drained)" in capsys.readouterr().out
    assert main(["submit", *auth, "-r", "cpus=1", "-t", "60", "-p", "g"]) == 1
    assert "drained" in capsys.readouterr().err


def test_a_backfilling_partition_from_the_cli(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    admin = ["--url", daemon.url, "--token", OPERATOR]
    auth = ["--url", daemon.url, "--token", ALICE]
    create = ["partition", "create", "b", "--nodes", "node003,node004", "--policy", "easy"]
    assert main([*create, "--option", "selection=bl", *admin]) == 0
    assert capsys.readouterr().out.split()[:2] == ["b", "easy"]
    assert main(["submit", *auth, "-r", "cpus=16", "-t", "60", "-p", "b", "--json"]) == 0
    job = json.loads(capsys.readouterr().out)["job"]
    assert sorted(job["nodes"]) == ["node003", "node004"]
    assert main(["partition", "set", "b", "--policy", "conservative", *admin]) == 0
    assert capsys.readouterr().out.split()[:2] == ["b", "conservative"]
    assert main(["partition", "set", "b", "--option", "nope=1", *admin]) == 1
    assert "does not take 'nope'" in capsys.readouterr().err
    # A malformed option is a usage error (exit 2), found before anything is sent.
    for command in (create[:3], ["partition", "set", "b"]):
        with pytest.raises(SystemExit) as usage:
            main([*command, "--option", "selection", *admin])
        assert usage.value.code == 2
        assert "argument --option: expected NAME=VALUE, got 'selection'" in capsys.readouterr().err


def test_queue_history_and_cancel_take_a_partition_as_squeue_does(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-p side`` (or ``-p default``) on queue, history and cancel; a partition there
    is not is named with those there are."""
    admin = ["--url", daemon.url, "--token", OPERATOR]
    auth = ["--url", daemon.url, "--token", ALICE]
    assert (
        main(["partition", "create", "side", "--nodes", "node004", "--policy", "easy", *admin]) == 0
    )
    for partition in ("side", "side", "default"):  # (node004's 8 cpus: the second waits)
        assert main(["submit", *auth, "-r", "cpus=8", "-t", "600", "-p", partition]) == 0
    capsys.readouterr()

    def listed(*words: str) -> list[str]:
        assert main([*words, *auth]) == 0
        return sorted(row.split()[0] for row in capsys.readouterr().out.splitlines()[1:])

    assert listed("queue", "-p", "side") == ["1", "2"]
    assert listed("queue", "-p", "default") == ["3"]
    assert main(["queue", *auth, "-p", "nope"]) == 1
    assert "no partition 'nope' (known: default, side)" in capsys.readouterr().err
    assert main(["cancel", *auth, "-p", "side", "-t", "pd"]) == 0
    assert capsys.readouterr().out == "1 job(s) cancelled: 2\n"
    assert listed("history", "-p", "side") == ["1", "2"]
    assert listed("history", "-p", "default") == ["3"]


def test_history_lists_finished_jobs(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    for name in ("first", "second"):
        charged = ["-A", "physics"] if name == "second" else []
        assert main(["submit", *auth, "-r", "cpus=1", "-t", "600", "-J", name, *charged]) == 0
    assert main(["cancel", *auth, "1"]) == 0
    capsys.readouterr()
    assert main(["history", *auth]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:5] == ["JOBID", "NAME", "USER", "ACCOUNT", "STATE"]
    assert [row.split()[:5] for row in table[1:]] == [
        ["2", "second", "alice", "physics", "RUNNING"],
        ["1", "first", "alice", "alice", "CANCELLED"],
    ]
    assert main(["history", *auth, "--state", "CANCELLED", "--json"]) == 0
    assert [j["job_id"] for j in json.loads(capsys.readouterr().out)] == [1]
    assert main(["history", *auth, "--account", "physics", "--json"]) == 0
    assert [j["job_id"] for j in json.loads(capsys.readouterr().out)] == [2]
    assert main(["queue", *auth, "-A", "physics", "--json"]) == 0
    assert [j["job_id"] for j in json.loads(capsys.readouterr().out)["jobs"]] == [2]


def test_cancel_takes_several_jobs_and_says_which_it_could_not(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    for _ in range(3):
        assert main(["submit", *auth, "-r", "cpus=1", "-t", "600"]) == 0
    capsys.readouterr()
    assert main(["cancel", *auth, "1", "99", "3"]) == 1  # scancel 1 99 3
    out, err = capsys.readouterr()
    assert out.splitlines() == ["job 1 CANCELLED", "job 3 CANCELLED"]
    assert err.strip() == "berth cancel: 99: no job 99"
    assert main(["cancel", *auth, "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["job_state"] == "CANCELLED"


def test_usage_prints_hours_per_user(
    daemon: DaemonProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = ["--url", daemon.url, "--token", ALICE]
    assert main(["submit", *auth, "-r", "cpus=1", "-t", "600"]) == 0
    assert main(["cancel", *auth, "1"]) == 0
    capsys.readouterr()
    assert main(["usage", *auth, "--days", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("usage from ")
    assert lines[1].split() == ["USER", "JOBS", "CPUS-HOURS", "USED-CPU-H", "CPU-EFF"]
    assert lines[2].split()[:2] == ["alice", "1"]
    assert lines[2].split()[-2:] == ["-", "-"]  # emulated nodes measure nothing
    assert main(["submit", *auth, "-r", "cpus=2", "-t", "600", "--account", "physics"]) == 0
    assert main(["cancel", *auth, "2"]) == 0
    capsys.readouterr()
    assert main(["usage", *auth, "--days", "1", "--by", "account"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["ACCOUNT", "JOBS", "CPUS-HOURS", "USED-CPU-H", "CPU-EFF"]
    assert [line.split()[:2] for line in lines[2:]] == [["alice", "1"], ["physics", "1"]]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--policy", "nope"], "berth serve: unknown policy 'nope'; known: fcfs, easy"),
        (["--nodes", "3y"], "berth serve: --nodes (BERTH_NODES, TOML nodes): node group '3y'"),
        (
            ["--tokens", "abc"],
            "berth serve: --tokens (BERTH_TOKENS, TOML tokens): token entries are "
            "TOKEN:USER[:ROLE], got 'abc'",
        ),
        (["--port", "99999"], "berth serve: --port (BERTH_PORT, TOML port): must be <= 65535"),
        # With agents the cluster starts with no node: the policy is checked all the same.
        (["--agents", "--policy", "qopz"], "berth serve: unknown policy 'qopz'; known: fcfs"),
        (
            ["--agents", "--policy", "qops", "--config", "options.toml"],
            "berth serve: policy 'qops' does not take 'k_factr' (it takes heuristic",
        ),
        (
            ["--agents", "--policy", "qops", "--policy-option", "k_factr=3"],
            "berth serve: policy 'qops' does not take 'k_factr' (it takes heuristic",
        ),
        (
            ["--policy", "easy", "--policy-option", "selection=bx"],
            "berth serve: selection must be one of ff, bl, bb, got 'bx'",
        ),
        (  # (one line, not one per type a union of types tried)
            ["--config", "list.toml"],
            "berth serve: selection must be one of ff, bl, bb, got ['a']",
        ),
        (
            ["--database-url", "garbage"],
            "berth serve: --database-url (BERTH_DATABASE_URL, TOML database_url): cannot read "
            "'garbage' as a database URL; expected sqlite:///PATH or postgresql://USER@HOST/DB",
        ),
        (  # (nothing listens on port 1 of the loopback; the password is not shown)
            ["--database-url", "postgresql://bob:s3cret@127.0.0.1:1/berth"],
            "berth serve: cannot use the database postgresql://bob:***@127.0.0.1:1/berth: ",
        ),
        (
            ["--port", "{taken}"],
            "berth serve: --host (BERTH_HOST, TOML host) and --port (BERTH_PORT, TOML port): "
            "cannot listen on 127.0.0.1:{taken}: Address already in use",
        ),
        (  # (".invalid" never resolves: RFC 2606)
            ["--host", "no-such-host.invalid"],
            "berth serve: --host (BERTH_HOST, TOML host): cannot find the address "
            "'no-such-host.invalid': ",
        ),
    ],
)
def test_serve_refuses_bad_configuration_in_one_line_with_status_2(
    tmp_path: Path, args: list[str], line: str
) -> None:
    import socket
    import subprocess
    import sys

    (tmp_path / "options.toml").write_text("[policy_options]\nk_factr = 3\n")
    (tmp_path / "list.toml").write_text("[policy_options]\nselection = ['a']\n")
    command = [sys.executable, "-m", "berth.runtime.main", "serve", "--data-dir", str(tmp_path)]
    command += ["--port", "0"]  # (any free port: the address is tried first)
    with socket.socket() as taken:  # (a port another program listens on)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        args, line = [a.replace("{taken}", port) for a in args], line.replace("{taken}", port)
        done = subprocess.run(
            [*command, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()]  # one line, no traceback
    assert done.stderr.startswith(line), done.stderr
