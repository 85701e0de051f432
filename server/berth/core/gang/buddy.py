"""Buddy blocks: a job of ``p`` processors gets an aligned block of ``n`` with n/2 < p <= n.

A block is ``(offset, size)`` with ``size`` a power of two and ``offset`` a multiple of
it, so two blocks are either nested or disjoint (the family is laminar). That is what
lets re-packing merge idle fragments without ever moving a job to other processors.
Blocks are also bit masks over the processors (bit ``i`` is processor ``i``).
"""

from __future__ import annotations


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def block_size(processors: int) -> int:
    """The smallest power of two that holds ``processors`` (>= 1)."""
    if processors < 1:
        raise ValueError(f"a gang job needs at least 1 processor, got {processors}")
    return 1 << (processors - 1).bit_length()


def block_mask(offset: int, size: int) -> int:
    """The processors ``offset .. offset + size - 1`` as a bit mask."""
    return ((1 << size) - 1) << offset


def is_aligned(offset: int, size: int) -> bool:
    return is_power_of_two(size) and offset % size == 0


def free_blocks(busy: int, size: int, processors: int) -> int:
    """A mask with bit ``i * size`` set for every aligned block of ``size`` idle in ``busy``.

    Folding the free mask onto itself with shifts 1, 2, 4 .. size/2 leaves a bit set at
    an aligned offset only if the whole block above it is free; the shifts never look
    past the block because each step covers exactly the half already checked.
    """
    free = ~busy & ((1 << processors) - 1)
    shift = 1
    while shift < size:
        free &= free >> shift
        shift <<= 1
    return free & aligned_offsets(size, processors)


_ALIGNED: dict[tuple[int, int], int] = {}


def aligned_offsets(size: int, processors: int) -> int:
    """A mask with bit ``i * size`` set for every block of ``size`` in ``processors``."""
    key = (size, processors)
    mask = _ALIGNED.get(key)
    if mask is None:
        mask = sum(1 << offset for offset in range(0, processors, size))
        _ALIGNED[key] = mask
    return mask
