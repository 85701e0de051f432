"""A live gang partition: Zhou's matrix over named nodes, turned into starts and signals.

The partition numbers its processors node by node (nodes in the order the operator
gave, each contributing its cpus), so a buddy block is a run of cpus on one or more
nodes. Jobs arrive between slot boundaries and join the matrix at the next one; at each
boundary (a multiple of the slot length in cluster time) the scheme settles the matrix
and the row under the pointer runs for the slot. :meth:`GangPartition.boundary` says
what changes: which jobs start for the first time, which are suspended (their row
stops) and which resume. CPUs are time-shared between rows; every other resource
(memory, GPUs) is held by a job from its placement to its end, suspended or not, so a
job only takes a block whose nodes still have room for its share of them. A node of the
partition that is not up stops admissions until it is back. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from berth.core.gang import GangScheduler, Rotation
from berth.core.gang.buddy import block_size, is_power_of_two
from berth.service.model import NodeRecord, NodeState

#: The slot length when the operator names none (Slurm's gang time slice is 30 s too).
DEFAULT_SLOT_SECONDS = 30


@dataclass(slots=True)
class GangSpec:
    """What an operator configures: nodes (in processor order), scheme, slot, rows."""

    name: str
    nodes: list[str]
    scheme: str = "brmms"
    slot_seconds: int = DEFAULT_SLOT_SECONDS
    max_rows: int | None = None
    #: A drained partition accepts no new jobs; those it has go on.
    drained: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "nodes": list(self.nodes),
            "policy": "gang",
            "options": {
                "scheme": self.scheme,
                "slot_seconds": self.slot_seconds,
                "max_rows": self.max_rows,
            },
            "drained": self.drained,
        }

    @classmethod
    def from_dict(cls, row: Mapping[str, object]) -> GangSpec:
        options = row.get("options") or {}
        assert isinstance(options, dict)
        nodes = row.get("nodes") or []
        assert isinstance(nodes, list)
        max_rows = options.get("max_rows")
        return cls(
            name=str(row["name"]),
            nodes=[str(n) for n in nodes],
            scheme=str(options.get("scheme", "brmms")),
            slot_seconds=int(str(options.get("slot_seconds", DEFAULT_SLOT_SECONDS))),
            max_rows=None if max_rows is None else int(str(max_rows)),
            drained=bool(row.get("drained", False)),
        )


@dataclass(frozen=True, slots=True)
class SlotChange:
    """What one boundary changes on the nodes, in the order to send it."""

    suspend: list[int] = field(default_factory=list)
    resume: list[int] = field(default_factory=list)
    start: list[int] = field(default_factory=list)


def share(
    cpus_of: list[tuple[str, int]], offset: int, resources: Mapping[str, int]
) -> dict[str, dict[str, int]]:
    """The job's allocation when its cpus start at processor ``offset``: its cpus node by
    node, and every other resource split over those nodes in proportion to its cpus there
    (remainders to the first nodes), so the parts add up to what it asked for."""
    cpus = resources.get("cpus", 0)
    counts: list[tuple[str, int]] = []
    start = 0
    for node, count in cpus_of:
        low, high = max(offset, start), min(offset + cpus, start + count)
        if high > low:
            counts.append((node, high - low))
        start += count
    allocation = {node: {"cpus": n} for node, n in counts}
    for resource, amount in resources.items():
        if resource == "cpus" or amount <= 0:
            continue
        parts = [amount * n // cpus for _, n in counts]
        for index in range(amount - sum(parts)):
            parts[index % len(parts)] += 1
        for (node, _), part in zip(counts, parts, strict=True):
            if part:
                allocation[node][resource] = part
    return allocation


class GangPartition:
    """One gang partition's matrix, rotation, and the jobs between boundaries."""

    def __init__(self, spec: GangSpec, nodes: Mapping[str, NodeRecord]) -> None:
        self.spec = spec
        self.nodes = nodes  # every node of the cluster, by name (records are shared)
        self.cpus_of = [(name, nodes[name].resources.get("cpus", 0)) for name in spec.nodes]
        self.processors = sum(count for _, count in self.cpus_of)
        self.rotation = Rotation(
            GangScheduler(self.processors, spec.scheme, spec.max_rows, self._fits)
        )
        #: What each job asked for, from arrival to end.
        self.requests: dict[int, dict[str, int]] = {}
        #: Jobs received since the last boundary ``(id, time)``, in order, and jobs that
        #: ended since.
        self.arrivals: list[tuple[int, int]] = []
        self.ended: list[int] = []
        #: Jobs that have started (run at least one slot), and those running this slot.
        self.started: set[int] = set()
        self.active: set[int] = set()
        self.last_boundary: int | None = None

    # ------------------------------------------------------------------ checks
    @staticmethod
    def problem(spec: GangSpec, nodes: Mapping[str, NodeRecord]) -> tuple[str, str] | None:
        """``(field, message)`` if the partition cannot be built, else None."""
        if spec.slot_seconds < 1:
            return "options.slot_seconds", f"slot_seconds must be >= 1, got {spec.slot_seconds}"
        if spec.max_rows is not None and spec.max_rows < 1:
            return "options.max_rows", f"max_rows must be >= 1, got {spec.max_rows}"
        if not spec.nodes:
            return "nodes", "a gang partition needs at least one node"
        unknown = [n for n in spec.nodes if n not in nodes]
        if unknown:
            return "nodes", f"no node {unknown[0]!r}"
        if len(set(spec.nodes)) != len(spec.nodes):
            return "nodes", "a node is named twice"
        total = sum(nodes[n].resources.get("cpus", 0) for n in spec.nodes)
        if not is_power_of_two(total):
            return "nodes", (
                f"a gang partition needs a power-of-two number of cpus (buddy blocks); "
                f"these nodes have {total}"
            )
        return None

    def request_problem(self, resources: Mapping[str, int]) -> tuple[str, str] | None:
        """``(field, message)`` if a job asking for ``resources`` could never run here:
        its cpus must be a block of the partition, and on an empty partition its share
        of the rest must fit the nodes of the leftmost block (where an empty matrix puts
        it)."""
        cpus = resources.get("cpus", 0)
        if cpus < 1:
            return "resources.cpus", "a job on a gang partition needs at least 1 cpu"
        if block_size(cpus) > self.processors:
            return "resources.cpus", (
                f"asks for {cpus} cpus; gang partition {self.spec.name!r} has "
                f"{self.processors} (a job takes a power-of-two block of them)"
            )
        for node, amounts in share(self.cpus_of, 0, resources).items():
            capacity = self.nodes[node].resources
            for resource, amount in amounts.items():
                if resource != "cpus" and amount > capacity.get(resource, 0):
                    return f"resources.{resource}", (
                        f"its share of {resource} on node {node} would be {amount}; the node "
                        f"has {capacity.get(resource, 0)}"
                    )
        return None

    def _fits(self, job_id: int, processors: int, offset: int) -> bool:
        """Whether the job's memory, GPUs and the like fit under the block at ``offset``
        beside every job in the matrix (suspended jobs keep theirs); never while a node
        of the partition is not up."""
        if any(self.nodes[n].state is not NodeState.UP for n in self.spec.nodes):
            return False
        wanted = share(self.cpus_of, offset, self.requests[job_id])
        held: dict[str, dict[str, int]] = {}
        matrix = self.rotation.scheduler.matrix
        for other in matrix.jobs.values():
            for node, amounts in share(self.cpus_of, other.offset, self.requests[other.id]).items():
                if node in wanted:
                    slot = held.setdefault(node, {})
                    for resource, amount in amounts.items():
                        slot[resource] = slot.get(resource, 0) + amount
        for node, amounts in wanted.items():
            capacity = self.nodes[node].resources
            for resource, amount in amounts.items():
                if resource == "cpus":
                    continue
                if held.get(node, {}).get(resource, 0) + amount > capacity.get(resource, 0):
                    return False
        return True

    # ------------------------------------------------------------------ jobs
    def arrive(self, job_id: int, resources: Mapping[str, int], now: int) -> None:
        self.requests[job_id] = dict(resources)
        self.arrivals.append((job_id, now))

    def withdraw(self, job_id: int) -> None:
        """A job that has not started leaves (cancelled or held): from the arrivals, from
        the scheduler's queue, or (placed, its row not yet run) at the next boundary."""
        arrivals = [item for item in self.arrivals if item[0] != job_id]
        waiting = self.rotation.scheduler.waiting
        queued = [item for item in waiting if item[0] != job_id]
        if len(arrivals) != len(self.arrivals) or len(queued) != len(waiting):
            self.arrivals = arrivals
            waiting.clear()
            waiting.extend(queued)
            del self.requests[job_id]
        else:
            self.ended.append(job_id)

    def end(self, job_id: int) -> None:
        """A started job ended (by itself, killed, or its node failed)."""
        self.ended.append(job_id)
        self.active.discard(job_id)

    def restore(
        self, job_id: int, resources: Mapping[str, int], offset: int, running: bool, now: int
    ) -> None:
        """A started job the store knows, back on its block (after a restart); the rows
        are rebuilt, so the next boundary may suspend or resume it."""
        self.requests[job_id] = dict(resources)
        self.rotation.scheduler.restore(job_id, resources.get("cpus", 0), offset)
        self.started.add(job_id)
        if running:
            self.active.add(job_id)
        if self.last_boundary is None:
            self.last_boundary = now - now % self.spec.slot_seconds

    # ------------------------------------------------------------------ time
    def next_boundary(self, after: int) -> int:
        """The first slot boundary strictly after ``after``."""
        slot = self.spec.slot_seconds
        return (after // slot + 1) * slot

    def due(self) -> int | None:
        """When the next boundary must run: every slot while jobs are in the matrix or
        have ended since; at the first boundary not before an arrival otherwise; never
        for an idle partition."""
        busy = bool(self.rotation.scheduler.matrix.jobs or self.ended)
        if not busy and not self.arrivals:
            return None
        after = None if self.last_boundary is None else self.next_boundary(self.last_boundary)
        if busy:
            assert after is not None  # jobs got into the matrix at some boundary
            return after
        slot = self.spec.slot_seconds
        first = -(-self.arrivals[0][1] // slot) * slot
        return first if after is None else max(first, after)

    def boundary(self, now: int) -> SlotChange:
        """One slot boundary at ``now``: settle the matrix, run the next row."""
        self.last_boundary = now
        ended, self.ended = self.ended, []
        arrived = [(job_id, self.requests[job_id].get("cpus", 0)) for job_id, _ in self.arrivals]
        self.arrivals = []
        report = self.rotation.step(ended, arrived)
        for job_id in ended:
            self.requests.pop(job_id, None)
            self.started.discard(job_id)
        running = set(report.running)
        # A job placed on a node that is not up does not start (its row runs without it).
        blocked = {j for j in running if j not in self.started and not self._nodes_up(j)}
        running -= blocked
        change = SlotChange(
            suspend=sorted(self.active - running),
            resume=sorted(j for j in running - self.active if j in self.started),
            start=[j for j in report.running if j in running and j not in self.started],
        )
        self.started.update(change.start)
        self.active = running
        return change

    def _nodes_up(self, job_id: int) -> bool:
        return all(self.nodes[n].state is NodeState.UP for n in self.allocation(job_id))

    # ------------------------------------------------------------------ views
    def offset_of(self, job_id: int) -> int | None:
        job = self.rotation.scheduler.matrix.jobs.get(job_id)
        return None if job is None else job.offset

    def allocation(self, job_id: int) -> dict[str, dict[str, int]]:
        offset = self.offset_of(job_id)
        assert offset is not None
        return share(self.cpus_of, offset, self.requests[job_id])

    def rows_of(self, job_id: int) -> list[int]:
        """Indices of the rows the job runs in."""
        matrix = self.rotation.scheduler.matrix
        return [i for i, row in enumerate(matrix.rows) if job_id in row.jobs]

    def next_run(self, job_id: int, now: int) -> int | None:
        """When the job's next slot starts if the matrix stays as it is (a forecast)."""
        matrix = self.rotation.scheduler.matrix
        rows = self.rows_of(job_id)
        if not rows or self.last_boundary is None:
            return None
        if job_id in self.active:
            return now
        count = len(matrix.rows)
        pointer = self.rotation.pointer % count
        # The pointer names the row of the next slot; count how many slots until ours.
        wait = min((row - pointer) % count for row in rows)
        return self.next_boundary(self.last_boundary) + wait * self.spec.slot_seconds

    def grid(self) -> list[list[int | None]]:
        """Rows x processors, each cell the job running there or None."""
        matrix = self.rotation.scheduler.matrix
        grid: list[list[int | None]] = []
        for row in matrix.rows:
            cells: list[int | None] = [None] * self.processors
            for job_id in row.jobs:
                job = matrix.jobs[job_id]
                cells[job.offset : job.offset + job.processors] = [job_id] * job.processors
            grid.append(cells)
        return grid

    def waiting(self) -> list[int]:
        """Jobs received but not in the matrix, in order."""
        return [j for j, _ in self.rotation.scheduler.waiting] + [j for j, _ in self.arrivals]

    def jobs(self) -> Iterable[int]:
        return self.requests.keys()
