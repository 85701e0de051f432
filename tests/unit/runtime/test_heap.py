"""Settling the heap: what survives is frozen, a cycle dropped after a freeze is
reclaimed by the next thawing settle, not leaked, and a light settle reclaims what was
made since the last freeze without walking the frozen objects."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from berth.runtime import heap
from berth.runtime.heap import freeze_after_full_collections, settle_heap


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    if heap._freeze_survivors in gc.callbacks:
        gc.callbacks.remove(heap._freeze_survivors)
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


def test_a_light_settle_reclaims_new_cycles_and_leaves_frozen_ones_for_a_thaw() -> None:
    old_a, old_b = Node(), Node()
    old_a.other, old_b.other = old_b, old_a
    old = weakref.ref(old_a)
    settle_heap()
    new_a, new_b = Node(), Node()
    new_a.other, new_b.other = new_b, new_a  # made after the freeze
    new = weakref.ref(new_a)
    del old_a, old_b, new_a, new_b
    settle_heap(thaw=False)
    assert new() is None  # the new cycle was walked and reclaimed
    assert old() is not None  # the frozen one was not walked
    settle_heap()
    assert old() is None


def test_what_survives_a_full_collection_is_frozen_once_asked() -> None:
    """The collector's own full collections freeze their survivors: the next one walks
    only what was made since (a cycle dropped meanwhile waits for a thawing settle)."""
    gc.unfreeze()
    kept = [Node() for _ in range(100)]
    gc.collect()
    assert gc.get_freeze_count() == 0  # not asked yet: nothing frozen
    freeze_after_full_collections()
    freeze_after_full_collections()  # once is enough
    assert gc.callbacks.count(heap._freeze_survivors) == 1
    gc.collect(1)  # a younger generation's collection freezes nothing
    assert gc.get_freeze_count() == 0
    gc.collect()
    frozen = gc.get_freeze_count()
    assert frozen >= len(kept)
    a, b = Node(), Node()
    a.other, b.other = b, a
    watch = weakref.ref(a)
    later = Node()
    del a, b
    gc.collect()  # walks and frees the cycle made since, then freezes the rest
    assert watch() is None
    # Frozen: alive but in no generation the collector walks. (Not a count compared
    # with the one before: reference counting frees frozen objects too, and CI saw it
    # one lower.)
    walked = {id(o) for o in gc.get_objects()}
    assert not any(id(node) in walked for node in [*kept, later])


def test_berth_serve_freezes_after_full_collections_in_its_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from berth.runtime.main import main

    assert heap._freeze_survivors not in gc.callbacks
    assert main(["serve", "--policy", "no-such-policy"]) == 2  # stops before serving
    assert "no-such-policy" in capsys.readouterr().err
    assert gc.callbacks.count(heap._freeze_survivors) == 1
