"""The scheduling matrix: rows (time slots) over processors, with legal shifts only.

Each row holds the jobs that run together in its slot, each on its buddy block; a job
may hold several rows (always on the same block). Re-packing moves a job between rows,
never to other processors: :meth:`Matrix.gather` swaps the contents of two rows inside
one buddy block, which is a legal shift because blocks are nested or disjoint, until
one row is idle across a block whose every processor had an idle slot somewhere
(Properties 1 and 2 of the paper). Rows are objects so a job's rows survive the
deletion of other rows; the workload tree is kept in step with every change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from berth.core.gang.buddy import block_mask, block_size, free_blocks, is_aligned
from berth.core.gang.tree import WorkloadTree


class Row:
    """One time slot: which processors are busy (a bit mask) and the jobs that run."""

    __slots__ = ("busy", "jobs")

    def __init__(self) -> None:
        self.busy = 0
        self.jobs: set[int] = set()


@dataclass(slots=True, eq=False)
class GangJob:
    """A job in the matrix: its block, its real process count and the rows it holds.

    ``home`` is the row it keeps when it gives up extra rows (BRMMS); ``arrival`` orders
    jobs for growth.
    """

    id: int
    processors: int
    offset: int
    size: int
    arrival: int
    #: The workload-tree node of the block.
    node: int
    rows: set[Row] = field(default_factory=set)
    home: Row | None = None

    @property
    def mask(self) -> int:
        return block_mask(self.offset, self.size)

    def inside(self, offset: int, size: int) -> bool:
        return offset <= self.offset and self.offset + self.size <= offset + size


class Matrix:
    """Rows of a gang partition of ``processors`` (a power of two) processors."""

    __slots__ = ("_arrivals", "by_node", "homes", "jobs", "processors", "rows", "tree")

    def __init__(self, processors: int) -> None:
        if block_size(processors) != processors:
            raise ValueError(
                f"a gang partition needs a power-of-two processor count, got {processors}"
            )
        self.processors = processors
        self.rows: list[Row] = []
        self.jobs: dict[int, GangJob] = {}
        #: Rows in use per processor, extra rows included.
        self.tree = WorkloadTree(processors)
        #: Jobs per processor: the rows needed if every job kept only its home row.
        self.homes = WorkloadTree(processors)
        #: Jobs by the tree node of their block, in arrival order.
        self.by_node: dict[int, dict[int, GangJob]] = {}
        self._arrivals = 0

    # -- rows ------------------------------------------------------------------------

    def add_row(self) -> Row:
        row = Row()
        self.rows.append(row)
        return row

    def delete_row(self, row: Row) -> None:
        if row.jobs:
            raise ValueError("only an empty row can be deleted")
        self.rows.remove(row)

    def delete_empty_rows(self) -> int:
        """Drop every row no job holds; how many went."""
        kept = [row for row in self.rows if row.jobs]
        dropped = len(self.rows) - len(kept)
        self.rows = kept
        return dropped

    # -- jobs ------------------------------------------------------------------------

    def new_job(self, job_id: int, processors: int, offset: int) -> GangJob:
        """Register a job on the block at ``offset`` (it holds no row yet)."""
        if job_id in self.jobs:
            raise ValueError(f"job {job_id} is already in the matrix")
        size = block_size(processors)
        if size > self.processors or offset % size or offset + size > self.processors:
            raise ValueError(f"job {job_id}: no block of {size} at processor {offset}")
        self._arrivals += 1
        node = WorkloadTree.node_of(offset, size, self.processors)
        job = GangJob(job_id, processors, offset, size, self._arrivals, node)
        self.jobs[job_id] = job
        self.by_node.setdefault(node, {})[job_id] = job
        self.homes.add(offset, size, 1)
        return job

    def put(self, job: GangJob, row: Row) -> None:
        """``job`` also runs in ``row``, whose processors on its block must be idle."""
        mask = job.mask
        if row.busy & mask:
            raise ValueError(f"job {job.id}: its block is not idle in that row")
        row.busy |= mask
        row.jobs.add(job.id)
        job.rows.add(row)
        if job.home is None:
            job.home = row
        self.tree.add(job.offset, job.size, 1)

    def put_idle_rows(self, job: GangJob) -> int:
        """``job`` also runs in every row idle across its block; how many it gained."""
        mask = job.mask
        gained = 0
        for row in self.rows:
            if not row.busy & mask:
                row.busy |= mask
                row.jobs.add(job.id)
                job.rows.add(row)
                if job.home is None:
                    job.home = row
                gained += 1
        if gained:
            self.tree.add(job.offset, job.size, gained)
        return gained

    def take(self, job: GangJob, row: Row) -> None:
        """``job`` gives up ``row``."""
        row.busy &= ~job.mask
        row.jobs.discard(job.id)
        job.rows.discard(row)
        if job.home is row:
            job.home = next(iter(job.rows), None)
        self.tree.add(job.offset, job.size, -1)

    def remove(self, job_id: int) -> GangJob:
        """The job leaves every row and the matrix."""
        job = self.jobs.pop(job_id)
        keep = ~job.mask
        for row in job.rows:
            row.busy &= keep
            row.jobs.discard(job_id)
        self.tree.add(job.offset, job.size, -len(job.rows))
        job.rows.clear()
        job.home = None
        self.homes.add(job.offset, job.size, -1)
        peers = self.by_node[job.node]
        del peers[job_id]
        if not peers:
            del self.by_node[job.node]
        return job

    def growable(self) -> list[GangJob]:
        """Jobs whose every processor has an idle slot, in arrival order."""
        by_node, leaves = self.by_node, 2 * self.processors
        found: list[GangJob] = []
        for top in self.tree.open_nodes(len(self.rows)):
            first, count = top, 1
            while first < leaves:
                for inner in range(first, first + count):
                    found.extend(by_node.get(inner, {}).values())
                first, count = first * 2, count * 2
        found.sort(key=lambda job: job.arrival)
        return found

    def first_fit(self, size: int) -> tuple[Row, int] | None:
        """The first row, then the leftmost block of ``size`` idle in it, without re-packing."""
        for row in self.rows:
            free = free_blocks(row.busy, size, self.processors)
            if free:
                return row, (free & -free).bit_length() - 1
        return None

    # -- re-packing ------------------------------------------------------------------

    def idle_row(self, mask: int) -> Row | None:
        """The first row in which every processor of ``mask`` is idle."""
        for row in self.rows:
            if not row.busy & mask:
                return row
        return None

    def gather(self, offset: int, size: int) -> Row:
        """A row idle across the block, made by legal shifts inside the block.

        Needs an idle slot on every processor of the block (a non-zero tree value).
        Each half is gathered first; if their idle rows differ, the right half's
        contents of the two rows are swapped. Only jobs inside the right half can be
        there: a larger job would also cover the left half, which is idle in that row.
        """
        row = self.idle_row(block_mask(offset, size))
        if row is not None:
            return row
        if size == 1:
            raise ValueError(f"processor {offset} has no idle slot")
        half = size // 2
        left = self.gather(offset, half)
        right = self.gather(offset + half, half)
        self.swap(offset + half, half, left, right)
        return left

    def swap(self, offset: int, size: int, first: Row, second: Row) -> None:
        """Exchange what ``first`` and ``second`` run on the block (a legal shift)."""
        if first is second:
            return
        mask = block_mask(offset, size)
        jobs = self.jobs
        moving_out = [jobs[j] for j in first.jobs if jobs[j].inside(offset, size)]
        moving_in = [jobs[j] for j in second.jobs if jobs[j].inside(offset, size)]
        for job, source, target in [(j, first, second) for j in moving_out] + [
            (j, second, first) for j in moving_in
        ]:
            source.jobs.discard(job.id)
            target.jobs.add(job.id)
            job.rows.discard(source)
            job.rows.add(target)
            if job.home is source:
                job.home = target
        first_bits, second_bits = first.busy & mask, second.busy & mask
        first.busy = (first.busy & ~mask) | second_bits
        second.busy = (second.busy & ~mask) | first_bits

    # -- views -----------------------------------------------------------------------

    def cells(self) -> list[list[int]]:
        """Rows x processors, each cell a job id or 0 (idle)."""
        grid = []
        for row in self.rows:
            cells = [0] * self.processors
            for job_id in row.jobs:
                job = self.jobs[job_id]
                cells[job.offset : job.offset + job.size] = [job_id] * job.size
            grid.append(cells)
        return grid

    def check(self) -> None:
        """Raise if the matrix is inconsistent (used by tests and by debug runs)."""
        for index, row in enumerate(self.rows):
            busy = 0
            for job_id in row.jobs:
                job = self.jobs[job_id]
                if busy & job.mask:
                    raise AssertionError(f"row {index}: job {job_id} overlaps another job")
                busy |= job.mask
                if row not in job.rows:
                    raise AssertionError(f"row {index}: job {job_id} does not know it runs here")
            if busy != row.busy:
                raise AssertionError(f"row {index}: busy mask out of step")
        for job in self.jobs.values():
            if not is_aligned(job.offset, job.size) or block_size(job.processors) != job.size:
                raise AssertionError(f"job {job.id}: block ({job.offset}, {job.size}) is not buddy")
            if not job.rows:
                raise AssertionError(f"job {job.id} holds no row")
            if job.home not in job.rows:
                raise AssertionError(f"job {job.id}: home row not held")
            for row in job.rows:
                if job.id not in row.jobs or row not in self.rows:
                    raise AssertionError(f"job {job.id}: a row it holds is gone")
