"""Node names written as Slurm's hostlists, and a job's start as its submitter reads it."""

from __future__ import annotations

import pytest

from berth_client.cli_support import hostlist, start_words


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
