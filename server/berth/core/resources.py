"""Named K-resource vectors and their packed integer form.

A cluster declares a :class:`ResourceSpace`: an ordered set of resource names (``cpus``,
``mem_gb``, ``gpus``, licences, ...) with a capacity for each. Jobs ask for non-negative
integer amounts of any of those names. For speed the scheduling hot loops never touch
dicts: a vector is *packed* into one Python ``int``, one fixed-width bit field per
resource, each field topped by a guard bit. Adding and subtracting vectors is then one
integer operation, and "does ``demand`` fit in ``free`` in every resource" is the SWAR
test ``((free | guard) - demand) & guard == guard``: the guard bit of a field survives the
subtraction exactly when that field did not borrow. This module must stay free of I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

#: Bits of one packed field: 49 value bits and one guard bit on top.
FIELD_BITS = 50
#: Amounts (and capacities) must stay strictly below this: 2**49 ~ 5.6e14.
AMOUNT_LIMIT = 1 << (FIELD_BITS - 1)


def fits(free: int, demand: int, guard: int) -> bool:
    """Whether ``demand`` fits in ``free`` in every resource (both packed, same space)."""
    return ((free | guard) - demand) & guard == guard


@lru_cache(maxsize=4096)
def parts_of(demand: int) -> tuple[tuple[int, int], ...]:
    """The resources a packed ``demand`` asks for, as ``(bit shift, amount)`` pairs
    (remembered: a cluster sees few distinct slot shapes, and slots are counted often)."""
    parts = []
    shift = 0
    while demand >> shift:
        amount = (demand >> shift) & (AMOUNT_LIMIT - 1)
        if amount:
            parts.append((shift, amount))
        shift += FIELD_BITS
    return tuple(parts)


def copies_in(free: int, parts: tuple[tuple[int, int], ...], most: int) -> int:
    """How many copies of a demand (its :func:`parts_of`) fit in packed ``free``, at most
    ``most``: the least, over the resources it asks for, of what is free over what one
    copy takes. The same count as adding copies until one no longer :func:`fits`, in a
    division per resource instead of a subtraction per copy."""
    k = most
    for shift, amount in parts:
        room = ((free >> shift) & (AMOUNT_LIMIT - 1)) // amount
        if room < k:
            k = room
    return k


class ResourceSpace:
    """An ordered set of named resources with their capacities.

    Inputs: ``capacity`` maps each resource name to its total amount, a positive integer
    below :data:`AMOUNT_LIMIT`. Raises ``ValueError`` for an empty or invalid capacity:
    that is a configuration error, not an expected scheduling outcome.
    """

    __slots__ = ("_index", "capacity", "guard", "names", "packed_capacity")

    def __init__(self, capacity: Mapping[str, int]) -> None:
        if not capacity:
            raise ValueError("a cluster needs at least one resource with a capacity")
        for name, amount in capacity.items():
            if not name or not isinstance(name, str):
                raise ValueError(f"resource names must be non-empty strings, got {name!r}")
            if isinstance(amount, bool) or not isinstance(amount, int):
                raise ValueError(f"capacity of {name!r} must be an integer, got {amount!r}")
            if not 0 < amount < AMOUNT_LIMIT:
                raise ValueError(
                    f"capacity of {name!r} must be between 1 and {AMOUNT_LIMIT - 1}, got {amount}"
                )
        self.names: tuple[str, ...] = tuple(capacity)
        self.capacity: dict[str, int] = dict(capacity)
        self._index = {name: i for i, name in enumerate(self.names)}
        self.guard = sum(1 << (i * FIELD_BITS + FIELD_BITS - 1) for i in range(len(self.names)))
        self.packed_capacity = self.pack(capacity)

    def __repr__(self) -> str:
        return f"ResourceSpace({self.capacity!r})"

    def violation(self, amounts: Mapping[str, int]) -> str | None:
        """Why ``amounts`` can never be granted on this cluster, or ``None`` if it can.

        Names the offending resource and the limit: an unknown resource, a negative or
        non-integer amount, an amount above the capacity, or a request for nothing.
        """
        total = 0
        for name, amount in amounts.items():
            if name not in self._index:
                known = ", ".join(self.names)
                return f"unknown resource {name!r} (this cluster has: {known})"
            if isinstance(amount, bool) or not isinstance(amount, int):
                return f"amount of {name!r} must be an integer, got {amount!r}"
            if amount < 0:
                return f"amount of {name!r} must not be negative, got {amount}"
            if amount > self.capacity[name]:
                return f"requests {amount} {name} but the cluster has only {self.capacity[name]}"
            total += amount
        if total == 0:
            return "requests no resources"
        return None

    def pack(self, amounts: Mapping[str, int]) -> int:
        """Pack a vector; names absent from ``amounts`` count as zero.

        Precondition: ``violation(amounts)`` is ``None`` (or ``amounts`` is the capacity).
        """
        packed = 0
        index = self._index
        for name, amount in amounts.items():
            packed |= amount << (index[name] * FIELD_BITS)
        return packed

    def unpack(self, packed: int) -> dict[str, int]:
        """The named amounts of a packed vector, every resource of the space included."""
        mask = AMOUNT_LIMIT - 1
        return {name: (packed >> (i * FIELD_BITS)) & mask for i, name in enumerate(self.names)}

    def amount(self, packed: int, name: str) -> int:
        """One resource's amount in a packed vector."""
        return (packed >> (self._index[name] * FIELD_BITS)) & (AMOUNT_LIMIT - 1)

    def fits(self, free: int, demand: int) -> bool:
        """Whether packed ``demand`` fits in packed ``free`` in every resource."""
        return fits(free, demand, self.guard)

    def blocking(self, free: int, demand: int) -> list[str]:
        """The resources in which packed ``demand`` exceeds packed ``free``."""
        have, want = self.unpack(free), self.unpack(demand)
        return [name for name in self.names if want[name] > have[name]]
