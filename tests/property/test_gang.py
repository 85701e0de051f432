"""Invariants of the gang matrix under random arrivals and ends, for every scheme.

After every slot boundary: no processor holds two jobs in one row; blocks are buddy
aligned and never change; every job holds at least one row; the workload tree agrees
with the rows; BR and BRMMS keep exactly the rows the jobs' home rows need (so BRMMS
never has more rows than BR on the same jobs); multi-slot schemes leave no job that
could still grow. Re-packing alone (``gather``) never adds a row nor moves a job to
other processors; the rotation runs every job within one round.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.gang import GangScheduler, Rotation
from berth.core.gang.buddy import block_mask

PROCESSORS = 16


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[list[int], list[tuple[int, int]]]]:
    """Boundaries of (ends, arrivals); ends are drawn among jobs present."""
    present: list[int] = []
    next_id = 1
    boundaries = []
    for _ in range(draw(st.integers(1, 30))):
        ended = [job for job in present if draw(st.integers(0, 3)) == 0]
        present = [job for job in present if job not in ended]
        arrivals = []
        for _ in range(draw(st.integers(0, 3))):
            arrivals.append((next_id, draw(st.integers(1, PROCESSORS))))
            present.append(next_id)
            next_id += 1
        boundaries.append((ended, arrivals))
    return boundaries


def loads_of(scheduler: GangScheduler) -> list[int]:
    loads = [0] * PROCESSORS
    for job in scheduler.matrix.jobs.values():
        for processor in range(job.offset, job.offset + job.size):
            loads[processor] += len(job.rows)
    return loads


def check_state(scheduler: GangScheduler, blocks: dict[int, tuple[int, int]]) -> None:
    matrix = scheduler.matrix
    matrix.check()  # no overlap in a row, buddy blocks, a row held per job
    for job in matrix.jobs.values():
        assert (job.offset, job.size) == blocks.setdefault(job.id, (job.offset, job.size))
    loads = loads_of(scheduler)
    rows = len(matrix.rows)
    for node in range(1, 2 * PROCESSORS):
        offset, size = matrix.tree.block(node)
        assert matrix.tree.largest(node) == max(loads[offset : offset + size])
    assert max(loads, default=0) <= rows
    homes = [0] * PROCESSORS
    for job in matrix.jobs.values():
        for processor in range(job.offset, job.offset + job.size):
            homes[processor] += 1
    if scheduler.scheme in ("br", "brmms"):
        assert rows == max(homes, default=0)
    if scheduler.scheme in ("bc", "br"):
        assert all(len(job.rows) == 1 for job in matrix.jobs.values())
    if scheduler.multi_slot:
        for job in matrix.jobs.values():
            assert any(loads[p] == rows for p in range(job.offset, job.offset + job.size))


@settings(max_examples=80, deadline=None)
@given(
    scheme=st.sampled_from(("bc", "br", "brms", "brmms")),
    history=histories(),
    max_rows=st.sampled_from((None, None, 1, 2, 3)),
)
def test_every_boundary_leaves_a_legal_matrix(
    scheme: str, history: list[tuple[list[int], list[tuple[int, int]]]], max_rows: int | None
) -> None:
    scheduler = GangScheduler(PROCESSORS, scheme, max_rows)
    blocks: dict[int, tuple[int, int]] = {}
    for ended, arrivals in history:
        # Only jobs that ran can end; a waiting job has not started.
        scheduler.settle([j for j in ended if j in scheduler.matrix.jobs], arrivals)
        check_state(scheduler, blocks)
        if max_rows is not None:
            assert len(scheduler.matrix.rows) <= max_rows
        if scheduler.waiting:
            # In order: nobody who arrived after the first waiting job was placed.
            first_waiting = scheduler.waiting[0][0]
            assert all(job_id < first_waiting for job_id in scheduler.matrix.jobs)
            assert [j for j, _ in scheduler.waiting] == sorted(j for j, _ in scheduler.waiting)


@settings(max_examples=60, deadline=None)
@given(history=histories(), data=st.data())
def test_repacking_never_adds_a_row_nor_moves_a_job(
    history: list[tuple[list[int], list[tuple[int, int]]]], data: st.DataObject
) -> None:
    scheduler = GangScheduler(PROCESSORS, "brms")
    for ended, arrivals in history:
        scheduler.settle(ended, arrivals)
    matrix = scheduler.matrix
    rows = len(matrix.rows)
    # Free some slots so that blocks with an idle slot everywhere exist, then gather.
    for job_id in data.draw(st.lists(st.sampled_from(sorted(matrix.jobs) or [0]), max_size=3)):
        if job_id in matrix.jobs:
            matrix.remove(job_id)
    before = {job.id: (job.offset, job.size, len(job.rows)) for job in matrix.jobs.values()}
    open_nodes = [n for n in range(1, 2 * PROCESSORS) if matrix.tree.value(n, rows)]
    for node in open_nodes:
        offset, size = matrix.tree.block(node)
        row = matrix.gather(offset, size)
        assert not row.busy & block_mask(offset, size)
        assert len(matrix.rows) == rows
        after = {job.id: (job.offset, job.size, len(job.rows)) for job in matrix.jobs.values()}
        assert after == before
        matrix.check()


@settings(max_examples=40, deadline=None)
@given(scheme=st.sampled_from(("bc", "br", "brms", "brmms")), history=histories())
def test_every_job_runs_within_one_round(
    scheme: str, history: list[tuple[list[int], list[tuple[int, int]]]]
) -> None:
    rotation = Rotation(GangScheduler(PROCESSORS, scheme))
    for ended, arrivals in history:
        rotation.step(ended, arrivals)
    matrix = rotation.scheduler.matrix
    rows = len(matrix.rows)
    ran: set[int] = set()
    for _ in range(rows):
        report = rotation.step()
        assert report.rows == rows
        used = 0
        for job_id in report.running:
            mask = block_mask(matrix.jobs[job_id].offset, matrix.jobs[job_id].size)
            assert not used & mask  # no processor in two jobs of the row that runs
            used |= mask
        ran.update(report.running)
    assert ran == set(matrix.jobs)
