"""Hypothesis: EASY's front of failures answers as a walk over every failure would.

:class:`~berth.core.policies.failure_front.FailureFront` answers "does a failure ask
for no more slots and no longer than this job?" with one bisect over the minimal
failures. Here every failure is also kept in a plain list, and after any sequence of
questions (a failure recorded whenever the front did not cover it, as the pass does)
both answer every question alike, and the front stays minimal and sorted.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from berth.core.policies.failure_front import FailureFront

pairs = st.tuples(st.integers(1, 8), st.integers(1, 8))  # small: pairs meet often


@given(
    asked=st.lists(st.tuples(pairs, st.booleans()), max_size=60),
    probes=st.lists(pairs, max_size=30),
)
def test_the_front_covers_exactly_what_some_failure_covers(
    asked: list[tuple[tuple[int, int], bool]], probes: list[tuple[int, int]]
) -> None:
    front = FailureFront()
    failures: list[tuple[int, int]] = []

    def covered(count: int, estimate: int) -> bool:
        return any(c <= count and e <= estimate for c, e in failures)

    for (count, estimate), fails in asked:
        assert front.covers(count, estimate) == covered(count, estimate)
        if fails and not covered(count, estimate):
            front.add(count, estimate)
            failures.append((count, estimate))
    for count, estimate in probes:
        assert front.covers(count, estimate) == covered(count, estimate)
    kept = list(zip(front.counts, front.estimates, strict=True))
    assert kept == sorted(kept)
    assert len(set(front.counts)) == len(kept)
    assert front.estimates == sorted(front.estimates, reverse=True)
    assert len(set(front.estimates)) == len(kept)  # so none covers another: minimal
    assert set(kept) <= set(failures)
