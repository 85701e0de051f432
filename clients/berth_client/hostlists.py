"""Node names as Slurm writes them, both ways: :func:`hostlist` folds names into
``node[001-013],gpu[1-2]`` and :func:`expand_hostlist` reads such a list back into names
(what an operator types: ``berth admin drain node[0001-0100]``). Standard library only.
"""

from __future__ import annotations

import argparse
import re

#: Most names one list may stand for (``node[1-99999999]`` is a typing slip, not a center).
MOST_NAMES = 100_000


def hostlist(names: list[str]) -> str:
    """Node names as Slurm's hostlists write them: ``node[001-013],gpu[1-2]``; runs of one
    prefix and consecutive numbers (of one zero-padded width) fold into a range, in the
    order given."""
    parts: list[tuple[str, int, int, int] | str] = []  # (prefix, first, last, width) | name
    for name in names:
        match = re.fullmatch(r"(.*?)(\d+)", name)
        if match is None:
            parts.append(name)
            continue
        prefix, digits = match.group(1), match.group(2)
        number = int(digits)
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        last = parts[-1] if parts else None
        if (
            isinstance(last, tuple)
            and last[0] == prefix
            and last[2] + 1 == number
            and last[3] in (width, len(digits))  # (node099 then node100 stay one range)
        ):
            parts[-1] = (prefix, last[1], number, last[3])
        else:
            parts.append((prefix, number, number, width))
    written = []
    for part in parts:
        if isinstance(part, str):
            written.append(part)
            continue
        prefix, first, last_number, width = part
        low, high = str(first).zfill(width), str(last_number).zfill(width)
        written.append(f"{prefix}{low}" if first == last_number else f"{prefix}[{low}-{high}]")
    return ",".join(written)


def expand_hostlist(text: str) -> list[str]:
    """``node[001-003,7],login`` -> ``node001 node002 node003 node007 login``: commas
    outside brackets part names; inside, numbers and ``LOW-HIGH`` ranges, written with
    the low bound's zero padding; several brackets in a name multiply
    (``r[1-2]n[1-2]``: four). An argparse type: a malformed list raises
    :class:`argparse.ArgumentTypeError` saying what is wrong."""
    names: list[str] = []
    for item in _top_level_items(text):
        names += _expand_one(item, text)
        if len(names) > MOST_NAMES:
            raise argparse.ArgumentTypeError(f"{text!r} names more than {MOST_NAMES:,} nodes")
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names no node")
    return names


def _top_level_items(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    items, depth, current = [], 0, ""
    for char in text:
        if char == "[":
            depth += 1
            if depth > 1:
                raise argparse.ArgumentTypeError(f"{text!r}: brackets inside brackets")
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise argparse.ArgumentTypeError(f"{text!r}: ']' without its '['")
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    if depth:
        raise argparse.ArgumentTypeError(f"{text!r}: '[' without its ']'")
    return [item.strip() for item in [*items, current] if item.strip()]


def _expand_one(item: str, text: str) -> list[str]:
    """One name with any number of bracketed ranges."""
    match = re.search(r"\[([^\]]*)\]", item)
    if match is None:
        return [item]
    head, tail = item[: match.start()], item[match.end() :]
    rests, numbers = _expand_one(tail, text), _numbers(match.group(1), text)
    if len(rests) * len(numbers) > MOST_NAMES:  # (before making them)
        raise argparse.ArgumentTypeError(f"{text!r} names more than {MOST_NAMES:,} nodes")
    return [f"{head}{number}{rest}" for number in numbers for rest in rests]


def _numbers(ranges: str, text: str) -> list[str]:
    """``001-003,7`` -> ``001 002 003 7``."""
    numbers: list[str] = []
    for part in ranges.split(","):
        low, dash, high = part.strip().partition("-")
        if not _digits(low) or (dash and not _digits(high)):
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected numbers or LOW-HIGH ranges in brackets, got {part!r}"
            )
        first, last = int(low), int(high) if dash else int(low)
        if last < first:
            raise argparse.ArgumentTypeError(f"{text!r}: range {part.strip()!r} runs backwards")
        if len(numbers) + last - first >= MOST_NAMES:
            raise argparse.ArgumentTypeError(f"{text!r} names more than {MOST_NAMES:,} nodes")
        width = len(low) if low.startswith("0") else 0
        numbers += (str(number).zfill(width) for number in range(first, last + 1))
    return numbers


def _digits(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` also takes ``²``, which ``int`` refuses)."""
    return text.isascii() and text.isdigit()
