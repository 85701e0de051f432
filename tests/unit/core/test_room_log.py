"""The room log's suffix answers against a direct scan, on random logs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from berth.core.profile import NEVER
from berth.core.room_log import WINDOWS_KEPT, RoomLog, RoomLogs


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


def test_room_logs_keep_one_log_per_set_and_start_a_long_one_again() -> None:
    logs = RoomLogs(limit=3)
    gpus, everything = logs.of("gpu nodes"), logs.of("all nodes")
    assert logs.of("gpu nodes") is gpus
    # Room on nodes of both sets goes in both logs; a set nobody asked for has none.
    assert logs.append(["all nodes", "gpu nodes", "cpu nodes"], 5, 9) == []
    assert logs.append(["all nodes"], 2, 4) == []
    assert (gpus.size, everything.size) == (1, 2)
    assert gpus.since(0) == (5, 9)
    assert everything.since(0) == (2, 9)
    assert logs.append(["all nodes"], 7, 8) == []
    # The fourth entry would pass the limit: the log starts again with it alone.
    assert logs.append(["all nodes", "gpu nodes"], 1, 3) == [everything]
    assert everything.size == 1
    assert everything.since(0) == (1, 3)
    assert gpus.size == 2
    logs.clear()
    assert logs.of("gpu nodes") is not gpus


def test_a_short_suffix_is_read_window_by_window_with_its_nodes() -> None:
    log = RoomLog()
    log.append(5, 9, (0, 2))
    log.append(7, 8)
    log.append(1, 3, (4,))
    assert log.windows_since(1) == [(7, 8, ()), (1, 3, (4,))]
    assert log.windows_since(3) == []
    log.clear()
    assert log.windows_since(0) == []


def test_only_the_newest_windows_are_kept_to_be_read() -> None:
    log = RoomLog()
    size = WINDOWS_KEPT * 3 + 1
    for at in range(size):
        log.append(at, at + 1, (at,))
    newest = [(at, at + 1, (at,)) for at in range(size - WINDOWS_KEPT, size)]
    assert log.windows_since(size - WINDOWS_KEPT) == newest
    assert log.windows_since(size - 2) == newest[-2:]
    assert log.windows_since(size - WINDOWS_KEPT - 1) is None
    assert log.since(0) == (0, size)  # the summary still covers every entry
