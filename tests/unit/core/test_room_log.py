"""The room log's suffix answers against a direct scan, on random logs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from berth.core.profile import NEVER
from berth.core.room_log import LOG_LIMIT, WINDOWS_KEPT, RoomLog, RoomLogs


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


def _log_state(log: RoomLog) -> tuple[object, ...]:
    return (log.size, log.last, log._lows, log._low_at, log._highs, log._high_at, log._windows)


#: Windows as a commit logs them: room on nodes (a dict's keys, made a tuple when kept).
logged_windows = st.lists(
    st.tuples(
        st.integers(0, 50),
        st.integers(0, 50),
        st.dictionaries(st.integers(0, 5), st.integers(1, 3), max_size=3),
    ),
    max_size=3 * WINDOWS_KEPT,
)


@given(
    batches=st.lists(st.tuples(st.booleans(), logged_windows), max_size=5),
    limit=st.one_of(st.integers(1, 2 * WINDOWS_KEPT + 5), st.just(LOG_LIMIT)),
)
def test_logging_many_at_once_is_appending_them_in_turn(
    batches: list[tuple[bool, list[tuple[int, int, dict[int, int]]]]], limit: int
) -> None:
    """RoomLogs.extend (a commit's hundreds of windows) gives every log the state, and
    reports the restarts, that appending each window in turn gives."""
    at_once, in_turn = RoomLogs(limit), RoomLogs(limit)
    for logs in (at_once, in_turn):
        logs.of("all nodes")
    for missing, windows in batches:
        key = "no log" if missing else "all nodes"
        restarted = at_once.extend(key, windows)
        expected = [
            log
            for since, until, held in windows
            for log in in_turn.append([key], since, until, tuple(held))
        ]
        assert len(restarted) == len(expected)
        assert _log_state(at_once.of("all nodes")) == _log_state(in_turn.of("all nodes"))


def test_logging_many_at_once_keeps_the_windows_appending_keeps() -> None:
    """However many windows, and however split into batches: the same newest ones kept."""
    for count in range(6 * WINDOWS_KEPT):
        windows = [(at, at + 1, (at,)) for at in range(count)]
        in_turn = RoomLog()
        for since, until, nodes in windows:
            in_turn.append(since, until, nodes)
        for split in (0, 1, WINDOWS_KEPT - 1, 2 * WINDOWS_KEPT + 1):
            at_once = RoomLog()
            at_once.extend(windows[:split])
            at_once.extend(windows[split:])
            assert _log_state(at_once) == _log_state(in_turn), (count, split)
