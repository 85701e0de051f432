"""Named K-resource vectors: packing, the SWAR fit test, and rejection reasons."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.core.resources import AMOUNT_LIMIT, ResourceSpace, copies_in, parts_of

SPACE = ResourceSpace({"cpus": 128, "mem_gb": 512, "gpus": 8})


def test_pack_and_unpack_round_trip_with_missing_names_as_zero() -> None:
    packed = SPACE.pack({"cpus": 4, "gpus": 2})
    assert SPACE.unpack(packed) == {"cpus": 4, "mem_gb": 0, "gpus": 2}
    assert SPACE.amount(packed, "gpus") == 2


amounts = st.fixed_dictionaries(
    {"cpus": st.integers(0, 128), "mem_gb": st.integers(0, 512), "gpus": st.integers(0, 8)}
)


@given(free=amounts, demand=amounts)
def test_packed_fit_test_agrees_with_componentwise_comparison(
    free: dict[str, int], demand: dict[str, int]
) -> None:
    expected = all(demand[name] <= free[name] for name in free)
    assert SPACE.fits(SPACE.pack(free), SPACE.pack(demand)) is expected
    if expected:
        remaining = SPACE.pack(free) - SPACE.pack(demand)
        assert SPACE.unpack(remaining) == {n: free[n] - demand[n] for n in free}
    assert SPACE.blocking(SPACE.pack(free), SPACE.pack(demand)) == [
        n for n in SPACE.names if demand[n] > free[n]
    ]


@given(free=amounts, demand=amounts, most=st.integers(0, 600))
def test_copies_counted_by_division_are_the_copies_that_fit_one_by_one(
    free: dict[str, int], demand: dict[str, int], most: int
) -> None:
    packed_free, packed_demand = SPACE.pack(free), SPACE.pack(demand)
    one_by_one = 0
    while one_by_one < most and SPACE.fits(packed_free, packed_demand * (one_by_one + 1)):
        one_by_one += 1
    assert copies_in(packed_free, parts_of(packed_demand), most) == one_by_one


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        ({"cpus": 129}, "requests 129 cpus but the cluster has only 128"),
        ({"licenses": 1}, "unknown resource 'licenses' (this cluster has: cpus, mem_gb, gpus)"),
        ({"cpus": -1}, "amount of 'cpus' must not be negative, got -1"),
        ({"cpus": 1.5}, "amount of 'cpus' must be an integer, got 1.5"),
        ({"cpus": 0}, "requests no resources"),
    ],
)
def test_a_request_that_can_never_run_is_named_with_its_limit(
    request_: dict[str, int], reason: str
) -> None:
    assert SPACE.violation(request_) == reason


def test_a_request_within_capacity_has_no_violation() -> None:
    assert SPACE.violation({"cpus": 128, "mem_gb": 512, "gpus": 8}) is None


@pytest.mark.parametrize(
    "capacity", [{}, {"cpus": 0}, {"cpus": AMOUNT_LIMIT}, {"cpus": 2.0}, {"": 3}]
)
def test_an_invalid_cluster_is_a_configuration_error(capacity: dict[str, int]) -> None:
    with pytest.raises(ValueError, match=r"."):
        ResourceSpace(capacity)
