"""Deadline admission (QoPS, MSB, MRT) on named nodes.

The node planner's conservative schedule (:class:`~berth.core.policies.nodes.
NodeBackfill`: a placement on named nodes for every waiting job, compression as jobs
end) with deadline admission: an arriving job is admitted only if a rearrangement of
the waiting jobs' *placements* meets every deadline — the same algorithms as on the
pool (:mod:`berth.core.policies.admission`), run on a :class:`NodeBoard`, where taking
a job out gives its nodes back and placing it finds its earliest placement. The board
works on the live plan and logs every change: a rejection undoes them, so the plan is
as it was. An admitted job's guarantee is its deadline minus its estimate: it completes
by its deadline on the nodes it is placed on. Pure: no clock, no I/O.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.nodes import Placement
from berth.core.policies.admission import Admission
from berth.core.policies.boards import Board
from berth.core.policies.deadline_rules import Deadlines
from berth.core.policies.nodes import NodeBackfill, Planned

#: Where a job is on the node board: its placement and what it holds per node.
OnNodes = tuple[Placement, dict[int, int]]

#: The deadline policies the node planner runs.
NODE_DEADLINE_POLICIES = ("qops", "msb", "mrt")


class NodeBoard(Board[Planned, OnNodes]):
    """The live node plan as a board: a job's place is a placement on named nodes."""

    def __init__(self, policy: NodeBackfill) -> None:
        super().__init__(
            (job_id, e.start, (e.placement, e.held))
            for job_id, e in policy.waiting.items()
            if e.start is not None and e.placement is not None and e.held is not None
        )
        self.plan = policy.plan
        space = policy.space
        total = space.unpack(sum(self.plan.capacities))
        self._unpack = space.unpack
        self._total = {name: amount for name, amount in total.items() if amount}

    def size(self, entry: Planned) -> float:
        """The shares of the cluster's resources that the job holds where it is placed."""
        amounts = self._unpack(sum(self.where[entry.job.id][1].values()))
        return sum(amounts[name] / total for name, total in self._total.items())

    def _id(self, entry: Planned) -> int:
        return entry.job.id

    def _find(self, entry: Planned, after: int) -> tuple[int, OnNodes]:
        found = self.plan.earliest(entry.shape, entry.demand, entry.job.estimate, after)
        assert found is not None, "an admitted job always fits once all has ended"
        start, placement = found
        return start, (placement, self.plan.held(placement, entry.demand, entry.shape.exclusive))

    def _hold(self, entry: Planned, start: int, where: OnNodes) -> None:
        self.plan.reserve(where[1], start, entry.job.estimate)

    def _give_back(self, entry: Planned, start: int, where: OnNodes) -> None:
        self.plan.release(where[1], start, entry.job.estimate)


class NodeDeadline(NodeBackfill):
    """QoPS, MSB or MRT on named nodes (``name``), with the heuristic, the relaxation
    factor R and the algorithm's own option (``k_factor``, ``max_backtracks``)."""

    def __init__(
        self,
        name: str,
        nodes: Mapping[str, Mapping[str, int]],
        configured: Mapping[str, Mapping[str, int]] | None = None,
        heuristic: str = "edf",
        relaxation: float = 5.0,
        **options: int,
    ) -> None:
        super().__init__(name, nodes, configured)
        self.rules = Deadlines(heuristic, relaxation)
        self.admission = Admission(name, **options)

    @property
    def deadline_of(self) -> dict[int, int]:
        """Every admitted waiting job's deadline (real or artificial)."""
        return self.rules.of

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self._admit(job, now)
        if isinstance(entry, Reject):
            return entry
        refused = self.rules.too_late(job, now)
        if refused is None and job.id in self.parked:
            refused = Reject(job.id, f"no deadline can be promised: it {self.parked[job.id]}")
        if refused is not None:
            self._forget(job.id)
            return refused
        deadline = self.rules.of[job.id] = self.rules.effective(job)
        board = NodeBoard(self)
        order = sorted(
            (e for e in self.waiting.values() if e.start is not None),
            key=lambda e: (e.start, self._arrival[e.job.id]),
        )
        broken = self.admission(board, self.rules, order, entry, now)
        if broken is not None:
            board.undo(0)
            del self.rules.of[job.id]
            self._forget(job.id)
            return Reject(job.id, self.rules.explain(job.id, broken))
        self._commit(board)
        entry.guarantee = deadline - job.estimate
        assert entry.start is not None
        return Reserve(
            job.id,
            entry.start,
            entry.guarantee,
            self.rules.admitted(self.name, job),
            completion=deadline,
        )

    def _forget(self, job_id: int) -> None:
        """Drop a job :meth:`_admit` queued but admission refused."""
        del self.waiting[job_id], self._arrival[job_id]
        self.parked.pop(job_id, None)

    def _commit(self, board: NodeBoard) -> None:
        """Take the board's placements: every job that moved is re-read by the next
        compression (the room it gave back is logged)."""
        for job_id, start in board.starts.items():
            entry = self.waiting[job_id]
            placement, held = board.where[job_id]
            if entry.held is held and entry.start == start:
                continue
            if entry.start is not None and entry.held is not None:
                old_end = entry.start + entry.job.estimate
                self._given_back(entry.held, entry.start, old_end)
            if entry.start != start and entry.guarantee is not None:
                self._replanned.add(job_id)
            entry.start, entry.placement, entry.held = start, placement, held
            entry.checked = -1
            heapq.heappush(self._starts, (start, self._arrival[job_id], job_id))

    def adopt_waiting(
        self, job: Job, now: int, start: int | None = None, guarantee: int | None = None
    ) -> Reserve | Reject | None:
        """Without a planned ``start`` (a policy change) admission runs as for an
        arrival. With one (a restart, a node change) the job keeps its deadline and is
        reserved at ``start`` on free nodes, else at its earliest placement; a start
        past its deadline is reported as the later guarantee it would need, so the
        change that causes it can be refused."""
        if start is None:
            return self.submit(job, now)
        deadline = self.rules.effective(job)
        decision = super().adopt_waiting(job, now, start, deadline - job.estimate)
        if not isinstance(decision, Reserve):
            return decision
        self.rules.of[job.id] = deadline
        entry = self.waiting[job.id]
        entry.guarantee = max(deadline - job.estimate, decision.start)
        return Reserve(
            job.id, decision.start, entry.guarantee, decision.reason, completion=deadline
        )

    def withdraw(self, job_id: int, now: int) -> bool:
        withdrawn = super().withdraw(job_id, now)
        if withdrawn:
            self.rules.of.pop(job_id, None)
        return withdrawn

    def schedule(self, now: int) -> list[Start]:
        started = super().schedule(now)
        for start in started:
            self.rules.of.pop(start.job_id, None)
        return started
