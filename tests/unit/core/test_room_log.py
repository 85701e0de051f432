"""The room log's suffix answers against a direct scan, on random logs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from berth.core.room_log import NEVER, RoomLog


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)), max_size=40))
def test_every_suffix_answers_as_a_scan_does(windows: list[tuple[int, int]]) -> None:
    log = RoomLog()
    for since, until in windows:
        log.append(since, until)
    assert log.size == len(windows)
    for position in range(len(windows) + 2):
        rest = windows[position:]
        expected = (
            min((s for s, _ in rest), default=NEVER),
            max((u for _, u in rest), default=-NEVER),
        )
        assert log.since(position) == expected
    if windows:
        assert log.last == log.since(len(windows) - 1) == windows[-1]


def test_clear_starts_counting_again() -> None:
    log = RoomLog()
    log.append(5, 9)
    log.clear()
    assert log.size == 0
    assert log.since(0) == (NEVER, -NEVER)
    log.append(7, 8)
    assert log.since(0) == (7, 8)
