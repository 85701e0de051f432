"""Backfill selection FF / BL / BB: scores, picks, and schedules (Leinberger et al. 1999)."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.core.resources import ResourceSpace
from berth.core.selection import Selector, bb_score, fullness
from berth.emulate.run import emulate
from berth.emulate.traces import read_workload
from tests.support.builders import run, starts, trace_job

DATA = Path(__file__).resolve().parents[2] / "data"
SPACE = ResourceSpace({"cpus": 10, "mem": 10})


def test_bb_score_is_balance_times_fullness() -> None:
    # U = (0.6, 0.1); job (0.4, 0.1): U + R = (1.0, 0.2), max/avg = 1/0.6, fullness 0.4.
    assert bb_score([0.6, 0.1], [0.4, 0.1]) == pytest.approx(1.0 / 0.6 * 0.4)
    assert bb_score([0.6, 0.1], [0.1, 0.8]) == pytest.approx(0.9 / 0.8 * 0.2)
    assert fullness([0.6, 0.1], [0.1, 0.8]) == pytest.approx(0.2)


def test_pick_by_rule() -> None:
    free = SPACE.pack({"cpus": 4, "mem": 9})  # U = (0.6, 0.1)
    candidates = [SPACE.pack({"cpus": 4, "mem": 1}), SPACE.pack({"cpus": 1, "mem": 8})]
    assert Selector(SPACE, "ff").pick(free, candidates) == 0
    assert Selector(SPACE, "bb").pick(free, candidates) == 1
    # BL: the least used resource is mem; only the second job's largest share is mem.
    assert Selector(SPACE, "bl").pick(free, candidates) == 1
    # No candidate is largest in mem: BL falls back to first fit.
    cpu_heavy = [SPACE.pack({"cpus": 3, "mem": 1}), SPACE.pack({"cpus": 2, "mem": 1})]
    assert Selector(SPACE, "bl").pick(free, cpu_heavy) == 0
    with pytest.raises(ValueError, match=r"selection must be one of ff, bl, bb"):
        Selector(SPACE, "best")


BALANCE_CASE = [
    trace_job(1, 0, runtime=100, cpus=6, mem=1),  # runs until 100
    trace_job(2, 1, runtime=10, cpus=10, mem=10),  # head: shadow 100, no extra
    trace_job(3, 2, runtime=10, cpus=4, mem=1),  # C1: ends by the shadow
    trace_job(4, 2, runtime=10, cpus=1, mem=8),  # C2: ends by the shadow
]


@pytest.mark.parametrize(("selection", "first"), [("ff", 3), ("bl", 4), ("bb", 4)])
def test_easy_backfills_the_best_balanced_job(selection: str, first: int) -> None:
    # FF takes C1 (cpus to 0: C2 no longer fits); BL and BB take C2, which balances
    # cpus and memory, and then C1 no longer fits (3 cpus left).
    records = run(BALANCE_CASE, "easy", {"cpus": 10, "mem": 10}, selection=selection)
    assert starts(records)[first] == 2
    other = 7 - first
    start = starts(records)[other]
    assert start is not None
    assert start > 2
    assert records[first].reason.startswith(
        f"backfilled ({selection})" if selection != "ff" else "backfilled:"
    )


@pytest.mark.parametrize(
    ("selection", "expected"), [("ff", {3: 5, 4: 15}), ("bl", {4: 5, 3: 15}), ("bb", {4: 5, 3: 15})]
)
def test_conservative_moves_the_best_balanced_job_up_first(
    selection: str, expected: dict[int, int]
) -> None:
    # Jobs 1 and 2 fill the machine; job 2 is expected to run 100 s but ends at 5,
    # freeing (4 cpus, 9 mem) until 100. The head (everything) is reserved at 100, jobs 3
    # and 4 at 110. At 5 either 3 or 4 can move up, not both: FF moves the earlier
    # arrival, BL and BB the one that balances cpus and memory; compression then moves the
    # other up to 15, when the first ends.
    jobs = [
        trace_job(1, 0, runtime=100, cpus=6, mem=1),
        trace_job(2, 0, runtime=5, estimate=100, cpus=4, mem=9),
        trace_job(5, 1, runtime=10, cpus=10, mem=10),
        trace_job(3, 2, runtime=10, cpus=4, mem=1),
        trace_job(4, 2, runtime=10, cpus=1, mem=8),
    ]
    records = run(jobs, "conservative", {"cpus": 10, "mem": 10}, selection=selection)
    assert {i: records[i].guarantee for i in (3, 4)} == {3: 110, 4: 110}
    assert {i: records[i].start for i in (3, 4)} == expected


@pytest.mark.parametrize("selection", ["ff", "bl", "bb"])
def test_leinberger_figure_1_under_easy(selection: str) -> None:
    # With the FCFS prefix (jobs 0 and 1 start as heads), every rule fills epoch 0 with
    # jobs 4 and 5: the paper's FCFS/FF row of Figure 1 (b).
    (result,) = emulate(
        read_workload(DATA / "k2.jsonl"), "easy", policy_options={"selection": selection}
    )
    assert {r.id: r.start for r in result.records} == {0: 0, 1: 0, 4: 0, 5: 0, 2: 100, 3: 200}
