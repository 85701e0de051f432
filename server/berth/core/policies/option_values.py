"""Checking a policy option's value, as every policy's constructor does.

Options come from command-line flags, settings files, the environment and the API, so
a value may be a number, a string of one, or anything a TOML or JSON document holds:
each check reads numbers from their strings and refuses anything else with a
``ValueError`` naming the option and its limits, never a ``TypeError`` from a
comparison. Pure.
"""

from __future__ import annotations

import math


def number(
    name: str, value: object, low: float, high: float | None = None, strict: bool = False
) -> float:
    """``value`` as a float at least ``low`` (above it if ``strict``) and at most
    ``high``; NaN is refused."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        reading = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    too_low = reading <= low if strict else reading < low
    if math.isnan(reading) or too_low or (high is not None and reading > high):
        limits = f"> {low}" if strict else f">= {low}"
        if high is not None:
            limits = f"in ({low}, {high:g}]" if strict else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {limits}, got {value!r}")
    return reading


def whole(name: str, value: object) -> int:
    """``value`` as a whole number >= 0 (an int, or its digits as a string)."""
    reading: int | None = None
    if isinstance(value, str):
        try:
            reading = int(value)
        except ValueError:
            reading = None
    elif isinstance(value, int) and not isinstance(value, bool):
        reading = value
    if reading is None:
        raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if reading < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return reading
