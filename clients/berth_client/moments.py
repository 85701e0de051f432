"""A moment written as Slurm's ``--deadline`` and ``--begin`` take it, in local time.

``YYYY-MM-DD[THH:MM[:SS]]``; ``now[+|-COUNT[UNIT]]`` (seconds by default, or minutes,
hours, days, weeks: ``now+2hours``, ``now+90min``, ``now+1d``); ``HH:MM[:SS] [AM|PM]``
(its next occurrence: today, or tomorrow once passed); ``MM/DD[/YY]`` or
``MM.DD[.YY]`` (that day at midnight; not Slurm's ``MMDD``: a bare number is cluster
seconds to ``berth submit``); ``today`` and ``tomorrow`` (midnight) and
Slurm's named hours ``midnight``, ``noon``, ``elevenses``, ``fika`` and ``teatime``
(their next occurrence). Read against the client's clock. Pure but for what ``now``
is given.
"""

from __future__ import annotations

import datetime
import re

#: Seconds in each unit ``now+COUNT`` may name (a bare count is seconds).
_UNITS = {
    **dict.fromkeys(("", "s", "sec", "secs", "second", "seconds"), 1),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), 86_400),
    **dict.fromkeys(("w", "week", "weeks"), 7 * 86_400),
}

#: Slurm's named hours of the day.
_NAMED_HOURS = {"midnight": 0, "elevenses": 11, "noon": 12, "fika": 15, "teatime": 16}

FORMATS = "YYYY-MM-DD[THH:MM[:SS]], now+COUNT[UNIT], HH:MM[:SS], MM/DD[/YY], today, tomorrow"

_RELATIVE = re.compile(r"now(?:\s*([+-])\s*(\d+)\s*([a-z]*))?")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?")
_DAY = re.compile(r"(\d{1,2})([/.])(\d{1,2})(?:\2(\d{2}))?")


def moment(text: str, now: datetime.datetime) -> datetime.datetime:
    """The moment ``text`` names, ``now`` being the local time with its zone;
    ``ValueError`` naming the formats otherwise."""
    written = text.strip().lower()
    relative = _RELATIVE.fullmatch(written)
    if relative is not None:
        sign, count, unit = relative.groups()
        if sign is None:
            return now
        if unit not in _UNITS:
            raise ValueError(
                f"{text!r}: unknown unit {unit!r} (seconds, minutes, hours, days, weeks)"
            )
        seconds = int(count) * _UNITS[unit]
        return now + datetime.timedelta(seconds=seconds if sign == "+" else -seconds)
    # A time of day is a wall-clock time: read without a zone, then placed in the local
    # one, so that "tomorrow" across a change to or from summer time is its midnight.
    wall = _wall_time(written, text, now.replace(tzinfo=None))
    if wall is not None:
        return wall.astimezone()
    try:
        given = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r}: expected {FORMATS}") from None
    return given.astimezone()


def _wall_time(written: str, text: str, now: datetime.datetime) -> datetime.datetime | None:
    """The local wall-clock time (no zone) a day or a time of day names, ``now`` being
    the wall clock's; ``None`` if ``written`` is neither."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if written in ("today", "tomorrow"):
        return midnight + datetime.timedelta(days=written == "tomorrow")
    if written in _NAMED_HOURS:
        return _next(midnight.replace(hour=_NAMED_HOURS[written]), now)
    clock = _CLOCK.fullmatch(written)
    if clock is not None:
        hour, minute, second, half = clock.groups()
        hours = int(hour) % 12 + (12 if half == "pm" else 0) if half else int(hour)
        try:
            at = midnight.replace(hour=hours, minute=int(minute), second=int(second or 0))
        except ValueError:
            raise ValueError(f"{text!r}: no such time of day") from None
        return _next(at, now)
    day = _DAY.fullmatch(written)
    if day is not None:
        month, _, date, year = day.groups()
        try:
            return midnight.replace(
                year=2000 + int(year) if year else now.year, month=int(month), day=int(date)
            )
        except ValueError:
            raise ValueError(f"{text!r}: no such date") from None
    return None


def _next(at: datetime.datetime, now: datetime.datetime) -> datetime.datetime:
    """``at`` today if it is still to come, else the same time tomorrow."""
    return at if at > now else at + datetime.timedelta(days=1)
