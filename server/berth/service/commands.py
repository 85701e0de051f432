"""Typed commands: every change a caller may ask of the live state, as a value; here
what a command is (and one that is :class:`Prepared` off the event loop, or goes on in
the next batch: :data:`MORE_TO_DO`), and the commands on jobs (submit, arrays, cancel,
hold, release, priority). Those that shape the cluster (nodes, the policy, partitions,
node tokens) are in :mod:`berth.service.cluster_commands`.

Routes (and node agents' reports) build one of these and hand it to the single writer
(:class:`~berth.service.coordinator.Coordinator`), which applies it to the engine at the
batch's cluster time. A command is plain data plus :meth:`apply`; it can be logged,
compared in tests and queued without closing over request objects. No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeGuard, TypeVar

from berth.service.handlers import arrays, job_commands
from berth.service.model import JobRecord, JobRequest
from berth.service.planning.budgets import within
from berth.service.ports import JobFilter

if TYPE_CHECKING:
    from berth.service.engine import Engine


P = TypeVar("P")
R = TypeVar("R")


class Command(Protocol):
    """Something the single writer applies to the engine at cluster time ``now``."""

    def apply(self, engine: Engine, now: int) -> Any: ...


@dataclass(frozen=True, slots=True)
class Tick:
    """Change nothing: only let the batch advance the engine to now."""

    def apply(self, engine: Engine, now: int) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Improve:
    """Go on improving the plans (deferred compression) for at most ``seconds`` of
    wall time; whether nothing is left (the single writer's own command)."""

    seconds: float

    def apply(self, engine: Engine, now: int) -> bool:
        return engine.improve(now, within(self.seconds))


class MoreToDo:
    """What a command answers from a batch when it goes on in the next one: the writer
    carries it to the front of the next batch and answers it once it is done."""

    __slots__ = ()


#: The one :class:`MoreToDo`.
MORE_TO_DO = MoreToDo()


@dataclass(frozen=True, slots=True)
class SubmitJob:
    """Admit (or reject) a job; the result is ``(record, created)``. One that names
    dependencies waits while an array goes in in parts (:func:`arrays.waits_for_parts`)."""

    request: JobRequest

    def apply(self, engine: Engine, now: int) -> tuple[JobRecord, bool] | MoreToDo:
        if arrays.waits_for_parts(engine, self.request):
            return MORE_TO_DO
        return job_commands.submit(engine, self.request, now)


@dataclass(frozen=True, slots=True)
class SubmitArray:
    """Admit one job per task of an array; the result is ``(records, created)``. A large
    array goes in a part a batch (:mod:`berth.service.jobs.array_fill`)."""

    request: JobRequest
    tasks: tuple[int, ...]
    #: At most this many tasks running at once (``%N``; None: no limit).
    limit: int | None = None
    #: The array's id once its first part is in (then the next parts follow).
    started: list[int] = field(default_factory=list, compare=False)

    def apply(self, engine: Engine, now: int) -> tuple[list[JobRecord], bool] | MoreToDo:
        if self.started:
            try:
                records = arrays.fill_part(engine, self.started[0], now)
            except Exception:
                arrays.give_up_filling(engine, self.started[0])  # (answered 500)
                raise
            return MORE_TO_DO if records is None else (records, True)
        if arrays.waits_for_parts(engine, self.request):
            return MORE_TO_DO
        made = arrays.submit_array(engine, self.request, self.tasks, now, self.limit)
        if isinstance(made, int):
            self.started.append(made)
            return MORE_TO_DO
        return made


#: Jobs a cancel of many (:class:`InParts`) cancels in one batch at most. Each batch
#: then commits and reads are answered before the next. Cancelling 3,576 waiting jobs on
#: 4,096 nodes in one batch held every read for 1.7-2.0 s (0.4 s cancelling, the rest
#: committing their rows on SQLite); by 128 the reads took 0.16 s at the median (at most
#: 0.24), by 64 0.09-0.10 s (at most 0.17-0.24), the whole cancel 1.7-2.2 s either way.
#: Bounded by count, not by time as an array's parts are: a cancel's cost is mostly the
#: rows it commits, which a time bound on the cancelling would not see. A 10,000-task
#: array's cancel on 4,096 nodes (``bench_arrays.py --reads``): 1.0 s, reads 0.017 s at
#: the median, 0.165 s at most, as during its submission in parts of 20 ms.
CANCELS_PER_BATCH = 64


@dataclass(slots=True)
class InParts:
    """A cancel of many jobs (an array, a filter), batch after batch: the jobs are
    chosen when it is first applied, then cancelled :data:`CANCELS_PER_BATCH` at a time
    (one that ended meanwhile is left out); the answer is every job cancelled."""

    #: The chosen jobs not yet cancelled (``None``: not chosen yet), and those cancelled.
    left: list[int] | None = None
    cancelled: list[JobRecord] = field(default_factory=list)

    def cancel(
        self, engine: Engine, now: int, reason: str, choose: Callable[[], list[int]]
    ) -> list[JobRecord] | MoreToDo:
        """The next part cancelled (the jobs chosen by ``choose()`` first)."""
        if self.left is None:
            self.left = choose()
        part, self.left = self.left[:CANCELS_PER_BATCH], self.left[CANCELS_PER_BATCH:]
        self.cancelled += job_commands.cancel_each(engine, part, now, reason)
        return MORE_TO_DO if self.left else self.cancelled


@dataclass(frozen=True, slots=True)
class CancelArray:
    """Cancel every task of the array that has not ended, in parts (:class:`InParts`);
    an array still going in is cancelled once whole (none of its tasks is left out)."""

    array_id: int
    reason: str
    parts: InParts = field(default_factory=InParts, compare=False)

    def apply(self, engine: Engine, now: int) -> list[JobRecord] | MoreToDo:
        if self.array_id in engine.book.filling:
            return MORE_TO_DO
        return self.parts.cancel(
            engine, now, self.reason, lambda: arrays.tasks_left(engine, self.array_id)
        )


@dataclass(frozen=True, slots=True)
class CancelJob:
    job_id: int
    reason: str

    def apply(self, engine: Engine, now: int) -> JobRecord:
        return job_commands.cancel(engine, self.job_id, now, self.reason)


@dataclass(frozen=True, slots=True)
class CancelMatching:
    """Cancel every job not ended that the filter selects (scancel -u / -t / -n / -A),
    chosen in the writer, in parts (:class:`InParts`); chosen once the arrays going in
    are whole (the later tasks of one would escape the filter)."""

    where: JobFilter
    name: str | None
    reason: str
    parts: InParts = field(default_factory=InParts, compare=False)

    def apply(self, engine: Engine, now: int) -> list[JobRecord] | MoreToDo:
        if self.parts.left is None and engine.book.filling:
            return MORE_TO_DO
        return self.parts.cancel(
            engine, now, self.reason, lambda: job_commands.matching(engine, self.where, self.name)
        )


@dataclass(frozen=True, slots=True)
class HoldJob:
    """Hold a pending job: ``kind`` ``"user"`` (its user's hold, which they may
    release) or ``"admin"`` (an operator's or coordinator's)."""

    job_id: int
    reason: str
    kind: str = "admin"

    def apply(self, engine: Engine, now: int) -> JobRecord:
        return job_commands.hold(engine, self.job_id, now, self.reason, self.kind)


@dataclass(frozen=True, slots=True)
class ReleaseJob:
    """Release a held job; without ``admin`` (its user asks) only its user's own hold."""

    job_id: int
    admin: bool = True

    def apply(self, engine: Engine, now: int) -> JobRecord:
        return job_commands.release(engine, self.job_id, now, self.admin)


@dataclass(frozen=True, slots=True)
class SetPriority:
    job_id: int
    political: float | None

    def apply(self, engine: Engine, now: int) -> JobRecord:
        return job_commands.set_political_priority(engine, self.job_id, self.political, now)


class Prepared(Protocol):
    """A command whose long part only reads the engine (a replan over a large cluster:
    seconds). The single writer runs :meth:`prepare` off the event loop, applying
    nothing meanwhile while reads go on, then :meth:`apply_prepared` with what it gave,
    at the same ``now``; :meth:`apply` does both at once."""

    def prepare(self, engine: Engine, now: int) -> Any: ...

    def apply_prepared(self, engine: Engine, now: int, prepared: Any) -> Any: ...

    def apply(self, engine: Engine, now: int) -> Any: ...


class PrepareThenApply(Generic[P, R]):
    """The :meth:`apply` of a :class:`Prepared` command (what it prepares: ``P``; its
    result: ``R``): both halves at once, as a caller without the single writer does."""

    __slots__ = ()

    def prepare(self, engine: Engine, now: int) -> P:
        raise NotImplementedError

    def apply_prepared(self, engine: Engine, now: int, prepared: P) -> R:
        raise NotImplementedError

    def apply(self, engine: Engine, now: int) -> R:
        return self.apply_prepared(engine, now, self.prepare(engine, now))


def is_prepared(command: object) -> TypeGuard[Prepared]:
    """Whether ``command`` is :class:`Prepared` (asked of every command of a batch: a
    class attribute, where ``isinstance`` against a runtime-checkable protocol took
    19 µs, 19 ms for a batch of 1,024 submissions)."""
    return hasattr(type(command), "prepare")
