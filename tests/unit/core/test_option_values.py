"""Policy option values: numbers read from numbers or their strings, anything else
refused naming the option and its limits."""

from __future__ import annotations

import re

import pytest

from berth.core.policies.option_values import number, whole


@pytest.mark.parametrize(
    ("value", "expected"), [(3, 3.0), ("2.5", 2.5), (" 7 ", 7.0), (1e6, 1e6), (0.5, 0.5)]
)
def test_a_number_in_range_is_read(value: object, expected: float) -> None:
    assert number("r", value, 0.0, 1e6, strict=True) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "r must be in (0.0, 1e+06], got 0"),
        (float("inf"), "r must be in (0.0, 1e+06], got inf"),
        ("nan", "r must be in (0.0, 1e+06], got 'nan'"),
        (True, "r must be a number, got True"),
        ([1], "r must be a number, got [1]"),
        ("soon", "r must be a number, got 'soon'"),
    ],
)
def test_a_number_out_of_range_or_of_another_kind_is_refused(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        number("r", value, 0.0, 1e6, strict=True)


def test_the_lower_limit_alone_reads_as_a_bound() -> None:
    assert number("sf", 0, 0.0) == 0.0
    with pytest.raises(ValueError, match=re.escape("sf must be >= 0.0, got -1")):
        number("sf", -1, 0.0)
    with pytest.raises(ValueError, match=re.escape("awt must be > 0.0, got 0")):
        number("awt", 0, 0.0, strict=True)


@pytest.mark.parametrize(("value", "expected"), [(0, 0), (5, 5), ("12", 12)])
def test_a_whole_number_is_read(value: object, expected: int) -> None:
    assert whole("k", value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, "k must be >= 0, got -1"),
        ("-2", "k must be >= 0, got -2"),
        (2.0, "k must be a whole number >= 0, got 2.0"),
        ("2.5", "k must be a whole number >= 0, got '2.5'"),
        (False, "k must be a whole number >= 0, got False"),
        (None, "k must be a whole number >= 0, got None"),
    ],
)
def test_anything_but_a_whole_number_at_least_0_is_refused(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        whole("k", value)
