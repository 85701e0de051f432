"""Node names written as Slurm's hostlists and read back, and a job's start as its submitter
reads it."""

from __future__ import annotations

import argparse
import re

import pytest

from berth_client.cli_support import start_words
from berth_client.hostlists import expand_hostlist, hostlist


@pytest.mark.parametrize(
    ("names", "written"),
    [
        ([f"node{i:03d}" for i in range(1, 14)], "node[001-013]"),
        (
            ["node001", "node003", "node004", "gpu1", "gpu2", "login"],
            "node001,node[003-004],gpu[1-2],login",
        ),
        (["n9", "n10", "n11"], "n[9-11]"),  # (no padding: widths may grow)
        (["node098", "node099", "node100"], "node[098-100]"),
        (["n9", "n010"], "n9,n010"),  # (a padded number is not the unpadded run's)
        (["local2", "local1"], "local2,local1"),  # (in the order given)
        (["a1", "b2"], "a1,b2"),
        ([], ""),
    ],
)
def test_hostlists_fold_runs_of_numbered_nodes(names: list[str], written: str) -> None:
    assert hostlist(names) == written
    if names and written != "n9,n010":  # (read back: the same names, but for 9 and 010)
        assert expand_hostlist(written) == names


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("node[0001-0003]", ["node0001", "node0002", "node0003"]),
        ("node[1-2,7],login", ["node1", "node2", "node7", "login"]),
        ("r[1-2]n[08-09]", ["r1n08", "r1n09", "r2n08", "r2n09"]),
        (" node001 , node002 ", ["node001", "node002"]),
        ("n[098-101]", ["n098", "n099", "n100", "n101"]),
        ("gpu[3]", ["gpu3"]),
    ],
)
def test_hostlists_expand_as_slurm_reads_them(text: str, names: list[str]) -> None:
    assert expand_hostlist(text) == names


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("node[1-3", "'[' without its ']'"),
        ("node1-3]", "']' without its '['"),
        ("node[[1]]", "brackets inside brackets"),
        ("node[3-1]", "range '3-1' runs backwards"),
        ("node[a-b]", "expected numbers or LOW-HIGH ranges in brackets, got 'a-b'"),
        ("node[1-]", "got '1-'"),
        ("n[1-99999999]", "names more than 100,000 nodes"),
        ("a[1-1000]b[1-1000]", "names more than 100,000 nodes"),
        (",", "names no node"),
        ("n[²]", "got '²'"),
        ("n[1-60000,1-60000]", "names more than 100,000 nodes"),
    ],
)
def test_a_malformed_hostlist_is_refused_saying_why(text: str, complaint: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(complaint)):
        expand_hostlist(text)


def test_start_words_say_where_a_running_job_started_else_its_guarantee() -> None:
    running = {"job_state": "RUNNING", "start_time": 100, "nodes": {"node001": {}, "node002": {}},
               "guaranteed_start": 90}  # fmt: skip
    assert start_words(running, 100).startswith("started ")
    assert start_words(running, 100).endswith("(now) on node[001-002]")
    pending = {"job_state": "PENDING", "start_time": None, "guaranteed_start": 160}
    assert start_words(pending, 100).startswith("guaranteed start ")
    assert start_words(pending, 100).endswith("(in 1m)")
    rejected = {"job_state": "REJECTED", "start_time": None, "guaranteed_start": None}
    assert start_words(rejected, 100) == "no guaranteed start"
