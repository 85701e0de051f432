"""Settling the heap: what survives is frozen, and a cycle dropped after a freeze is
reclaimed by the next settle, not leaked."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from berth.runtime.heap import settle_heap


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()  # leave the test process as it was


def test_what_survives_is_frozen_and_a_later_cycle_is_reclaimed() -> None:
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the collector can free it
    watch = weakref.ref(a)
    assert settle_heap() > 0
    assert gc.get_freeze_count() > 0
    del a, b
    gc.collect()  # an ordinary collection does not walk frozen objects
    assert watch() is not None
    settle_heap()  # the next settle thaws, collects and freezes again
    assert watch() is None
