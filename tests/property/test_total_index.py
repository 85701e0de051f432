"""Hypothesis: EASY's index of waiting jobs by total loses no job that may fit."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.policies.total_index import TotalIndex
from berth.core.resources import ResourceSpace, fits

SPACE = ResourceSpace({"cpus": 8, "mem": 8, "gpus": 2})


@dataclass(eq=False)
class Job:
    total: int


amounts = st.fixed_dictionaries(
    {"cpus": st.integers(0, 8), "mem": st.integers(0, 8), "gpus": st.integers(0, 2)}
)


@settings(max_examples=300, deadline=None)
@given(
    totals=st.lists(amounts, max_size=30),
    leave=st.lists(st.integers(0, 29), max_size=10),
    free=amounts,
)
def test_every_job_that_fits_is_in_the_prefix_in_any_order_of_arrivals_and_leavings(
    totals: list[dict[str, int]], leave: list[int], free: dict[str, int]
) -> None:
    """A total that fits field by field in what is free is no greater as an integer:
    the prefix holds every waiting job that fits, and no job that left."""
    index: TotalIndex[Job] = TotalIndex()
    jobs = [Job(SPACE.pack(t)) for t in totals]
    for arrival, job in enumerate(jobs, 1):
        index.add(job, arrival)
    waiting = dict(enumerate(jobs, 1))
    for number in leave:
        if number + 1 in waiting:
            index.remove(waiting.pop(number + 1), number + 1)
    assert len(index) == len(waiting)
    packed = SPACE.pack(free)
    rows = index.at_most(packed, len(waiting))
    assert rows is not None
    prefix = {arrival: job for _, arrival, job in rows}
    if rows:
        assert index.at_most(packed, len(rows) - 1) is None  # longer than asked: none
    for arrival, job in waiting.items():
        if fits(packed, job.total, SPACE.guard):
            assert prefix.get(arrival) is job
    assert set(prefix) <= set(waiting)
