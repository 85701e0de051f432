"""The gang matrix, the workload tree and the four schemes on small hand-made cases."""

from __future__ import annotations

import pytest

from berth.core.gang import GangScheduler, Matrix, Rotation, block_size
from berth.core.gang.buddy import free_blocks
from berth.core.gang.tree import WorkloadTree


def rows_of(scheduler: GangScheduler) -> list[list[int]]:
    return scheduler.matrix.cells()


def test_block_size_is_the_smallest_power_of_two_that_holds_the_job() -> None:
    assert [block_size(p) for p in (1, 2, 3, 4, 5, 8, 9, 128)] == [1, 2, 4, 4, 8, 8, 16, 128]
    with pytest.raises(ValueError, match="at least 1 processor"):
        block_size(0)


def test_free_blocks_finds_only_aligned_idle_blocks() -> None:
    # Processors 1..4 idle on 8: the aligned pair (2, 3) is free, (1, 2) is not aligned.
    busy = 0b11100001
    assert free_blocks(busy, 2, 8) == 1 << 2
    assert free_blocks(busy, 4, 8) == 0
    assert free_blocks(0, 4, 8) == (1 << 0) | (1 << 4)


def test_tree_values_follow_the_paper() -> None:
    tree = WorkloadTree(4)
    tree.add(0, 2, 1)  # a job on processors 0-1 in one row
    tree.add(0, 1, 1)  # another on processor 0 in a second row
    rows = 2
    # Leaves: idle slots per processor = 0, 1, 2, 2.
    assert [tree.value(4 + p, rows) for p in range(4)] == [0, 1, 2, 2]
    assert tree.value(2, rows) == 0  # processor 0 has no idle slot
    assert tree.value(3, rows) == 4  # both children non-zero: their sum
    assert tree.value(1, rows) == 0
    assert tree.level_values(2, rows) == [(2, 0), (3, 4)]
    assert sorted(tree.open_nodes(rows)) == [3, 5]


def test_gather_makes_one_idle_row_by_legal_shifts_and_never_moves_processors() -> None:
    matrix = Matrix(4)
    first, second = matrix.add_row(), matrix.add_row()
    left = matrix.new_job(1, 2, 0)
    right = matrix.new_job(2, 2, 2)
    matrix.put(left, first)
    matrix.put(right, second)
    # Every processor has an idle slot, but no row is idle across all four.
    assert matrix.idle_row(0b1111) is None
    row = matrix.gather(0, 4)
    assert row.busy == 0
    assert len(matrix.rows) == 2
    assert (left.offset, right.offset) == (0, 2)
    other = second if row is first else first
    assert other.jobs == {1, 2}
    matrix.check()


def test_br_repacks_and_deletes_a_row_bc_keeps_it() -> None:
    """Rows [1 1 2 2], [3 3 3 3], [4 4 . .]; job 1 ends: every processor has an idle
    slot, so BR shifts job 2 into job 4's row and deletes the emptied row (Property 2);
    BC, which never re-packs, keeps three rows."""
    for scheme, rows_left in (("bc", 3), ("br", 2)):
        scheduler = GangScheduler(4, scheme)
        scheduler.settle([], [(1, 2), (2, 2), (3, 4)])  # 3 needs a row of its own
        scheduler.settle([], [(4, 2)])
        assert rows_of(scheduler) == [[1, 1, 2, 2], [3, 3, 3, 3], [4, 4, 0, 0]]
        scheduler.settle([1], [])
        assert len(scheduler.matrix.rows) == rows_left, scheme
        scheduler.matrix.check()


def test_br_places_a_job_on_the_least_loaded_block() -> None:
    scheduler = GangScheduler(4, "br")
    scheduler.settle([], [(1, 1), (2, 1), (3, 2)])
    # Job 2 avoids processor 0 (no idle slot); job 3 the left pair (none there).
    assert rows_of(scheduler) == [[1, 2, 3, 3]]
    scheduler.settle([], [(4, 2), (5, 1)])
    # Job 4 needs a new row (both pairs then equally idle: the left one); job 5 goes
    # to the only processor with an idle slot left over, processor 2, via the tree.
    assert rows_of(scheduler) == [[1, 2, 3, 3], [4, 4, 5, 0]]
    tree = scheduler.matrix.tree
    assert [value for _, value in tree.level_values(1, 2)] == [0, 0, 0, 1]


def test_bc_takes_the_first_row_then_the_leftmost_block() -> None:
    scheduler = GangScheduler(4, "bc")
    scheduler.settle([], [(1, 4), (2, 1), (3, 2), (4, 1)])
    assert rows_of(scheduler) == [[1, 1, 1, 1], [2, 4, 3, 3]]


def test_brms_keeps_extra_rows_brmms_gives_them_back_for_an_arrival() -> None:
    for scheme in ("brms", "brmms"):
        scheduler = GangScheduler(4, scheme)
        scheduler.settle([], [(1, 2), (2, 2), (3, 2)])
        # Job 3 needed a second row; job 2 grows into that row's idle right half.
        assert rows_of(scheduler) == [[1, 1, 2, 2], [3, 3, 2, 2]], scheme
        scheduler.settle([], [(4, 2)])
        scheduler.matrix.check()
        held = len(scheduler.matrix.jobs[2].rows)
        if scheme == "brms":
            # No half has an idle slot: job 4 gets a third row, and job 2 grows again.
            assert (len(scheduler.matrix.rows), held) == (3, 3)
        else:
            # Job 2 gives its extra row back and job 4 takes it: still two rows.
            assert (len(scheduler.matrix.rows), held) == (2, 1)


def test_brmms_gives_back_extra_rows_when_a_row_can_go() -> None:
    """Rows [1 1 2 2], [3 3 2 2] (job 2 grew); job 1 ends. BRMS lets job 3 grow into
    the freed half and keeps two rows; BRMMS sees that one row would do if job 2 gave
    its extra row back, so it does and deletes a row."""
    expected = {"brms": [[3, 3, 2, 2], [3, 3, 2, 2]], "brmms": [[3, 3, 2, 2]]}
    for scheme, cells in expected.items():
        scheduler = GangScheduler(4, scheme)
        scheduler.settle([], [(1, 2), (2, 2), (3, 2)])
        scheduler.settle([1], [])
        assert sorted(rows_of(scheduler)) == cells, scheme
        scheduler.matrix.check()


def test_rotation_runs_each_row_in_turn() -> None:
    rotation = Rotation(GangScheduler(4, "br"))
    first = rotation.step([], [(1, 4), (2, 4)])
    second = rotation.step()
    third = rotation.step()
    assert (first.rows, first.running, first.active) == (2, (1,), 4)
    assert second.running == (2,)
    assert third.running == (1,)
    assert rotation.step([1]).running == (2,)


def test_a_job_larger_than_the_partition_is_refused() -> None:
    scheduler = GangScheduler(8, "brmms")
    with pytest.raises(ValueError, match="asks for 9 processors; the partition has 8"):
        scheduler.settle([], [(1, 9)])
    with pytest.raises(ValueError, match="power-of-two"):
        GangScheduler(6, "br")
    with pytest.raises(ValueError, match="scheme must be one of"):
        GangScheduler(8, "fifo")


@pytest.mark.parametrize("scheme", ["bc", "br", "brms", "brmms"])
def test_beyond_the_row_limit_jobs_wait_in_order(scheme: str) -> None:
    scheduler = GangScheduler(4, scheme, max_rows=1)
    scheduler.settle([], [(1, 2), (2, 4), (3, 2)])
    # Job 2 needs a second row; job 3 would fit beside job 1 but waits behind job 2.
    assert [job_id for job_id, _ in scheduler.waiting] == [2, 3]
    assert set(scheduler.matrix.jobs) == {1}
    scheduler.settle([1], [])
    assert [job_id for job_id, _ in scheduler.waiting] == [3]
    assert rows_of(scheduler) == [[2, 2, 2, 2]]
    scheduler.settle([2], [])
    assert not scheduler.waiting
    assert set(scheduler.matrix.jobs) == {3}
