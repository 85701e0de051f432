"""Moments as Slurm's --deadline writes them, read against a fixed local clock."""

from __future__ import annotations

import datetime
import re
import time

import pytest

from berth_client.moments import moment

NOW = datetime.datetime(2026, 12, 7, 5, 0, 30).astimezone()


def at(day: int, hour: int, minute: int = 0, second: int = 0, month: int = 12) -> datetime.datetime:
    return NOW.replace(month=month, day=day, hour=hour, minute=minute, second=second)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        ("now+2hours", at(7, 7, 0, 30)),
        ("NOW + 90min", at(7, 6, 30, 30)),
        ("now+1d", at(8, 5, 0, 30)),
        ("now+2", at(7, 5, 0, 32)),  # (seconds by default)
        ("now-30", at(7, 5, 0, 0)),
        ("now+1week", at(14, 5, 0, 30)),
        ("today", at(7, 0)),
        ("tomorrow", at(8, 0)),
        ("noon", at(7, 12)),
        ("teatime", at(7, 16)),
        ("midnight", at(8, 0)),  # (its next occurrence)
        ("18:30", at(7, 18, 30)),
        ("04:00", at(8, 4)),  # (passed today: tomorrow)
        ("6:30 PM", at(7, 18, 30)),
        ("12:15am", at(8, 0, 15)),
        ("12/25", at(25, 0)),
        ("1.2.27", NOW.replace(year=2027, month=1, day=2, hour=0, minute=0, second=0)),
        ("2026-12-08T10:00", at(8, 10)),
    ],
)
def test_slurms_ways_to_write_a_moment(text: str, expected: datetime.datetime) -> None:
    assert moment(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("now+3fortnights", "unknown unit 'fortnights' (seconds, minutes, hours, days, weeks)"),
        ("25:00", "'25:00': no such time of day"),
        ("13/45", "'13/45': no such date"),
        ("1225", "expected YYYY-MM-DD[THH:MM[:SS]], now+COUNT[UNIT]"),  # (bare: seconds)
        ("soon", "'soon': expected YYYY-MM-DD"),
    ],
)
def test_what_is_no_moment_is_refused_naming_the_formats(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        moment(text, NOW)


def test_a_time_of_day_is_on_the_wall_clock_across_a_change_of_summer_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The evening before Berlin's clocks go back: tomorrow's 09:00 is 09:00 in winter
    time (a fixed offset read from now would give 08:00), and now+1d is 24 hours."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        evening = datetime.datetime(2026, 10, 24, 20, 0).astimezone()
        assert evening.utcoffset() == datetime.timedelta(hours=2)
        nine = moment("09:00", evening)
        assert (nine.day, nine.hour, nine.utcoffset()) == (25, 9, datetime.timedelta(hours=1))
        assert moment("now+1d", evening) - evening == datetime.timedelta(days=1)
    finally:
        monkeypatch.undo()
        time.tzset()
