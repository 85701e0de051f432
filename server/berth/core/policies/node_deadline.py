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

from collections.abc import Mapping

from berth.core.decisions import Reject, Reserve
from berth.core.model import Job
from berth.core.policies.admission import Admission, Queue, Rebuilt
from berth.core.policies.deadline_rules import Deadlines
from berth.core.policies.node_board import NodeBoard, commit
from berth.core.policies.nodes import NodeBackfill

#: The deadline policies the node planner runs.
NODE_DEADLINE_POLICIES = ("qops", "msb", "mrt")


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
        #: What the last decision knew of QoPS's rebuild (:class:`Rebuilt`), and the
        #: board it holds on: ``(now, plan, plan changes, running jobs)`` then.
        self._rebuilt: tuple[tuple[object, ...], list[int]] | None = None

    @property
    def deadline_of(self) -> dict[int, int]:
        """Every admitted waiting job's deadline (real or artificial)."""
        return self.rules.of

    def trial(self) -> NodeDeadline:
        """See :meth:`NodeBackfill.trial`, with its own deadlines: admission writes the
        new job's (and a rejection forgets it)."""
        twin = super().trial()
        assert isinstance(twin, NodeDeadline)
        if twin.rules is self.rules:
            twin.rules = self.rules.copy()
        return twin

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
        known = self._known_rebuild(now)
        rebuilt = Rebuilt(list(known))
        broken = self.admission(board, self.rules, self.queue(), entry, now, rebuilt)
        if broken is not None:
            board.undo(0)
            self._forget(job.id)  # and its deadline
            self._rebuilt = (self._board_now(now), known)  # the board is as it was
            return Reject(job.id, self.rules.explain(job.id, broken))
        commit(self, board)
        self._rebuilt = (self._board_now(now), rebuilt.known)
        entry.guarantee = deadline - job.estimate
        assert entry.start is not None
        return Reserve(
            job.id,
            entry.start,
            entry.guarantee,
            self.rules.admitted(self.name, job),
            completion=deadline,
        )

    def queue(self) -> Queue:
        """The admitted waiting jobs (the reserved ones), put in order of their reserved
        start (ties: arrival order) when an algorithm asks for it."""
        arrival = self._arrival
        return Queue(
            [e for e in self.waiting.values() if e.start is not None],
            key=lambda e: (e.start, arrival[e.job.id]),
        )

    def _board_now(self, now: int) -> tuple[object, ...]:
        """What must not change for a rebuild's known placements to stay what a rebuild
        gives: the instant, the plan and every change to it, the running jobs (a
        started job holds its nodes from the start of the next rebuild on); and no
        waiting job may start earlier than it could (:meth:`relax` forgets it all)."""
        return (now, self.plan, self.plan.changes, tuple(self.running))

    def relax(self, job_id: int, not_before: int | None, now: int) -> None:
        """See :meth:`NodeBackfill.relax`. A rebuild may now place the job earlier,
        before jobs that came after it, even where the plan cannot move it (they hold
        that room): what is known of the last rebuild is forgotten."""
        self.forget_rebuild()
        super().relax(job_id, not_before, now)

    def forget_rebuild(self) -> None:
        """Forget what is known of the last rebuild, as any change to the plan does (the
        admission benchmark times both kinds of decision)."""
        self._rebuilt = None

    def _known_rebuild(self, now: int) -> list[int]:
        """The jobs the last rebuild placed as the next one would, if nothing changed."""
        if self._rebuilt is None:
            return []
        board, known = self._rebuilt
        return known if board == self._board_now(now) else []

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

    def _left_queue(self, job_id: int) -> None:
        self.rules.of.pop(job_id, None)
