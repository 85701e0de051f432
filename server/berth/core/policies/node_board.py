"""The live node plan as a :class:`~berth.core.policies.boards.Board`.

Deadline admission and slack-based insertion rearrange the waiting jobs' placements on
the plan itself: taking a job out gives its nodes back, placing it finds its earliest
placement, and every change is logged so that a rejected or priced option is undone
exactly (no copy of the plan). :func:`commit` then gives the policy's entries the
placements the board ended with. Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from berth.core.node_runs import (
    RunJob,
    SlotParts,
    place_run,
    release_run,
    run_job,
    runs_apply,
)
from berth.core.nodes import NodePlan, Placement
from berth.core.policies.base import push_starts
from berth.core.policies.boards import Board
from berth.core.policies.node_schedule import Planned

if TYPE_CHECKING:
    from berth.core.policies.nodes import NodeBackfill

#: Where a job is on the node board: its placement and what it holds per node.
OnNodes = tuple[Placement, dict[int, int]]


class NodeBoard(Board[Planned, OnNodes]):
    """The live node plan as a board: a job's place is a placement on named nodes."""

    def __init__(self, policy: NodeBackfill) -> None:
        super().__init__(
            (job_id, e.start, (e.placement, e.held))
            for job_id, e in policy.waiting.items()
            if e.start is not None and e.placement is not None and e.held is not None
        )
        self.plan = policy.plan
        #: Each job as a run of C placements reads it, by (job, earliest start asked).
        self._runs: dict[tuple[int, int], RunJob] = {}
        #: What a run reads of the plan per slot (the board's plan keeps its nodes).
        self._slots: dict[int, SlotParts] = {}
        self._unpack = policy.space.unpack
        self._total = policy.totals

    def breakpoints(self, start: int, end: int) -> list[int]:
        """Times in ``[start, end)`` where the cluster's free resources change."""
        return self.plan.aggregate.breakpoints(start, end)

    def size(self, entry: Planned) -> float:
        """The shares of the cluster's resources that the job holds where it is placed."""
        amounts = self._unpack(sum(self.where[entry.job.id][1].values()))
        return sum(amounts[name] / total for name, total in self._total.items())

    def _id(self, entry: Planned) -> int:
        return entry.job.id

    def _find(self, entry: Planned, after: int) -> tuple[int, OnNodes]:
        # Afresh: the board takes reservations out by the hundred.
        found = self.plan.earliest_afresh(entry.shape, entry.demand, entry.job.estimate, after)
        assert found is not None, "an admitted job always fits once all has ended"
        start, placement = found
        return start, (placement, self.plan.held(placement, entry.demand, entry.shape.exclusive))

    def _at(self, entry: Planned, start: int) -> OnNodes | None:
        shape = entry.shape
        placement = self.plan.place(shape, entry.demand, start, entry.job.estimate)
        if placement is None:
            return None
        return placement, self.plan.held(placement, entry.demand, shape.exclusive)

    def place_each(
        self, entries: Sequence[Planned], after: int, deadlines: Mapping[int, int]
    ) -> list[int]:
        """:meth:`Board.place_each`, in one C call where the plan allows it
        (:mod:`berth.core.node_runs`)."""
        plan = self.plan
        if not isinstance(plan, NodePlan) or not runs_apply(plan):
            return super().place_each(entries, after, deadlines)
        jobs = []
        known = self._runs  # (QoPS places a job again at each insertion point it tries)
        for entry in entries:
            job = entry.job
            run = known.get((job.id, after))
            if run is None or run[6] != deadlines[job.id]:
                run = run_job(
                    plan,
                    entry.shape,
                    entry.demand,
                    job.estimate,
                    job.ready(after),
                    deadlines[job.id],
                    self._slots,
                )
                if run is None:
                    return super().place_each(entries, after, deadlines)
                known[job.id, after] = run
            jobs.append(run)
        starts = []
        board_starts, where, log = self.starts, self.where, self._log
        for entry, found in zip(entries, place_run(plan, jobs), strict=False):
            assert found is not None, "an admitted job always fits once all has ended"
            start, placement, held = found
            on = (placement, held)
            board_starts[entry.job.id], where[entry.job.id] = start, on  # (Board._placed)
            log.append((True, entry, start, on))
            starts.append(start)
        return starts

    def take_each(self, entries: Iterable[Planned]) -> None:
        """:meth:`Board.take` each of ``entries``, in one C call where the plan allows it."""
        plan = self.plan
        entries = list(entries)
        if (
            not isinstance(plan, NodePlan)
            or not runs_apply(plan)
            or any(type(self.where[e.job.id][1]) is not dict for e in entries)
        ):
            super().take_each(entries)
            return
        windows = []
        for entry in entries:
            start, on = self._taken(entry)
            windows.append((on[1], start, start + entry.job.estimate))  # (estimates >= 1)
        release_run(plan, windows)

    def _hold(self, entry: Planned, start: int, where: OnNodes) -> None:
        self.plan.reserve(where[1], start, entry.job.estimate)

    def _give_back(self, entry: Planned, start: int, where: OnNodes) -> None:
        self.plan.release(where[1], start, entry.job.estimate)


def commit(policy: NodeBackfill, board: NodeBoard) -> None:
    """Give the policy's waiting jobs the placements on ``board`` (the live plan): the
    room a moved job gave back is logged, so the next compression reads it again."""
    names_nodes = isinstance(policy.plan, NodePlan)
    given_back = []  # (logged in one pass, in this order)
    moved: list[tuple[int, int]] = []  # (start, job id): pushed in one pass
    # (Bound once: a decision commits about 800 moved jobs.)
    waiting, where, replanned = policy.waiting, board.where, policy._replanned
    starts, arrival, own = policy._starts, policy._arrival, policy._own
    for job_id, start in board.starts.items():
        entry = waiting[job_id]
        placement, held = where[job_id]
        if entry.held is held and entry.start == start:
            continue
        entry = own(job_id)  # (a what-if's copy shares the live entries)
        old_start, old_held = entry.start, entry.held
        if names_nodes and old_start == start and old_held == held:
            # Placed again on the same nodes: nothing given back, nothing for the shell
            # to record (the dicts only, for their order). A counted plan books each
            # reservation by its ``held``, and colours them in the order booked.
            entry.placement, entry.held = placement, held
            continue
        if old_start is not None and old_held is not None:
            given_back.append((old_held, old_start, old_start + entry.job.estimate))
        if entry.guarantee is not None:  # a new start, or new nodes: the shell records it
            replanned.add(job_id)
        entry.start, entry.placement, entry.held = start, placement, held
        entry.checked = -1
        moved.append((start, job_id))
    push_starts(starts, moved, waiting, arrival)
    policy._given_back_each(given_back)
