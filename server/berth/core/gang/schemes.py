"""The four allocation schemes of Zhou, Brent and Walsh (section 4.1) on one matrix.

* **BC**, conventional buddy: a job takes the first row, then the leftmost block, that
  is idle; otherwise a new row. No re-packing, one row per job; a row goes when empty.
* **BR**: the workload tree picks the least loaded block whose every processor has an
  idle slot (a new row only if there is none), re-packing makes that slot one row;
  whenever every processor has an idle slot, re-packing empties a row and deletes it.
* **BRMS**: BR, and after every change each job whose block has an idle slot on every
  processor gains that row, until none can; extra rows are kept to completion.
* **BRMMS**: BRMS, but extra rows are given back (every job keeps its home row) when an
  arrival would otherwise need a new row, or when giving them back lets a row go.

:meth:`GangScheduler.settle` applies one slot boundary: ends, then arrivals in order,
then growth. Choices the paper leaves open are listed in ``docs/semantics.md``.

A live partition adds what the paper's model lacks: a ``fits`` test (memory and GPUs,
which suspended jobs keep, must fit the nodes under the chosen block) and
:meth:`GangScheduler.restore` (a restarted daemon puts running jobs back on their
blocks).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from berth.core.catalog import GANG_SCHEMES
from berth.core.gang.buddy import block_size
from berth.core.gang.matrix import Matrix

#: Scheme names, in the paper's order.
SCHEMES = GANG_SCHEMES

#: ``fits(job id, processors, offset)``: whether the job may take the block at ``offset``.
Fits = Callable[[int, int, int], bool]


class GangScheduler:
    """A gang partition's matrix under one scheme."""

    __slots__ = (
        "balanced",
        "fits",
        "matrix",
        "max_rows",
        "minimise",
        "multi_slot",
        "scheme",
        "waiting",
    )

    def __init__(
        self,
        processors: int,
        scheme: str,
        max_rows: int | None = None,
        fits: Fits | None = None,
    ) -> None:
        if scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
        if max_rows is not None and max_rows < 1:
            raise ValueError(f"max_rows must be at least 1, got {max_rows}")
        self.matrix = Matrix(processors)
        #: At most this many rows (None: no limit); beyond it jobs wait, in order.
        self.max_rows = max_rows
        #: Jobs that arrived but would need a row beyond ``max_rows``: ``(id, processors)``.
        self.waiting: deque[tuple[int, int]] = deque()
        #: Whether a job may take a block beyond its processors being idle (None: yes);
        #: a job refused on the block its scheme chose waits, and so do all behind it.
        self.fits = fits
        self.scheme = scheme
        self.balanced = scheme != "bc"
        self.multi_slot = scheme in ("brms", "brmms")
        self.minimise = scheme == "brmms"

    @property
    def processors(self) -> int:
        return self.matrix.processors

    def settle(self, ended: Iterable[int], arrived: Iterable[tuple[int, int]]) -> None:
        """One slot boundary: ``ended`` jobs leave, the waiting jobs then ``arrived``
        ``(id, processors)`` join in order (the first that would need a row beyond
        ``max_rows`` waits, and so do all behind it), then (multi-slot schemes) jobs
        grow into idle slots."""
        ended, arrived = list(ended), list(arrived)
        if not ended and not arrived:
            return  # the last boundary left the matrix settled; nothing changed since
        for job_id, processors in arrived:
            if block_size(processors) > self.processors:
                raise ValueError(
                    f"job {job_id} asks for {processors} processors; the partition has "
                    f"{self.processors}"
                )
        matrix = self.matrix
        for job_id in ended:
            matrix.remove(job_id)
        if not self.balanced:
            matrix.delete_empty_rows()
        elif self.minimise and self._single_row_peak() < len(matrix.rows):
            self._give_back()
        else:
            self._delete_rows()
        self.waiting.extend(arrived)
        while self.waiting and self._admit(*self.waiting[0]):
            self.waiting.popleft()
        if self.multi_slot:
            self._grow()

    # -- placement -------------------------------------------------------------------

    def _room_for_a_row(self) -> bool:
        return self.max_rows is None or len(self.matrix.rows) < self.max_rows

    def _fits(self, job_id: int, processors: int, offset: int) -> bool:
        return self.fits is None or self.fits(job_id, processors, offset)

    def restore(self, job_id: int, processors: int, offset: int) -> None:
        """Put back a job that runs on the block at ``offset`` (a restarted daemon): in
        the first row idle across the block, or a new row."""
        matrix = self.matrix
        job = matrix.new_job(job_id, processors, offset)
        row = matrix.idle_row(job.mask)
        matrix.put(job, row if row is not None else matrix.add_row())

    def _admit(self, job_id: int, processors: int) -> bool:
        """Place the job; False if it would need a row too many or does not fit the
        block chosen for it (it is not placed, but BRMMS may have taken extra rows back
        trying; growth hands them out again)."""
        size = block_size(processors)
        matrix = self.matrix
        if not self.balanced:
            found = matrix.first_fit(size)
            if found is None:
                if not self._room_for_a_row() or not self._fits(job_id, processors, 0):
                    return False
                row, offset = matrix.add_row(), 0
            else:
                row, offset = found
                if not self._fits(job_id, processors, offset):
                    return False
            matrix.put(matrix.new_job(job_id, processors, offset), row)
            return True
        node = self._least_loaded(size)
        if node is None and self.minimise and self._holds_extra_rows():
            self._give_back()
            node = self._least_loaded(size)
        added = None
        if node is None:
            if not self._room_for_a_row():
                return False
            added = matrix.add_row()
            node = self._least_loaded(size)
            assert node is not None  # a new row leaves an idle slot everywhere
        offset, _ = matrix.tree.block(node)
        if not self._fits(job_id, processors, offset):
            if added is not None:
                matrix.delete_row(added)
            return False
        job = matrix.new_job(job_id, processors, offset)
        matrix.put(job, matrix.gather(offset, size))
        return True

    def _least_loaded(self, size: int) -> int | None:
        """The block of ``size`` with the most idle slots, all processors having one
        (leftmost on ties), or None."""
        best, best_value = None, 0
        for node, value in self.matrix.tree.level_values(size, len(self.matrix.rows)):
            if value > best_value:
                best, best_value = node, value
        return best

    # -- rows ------------------------------------------------------------------------

    def _delete_rows(self) -> None:
        """While every processor has an idle slot, re-pack one idle row and delete it."""
        matrix = self.matrix
        while matrix.rows and matrix.tree.value(1, len(matrix.rows)):
            matrix.delete_row(matrix.gather(0, self.processors))

    def _single_row_peak(self) -> int:
        """The rows needed if every job kept only its home row."""
        return self.matrix.homes.largest(1)

    def _holds_extra_rows(self) -> bool:
        """Some job runs in more than its home row (the two trees' totals differ)."""
        return self.matrix.tree.total() != self.matrix.homes.total()

    def _give_back(self) -> None:
        """Every job keeps only its home row; then delete the rows that can go."""
        matrix = self.matrix
        for job in matrix.jobs.values():
            for row in [r for r in job.rows if r is not job.home]:
                matrix.take(job, row)
        self._delete_rows()

    # -- growth ----------------------------------------------------------------------

    def _grow(self) -> None:
        """Oldest job first, each job takes every slot it can: first the rows already
        idle across its block, then rows re-packing makes idle, until its block has a
        processor with no idle slot. Rows are not added while jobs grow."""
        matrix = self.matrix
        tree = matrix.tree
        rows = len(matrix.rows)
        for job in matrix.growable():
            if not tree.value(job.node, rows):
                continue  # an older job took the slots this one could have had
            matrix.put_idle_rows(job)
            while tree.value(job.node, rows):
                matrix.put(job, matrix.gather(job.offset, job.size))
