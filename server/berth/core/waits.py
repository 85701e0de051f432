"""Jobs that wait for other jobs, between a shell and its policy.

Both shells (the emulator and the daemon's engine) keep a :class:`Waits`: the
dependency graph, which dependents the policy plans and from when (their ``not_before``),
and which are held back because a predecessor has no promise yet (no guarantee: it is
held, or its policy promises nothing). The shell tells it what happens to jobs
(:meth:`Waits.touch`) and asks :meth:`Waits.settle` what follows, as steps it applies:

* :class:`Doom` — a need can never be satisfied (``afterok`` on a job that failed):
  the shell cancels the job (or holds it, if its user asked);
* :class:`Relax` — a predecessor's promise came earlier: the job may start earlier;
* :class:`Plan` — the job can be planned from ``not_before`` on (it was held back, or
  a promise it counted on was lost: it is planned again, a new guarantee);
* :class:`Gate` — a predecessor lost its promise: the job leaves the plan and waits.

A policy that plans every job (conservative and its kin) gets a dependent as soon as
every predecessor has a promise, with ``not_before`` the latest of them; a policy
without promises (FCFS, EASY, gang partitions) gets it only when nothing is left to
wait for. Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from berth.core.dependencies import Bound, Dependencies, Need


@dataclass(frozen=True, slots=True)
class Doom:
    job_id: int
    need: Need


@dataclass(frozen=True, slots=True)
class Relax:
    job_id: int
    not_before: int | None


@dataclass(frozen=True, slots=True)
class Plan:
    job_id: int
    not_before: int | None
    #: Whether the job was planned before (its promise is replaced).
    again: bool


@dataclass(frozen=True, slots=True)
class Gate:
    job_id: int
    bound: Bound


Step = Doom | Relax | Plan | Gate

#: What a shell says of a job: ``(started, ended, ended successfully)``.
Outcome = Callable[[int], tuple[bool, bool, bool]]
#: A predecessor's promised start (``after``) or end (other kinds) for a need, if any.
Promised = Callable[[Need], int | None]
#: Whether the policy that would plan a job plans every job ahead (gives promises).
PlansAhead = Callable[[int], bool]


class Waits:
    """The dependency graph and where each dependent stands towards its policy."""

    __slots__ = ("_changed", "_handed", "_touched", "gated", "graph", "planned")

    def __init__(self) -> None:
        self.graph = Dependencies()
        #: Dependents the policy holds, with the ``not_before`` it was given.
        self.planned: dict[int, int] = {}
        #: Dependents held back, with what holds them.
        self.gated: dict[int, Bound] = {}
        self._touched: set[int] = set()
        #: Jobs whose needs changed (satisfied, doomed, handed on) since the shell asked.
        self._changed: set[int] = set()
        #: Lanes handed on by tasks cancelled before they started, until settled.
        self._handed: dict[int, list[Need]] = {}

    def add(self, job_id: int, needs: Iterable[Need], outcome: Outcome) -> None:
        """A new job's needs (see :meth:`Dependencies.add`). Those on jobs that have
        started or ended already are settled by the next :meth:`settle`, as any other
        (so a task whose lane was cancelled before it started still inherits it)."""
        needs = list(needs)
        self.graph.add(job_id, needs)
        for need in needs:
            started, ended, _ = outcome(need.job_id)
            if started or ended:
                self._touched.add(need.job_id)

    def touch(self, job_id: int) -> None:
        """Something happened to ``job_id`` (it started, ended, gained or lost a promise)
        that jobs waiting for it must hear of at the next :meth:`settle`."""
        if self.graph.is_awaited(job_id):
            self._touched.add(job_id)

    def admit(self, job_id: int, promised: Promised, plans_ahead: bool) -> Bound | None:
        """A job joins the queue (new, released, requeued): ``None`` if the policy may
        take it now (from ``not_before``: :meth:`not_before`), else what holds it back."""
        bound = self.graph.bound(job_id, promised)
        self.gated.pop(job_id, None)
        if self.plannable(bound, plans_ahead):
            if bound.time is not None:
                self.planned[job_id] = bound.time
            return None
        self.gated[job_id] = bound
        return bound

    def not_before(self, job_id: int) -> int | None:
        """The ``not_before`` the policy was (or is to be) given for ``job_id``."""
        return self.planned.get(job_id)

    def left(self, job_id: int) -> None:
        """``job_id`` left the queue (started, held, cancelled, rejected)."""
        self.planned.pop(job_id, None)
        self.gated.pop(job_id, None)

    def ended(self, job_id: int, started: bool) -> None:
        """``job_id`` ended: it waits for nothing any more, and its waiters must hear (a
        task cancelled before it started hands its lane on: see ``throttle``)."""
        self.left(job_id)
        handed = self.graph.forget(job_id)
        if handed and not started:
            self._handed[job_id] = handed
        self.touch(job_id)

    @property
    def unsettled(self) -> bool:
        """Whether jobs moved that jobs waiting for them have not heard of yet."""
        return bool(self._touched)

    @staticmethod
    def plannable(bound: Bound, plans_ahead: bool) -> bool:
        return bound.known and (plans_ahead or bound.time is None)

    def settle(self, outcome: Outcome, promised: Promised, plans_ahead: PlansAhead) -> list[Step]:
        """The steps that follow from the jobs touched since the last call, waiters in id
        order. A shell applies them, which may touch more jobs: it calls again until
        there are none."""
        steps: list[Step] = []
        affected: set[int] = set()
        doomed: set[int] = set()
        touched, self._touched = self._touched, set()
        handed_on, self._handed = self._handed, {}
        expanded: dict[int, list[Need]] = {}  # what each cancelled task hands on, resolved
        for job_id in sorted(touched):
            affected.update(self.graph.waiters(job_id))
            started, ended, ok = outcome(job_id)
            handed = expanded[job_id] = _lanes(handed_on.get(job_id, ()), handed_on, expanded,
                                               outcome)  # fmt: skip
            if started or ended:
                satisfied, lost = self.graph.resolve(job_id, started, ended, ok, handed)
                affected.update(satisfied)
                self._changed.update(satisfied)
                for waiter, need in lost:
                    if waiter not in doomed:
                        doomed.add(waiter)
                        steps.append(Doom(waiter, need))
        for job_id in sorted(affected - doomed):
            step = self._step(job_id, promised, plans_ahead(job_id))
            if step is not None:
                steps.append(step)
        return steps

    def take_changed(self) -> set[int]:
        """The jobs whose needs changed since the last call (a shell that stores what
        each job still waits for writes them again)."""
        changed, self._changed = self._changed, set()
        return changed

    def _step(self, job_id: int, promised: Promised, plans_ahead: bool) -> Step | None:
        """What a change among ``job_id``'s predecessors means for it."""
        bound = self.graph.bound(job_id, promised)
        plannable = self.plannable(bound, plans_ahead)
        if job_id in self.gated:
            if not plannable:
                self.gated[job_id] = bound
                return None
            del self.gated[job_id]
            if bound.time is not None:
                self.planned[job_id] = bound.time
            return Plan(job_id, bound.time, again=False)
        current = self.planned.get(job_id)
        if current is None:
            return None  # not in the queue (held: its release admits it afresh)
        if not plannable:
            del self.planned[job_id]
            self.gated[job_id] = bound
            return Gate(job_id, bound)
        if bound.time == current:
            return None
        if bound.time is None:
            del self.planned[job_id]
            return Relax(job_id, None)
        self.planned[job_id] = bound.time
        if bound.time > current:
            return Plan(job_id, bound.time, again=True)
        return Relax(job_id, bound.time)


def _lanes(
    needs: Iterable[Need],
    handed_on: dict[int, list[Need]],
    expanded: dict[int, list[Need]],
    outcome: Outcome,
) -> list[Need]:
    """The lane needs a task cancelled before it started hands on: ``needs``, where each
    on a task itself cancelled before it started (in the same settling) is replaced by
    what that one hands on (``expanded`` when already resolved: tasks are settled in id
    order, and a lane's earlier task has the lower id, so a whole array cancelled at
    once costs one step per task), and those on tasks that ended are dropped."""
    out: list[Need] = []
    todo = list(needs)
    seen: set[int] = set()
    while todo:
        need = todo.pop()
        if need.job_id in seen:
            continue
        seen.add(need.job_id)
        started, ended, _ = outcome(need.job_id)
        if not ended:
            out.append(need)
        elif not started:
            known = expanded.get(need.job_id)
            if known is not None:
                out.extend(n for n in known if n.job_id not in seen)
            else:
                todo.extend(handed_on.get(need.job_id, ()))
    return out
