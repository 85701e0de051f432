"""The workload tree of Zhou, Brent and Walsh (section 3), kept as loads per subtree.

Node 1 is all processors; node ``k`` has children ``2k`` and ``2k + 1`` (the two buddy
halves); leaf ``P + i`` is processor ``i``. The paper gives a leaf the number of idle
slots on its processor and an inner node the sum of its children when both are
non-zero, else zero. That value depends on the number of rows, which changes often, so
each node keeps the total and the largest load (rows in use) of its processors instead:
with ``R`` rows, the paper's value is ``size * R - total`` when ``largest < R`` and zero
otherwise. A non-zero value means every processor under the node has an idle slot, so
re-packing (Property 1) can make one row idle across the whole block; the value also
says how idle the block is, which the balanced schemes use to pick the least loaded.

A job adds the same load to every processor of its block, so the change is recorded
once at the block's node (``_extra``) and only its ancestors are recomputed: an update
costs one step per level, not one per processor. A node's own figures leave out the
extras recorded above it, which readers add on the way down.
"""

from __future__ import annotations


class WorkloadTree:
    """Loads (rows in use) per processor, summed and maximised per buddy subtree."""

    __slots__ = ("_extra", "_largest", "_total", "processors")

    def __init__(self, processors: int) -> None:
        self.processors = processors
        self._total = [0] * (2 * processors)
        self._largest = [0] * (2 * processors)
        self._extra = [0] * (2 * processors)

    @staticmethod
    def node_of(offset: int, size: int, processors: int) -> int:
        """The tree node whose processors are the block ``(offset, size)``."""
        return (processors // size) + offset // size

    def size_of(self, node: int) -> int:
        return self.processors >> (node.bit_length() - 1)

    def add(self, offset: int, size: int, rows: int) -> None:
        """Every processor of the block gains ``rows`` in use (negative: frees them)."""
        total, largest, extra = self._total, self._largest, self._extra
        node = self.node_of(offset, size, self.processors)
        extra[node] += rows
        total[node] += rows * size
        largest[node] += rows
        while node > 1:
            node //= 2
            size *= 2
            left, right = 2 * node, 2 * node + 1
            total[node] = total[left] + total[right] + extra[node] * size
            largest[node] = max(largest[left], largest[right]) + extra[node]

    def _above(self, node: int) -> int:
        """Load recorded at the strict ancestors of ``node`` (it covers all its processors)."""
        extra, load = self._extra, 0
        node //= 2
        while node:
            load += extra[node]
            node //= 2
        return load

    def total(self) -> int:
        """Rows in use summed over every processor."""
        return self._total[1]

    def largest(self, node: int) -> int:
        """The most rows in use on any processor under ``node``."""
        return self._largest[node] + self._above(node)

    def value(self, node: int, rows: int) -> int:
        """The paper's node value with ``rows`` rows: idle slots under the node, or 0
        if some processor under it has none."""
        above = self._above(node)
        if self._largest[node] + above >= rows:
            return 0
        size = self.size_of(node)
        return size * (rows - above) - self._total[node]

    def level_values(self, size: int, rows: int) -> list[tuple[int, int]]:
        """``(node, value)`` of every block of ``size``, left to right, in one pass down."""
        extra = self._extra
        above = {1: 0}
        level = [1]
        while self.size_of(level[0]) > size:
            above = {
                child: above[node] + extra[node]
                for node in level
                for child in (2 * node, 2 * node + 1)
            }
            level = list(above)
        values = []
        for node in level:
            load = above[node]
            if self._largest[node] + load >= rows:
                values.append((node, 0))
            else:
                values.append((node, size * (rows - load) - self._total[node]))
        return values

    def open_nodes(self, rows: int) -> list[int]:
        """The highest nodes whose every processor has an idle slot (no two nested)."""
        found = []
        stack = [(1, 0)]
        largest, extra, leaves = self._largest, self._extra, self.processors
        while stack:
            node, above = stack.pop()
            if largest[node] + above < rows:
                found.append(node)
            elif node < leaves:
                load = above + extra[node]
                stack += ((2 * node, load), (2 * node + 1, load))
        return found

    def block(self, node: int) -> tuple[int, int]:
        """``(offset, size)`` of a node's processors."""
        level_start = 1 << (node.bit_length() - 1)
        size = self.processors // level_start
        return (node - level_start) * size, size
