"""Whether a shape of slots can ever be held by a node cluster, and whether it can now.

A policy on named nodes asks this of every job it admits: a shape no set of the
cluster's configured nodes could ever hold is refused with the field and the limit it
exceeds; a shape only nodes that are drained, down or still joining could hold waits
for them. :class:`ShapeChecks` counts the nodes of each capacity once (configured and
up), not per question (a replan of 3,900 waiting jobs on 4,096 nodes counted 4,096 per
shape: 10 % of its time), and remembers each shape's answer, as jobs repeat them.
Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape, shape_problem

#: How many shapes :meth:`ShapeChecks.problems` remembers by identity (each job given
#: as slots brings its own shape object).
SHAPES_SEEN = 4096

#: Why no configured node could ever hold a shape, why the nodes up cannot now (each
#: ``None`` when they can), and the shape's slot packed (0 when refused).
Answer = tuple[str | None, str | None, int]


class ShapeChecks:
    """The answers for one cluster: ``configured`` all its nodes' amounts, ``up`` the
    capacities (packed) of the nodes a policy may place jobs on now."""

    __slots__ = ("_by_key", "_configured", "_seen", "_up", "space")

    def __init__(
        self,
        space: ResourceSpace,
        configured: Iterable[Mapping[str, int]],
        up: Iterable[int],
    ) -> None:
        self.space = space
        self._configured = Counter(
            space.pack({n: a for n, a in amounts.items() if n in space.capacity})
            for amounts in configured
        )
        self._up = Counter(up)
        self._by_key: dict[tuple[object, ...], Answer] = {}
        self._seen: dict[int, tuple[Shape, Answer]] = {}

    def configure(self, resources: Mapping[str, int]) -> bool:
        """Count a node of ``resources`` among the configured ones (a job only it could
        hold then waits for it instead of being refused), if this space can pack its
        amounts; ``False`` (nothing counted) if it cannot."""
        capacity = self.space.capacity
        if any(a and (n not in capacity or a > capacity[n]) for n, a in resources.items()):
            return False
        self._configured[self.space.pack({n: a for n, a in resources.items() if a})] += 1
        self._by_key.clear()
        self._seen.clear()
        return True

    def problems(self, shape: Shape) -> Answer:
        """See :data:`Answer`; remembered per shape, and by the shape object itself (the
        shapes of jobs given as totals are shared, and a key costs more to build than
        the answer to look up)."""
        same = self._seen.get(id(shape))
        if same is not None and same[0] is shape:
            return same[1]
        if len(self._seen) >= SHAPES_SEEN:
            self._seen.clear()
        key = (tuple(shape.per_slot.items()), shape.count, shape.nodes, shape.exclusive)
        known = self._by_key.get(key)
        if known is None:
            space = self.space
            unknown = [n for n, a in shape.per_slot.items() if a and n not in space.capacity]
            problem = (
                f"slots.per_slot: no node has {', '.join(unknown)}"
                if unknown
                else shape_problem(shape, space, self._configured)
            )
            waits = None if problem else shape_problem(shape, space, self._up)
            demand = 0 if problem else space.pack(shape.per_slot)
            known = self._by_key[key] = (problem, waits, demand)
        self._seen[id(shape)] = (shape, known)  # (kept alive: its id is not reused)
        return known
