"""Node-shaped requests: slots, node counts, whole nodes, and whether a cluster can hold one.

A job on a node cluster asks for :class:`Shape`: ``count`` *slots*, each a vector of
per-node resources (``per_slot``) that never spans two nodes; optionally exactly
``nodes`` distinct nodes, and whole nodes to itself (``exclusive``). :func:`shape_of`
maps a job's totals to a shape: as many equal slots as divide every total, so the totals
are kept exactly. :func:`shape_problem` says why no node set of a cluster could ever
hold a shape, naming the field; :func:`parse_node_groups` reads ``--nodes``. Pure: no
clock, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import gcd

from berth.core.resources import ResourceSpace, copies_in, parts_of


@dataclass(frozen=True, slots=True)
class Shape:
    """``count`` slots of ``per_slot`` each; on exactly ``nodes`` nodes if given; whole
    nodes if ``exclusive``."""

    count: int
    per_slot: Mapping[str, int]
    nodes: int | None = None
    exclusive: bool = False


def shape_of(resources: Mapping[str, int]) -> Shape:
    """The shape of a job given as totals: the largest number of equal slots that
    divides every total (their greatest common divisor), each holding an equal share.
    ``cpus=64,mem_gb=256`` is 64 slots of ``cpus=1,mem_gb=4``; ``cpus=2,gpus=1`` one slot
    holding both; a cpus-only job one slot per cpu. The totals are kept exactly (no
    rounding up), and a job never gets a slot that splits a GPU or a unit of memory.

    Jobs of a trace ask for a few hundred distinct totals between them, so shapes are
    remembered by their totals and shared (a shape is read-only)."""
    return _shape_of_totals(tuple(resources.items()))


@lru_cache(maxsize=4096)
def _shape_of_totals(totals: tuple[tuple[str, int], ...]) -> Shape:
    amounts = {n: a for n, a in totals if a}
    count = 0
    for amount in amounts.values():
        count = gcd(count, amount)
    count = max(count, 1)
    return Shape(count, {n: a // count for n, a in amounts.items()})


def shape_problem(
    shape: Shape, space: ResourceSpace, capacities: Sequence[int] | Mapping[int, int]
) -> str | None:
    """Why no node set of this cluster (node capacities, packed; or how many nodes have
    each capacity, counted once per cluster rather than per question) could ever hold
    ``shape``, or ``None``: a named field and the limit it exceeds."""
    if shape.count < 1:
        return f"slots.count must be at least 1, got {shape.count}"
    problem = space.violation(shape.per_slot)
    if problem is not None:
        return f"slots.per_slot: {problem}"
    demand = space.pack(shape.per_slot)
    counts = capacities if isinstance(capacities, Mapping) else Counter(capacities)
    # (slots a node could hold, how many nodes hold that many), most first: alike nodes
    # are asked once, and counted, not listed.
    usable: dict[int, int] = {}
    for cap, alike in counts.items():
        k = slots_in(cap, demand, shape.count)
        if k > 0:
            usable[k] = usable.get(k, 0) + alike
    able = sum(usable.values())
    if not able:
        return f"slots.per_slot: no node can hold one slot of {dict(shape.per_slot)}"
    taken = able
    if shape.nodes is not None:
        if shape.nodes < 1 or shape.nodes > shape.count:
            return (
                f"nodes.count must be between 1 and slots.count ({shape.count}), got {shape.nodes}"
            )
        if shape.nodes > able:
            return f"nodes.count: asks for {shape.nodes} nodes but only {able} can hold a slot"
        taken = shape.nodes
    most = 0  # the slots the ``taken`` nodes that hold the most hold together
    for k in sorted(usable, reverse=True):
        alike = min(usable[k], taken)
        most += k * alike
        taken -= alike
        if not taken:
            break
    if most < shape.count:
        return f"slots.count: asks for {shape.count} slots but the nodes hold at most {most}"
    return None


def node_names(count: int) -> list[str]:
    """The names of ``count`` numbered nodes: ``node001``, ``node002``, ..., with as many
    digits as the count needs and at least three, so that they sort by name in number
    order (4,096 nodes are ``node0001``-``node4096``; with three digits ``node1000``
    came between ``node100`` and ``node101`` in every list sorted by name)."""
    digits = max(3, len(str(count)))
    return [f"node{number:0{digits}d}" for number in range(1, count + 1)]


def parse_node_groups(spec: str) -> dict[str, dict[str, int]]:
    """``16x cpus=32,mem_gb=128; 2x cpus=32,gpus=4`` -> node001 ... node018 with their
    resources (the space after ``x`` is optional). Raises ``ValueError`` naming the group."""
    listed: list[dict[str, int]] = []
    for group in filter(None, (g.strip() for g in spec.split(";"))):
        count_text, _, amounts = group.partition("x")
        try:
            count = int(count_text)
        except ValueError:
            raise ValueError(
                f"node group {group!r} must start with 'COUNTx', e.g. '16x cpus=32'"
            ) from None
        if count < 1:
            raise ValueError(f"node group {group!r}: count must be at least 1")
        resources: dict[str, int] = {}
        for part in filter(None, (p.strip() for p in amounts.split(","))):
            name, sep, amount = part.partition("=")
            if not sep or not amount.strip().isdigit() or int(amount) < 1:
                raise ValueError(
                    f"node group {group!r}: expected NAME=POSITIVE_INTEGER, got {part!r}"
                )
            resources[name.strip()] = int(amount)
        if not resources:
            raise ValueError(f"node group {group!r} names no resources")
        listed += (dict(resources) for _ in range(count))
    if not listed:
        raise ValueError("the cluster needs at least one node")
    return dict(zip(node_names(len(listed)), listed, strict=True))


def slots_in(free: int, demand: int, cap: int) -> int:
    """How many slots of ``demand`` fit in ``free`` (at most ``cap``)."""
    return copies_in(free, parts_of(demand), cap)
