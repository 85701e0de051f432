"""Typed commands: every change a caller may ask of the live state, as a value.

Routes (and node agents' reports) build one of these and hand it to the single writer
(:class:`~berth.service.coordinator.Coordinator`), which applies it to the engine at the
batch's cluster time. A command is plain data plus :meth:`apply`; it can be logged,
compared in tests and queued without closing over request objects. No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeGuard, TypeVar

from berth.service.handlers import arrays, job_commands, node_commands, partition_commands
from berth.service.handlers.node_commands import NodeAdded, NodeChange, NodesDown
from berth.service.handlers.partition_commands import PartitionGone, PartitionMade
from berth.service.handlers.policy_commands import (
    PolicyChange,
    apply_policy_change,
    plan_policy_change,
)
from berth.service.model import JobRecord, JobRequest, NodeRecord, RequestError
from berth.service.partitions.specs import DEFAULT_PARTITION
from berth.service.planning.budgets import within
from berth.service.ports import JobFilter

if TYPE_CHECKING:
    from berth.service.engine import Engine
    from berth.service.partitions.gang import GangSpec
    from berth.service.partitions.specs import BackfillSpec


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


@dataclass(frozen=True, slots=True)
class AddNode(PrepareThenApply[NodeAdded, NodeRecord]):
    """A node an operator adds, up. A :class:`Prepared` command: the default partition's
    replan with it is made off the event loop."""

    name: str
    resources: dict[str, int] = field(hash=False)

    def prepare(self, engine: Engine, now: int) -> NodeAdded:
        return node_commands.plan_add_node(engine, self.name, self.resources, now)

    def apply_prepared(self, engine: Engine, now: int, prepared: NodeAdded) -> NodeRecord:
        return node_commands.apply_add_node(engine, prepared, now)


@dataclass(frozen=True, slots=True)
class ChangeNodes(PrepareThenApply[NodeChange, list[NodeRecord]]):
    """``drain`` or ``resume`` nodes (one or many: one replan for all; a rack's worth one
    by one was a replan each, seconds apiece on a large cluster). A :class:`Prepared`
    command: the replan and its check are made off the event loop."""

    action: str
    names: tuple[str, ...]
    reason: str = ""
    force: bool = False

    def prepare(self, engine: Engine, now: int) -> NodeChange:
        drain = self.action == "drain"
        return node_commands.plan_node_change(
            engine, self.action, list(self.names), self.reason if drain else "", now,
            self.force or not drain,
        )  # fmt: skip

    def apply_prepared(self, engine: Engine, now: int, prepared: NodeChange) -> list[NodeRecord]:
        return node_commands.apply_node_change(engine, prepared, now)


@dataclass(frozen=True, slots=True)
class MarkNodesDown(PrepareThenApply[NodesDown, list[NodeRecord]]):
    """Nodes failed: their jobs are killed and one replan re-makes guarantees. A
    :class:`Prepared` command: the replan (as if the jobs had ended) is made off the
    event loop, the kills with the rest at once."""

    names: tuple[str, ...]
    reason: str

    def prepare(self, engine: Engine, now: int) -> NodesDown:
        return node_commands.plan_nodes_down(engine, list(self.names), self.reason, now)

    def apply_prepared(self, engine: Engine, now: int, prepared: NodesDown) -> list[NodeRecord]:
        return node_commands.apply_nodes_down(engine, prepared, now)


@dataclass(frozen=True, slots=True)
class ChangePolicy(PrepareThenApply[PolicyChange, "Engine"]):
    """Switch policy; the result is the engine, to render the policy now in force."""

    policy: str
    options: dict[str, object] = field(hash=False)
    force: bool = False

    def prepare(self, engine: Engine, now: int) -> PolicyChange:
        """(a :class:`Prepared` command: the replan under the new policy off the loop)"""
        return plan_policy_change(engine, self.policy, self.options, now, self.force)

    def apply_prepared(self, engine: Engine, now: int, prepared: PolicyChange) -> Engine:
        apply_policy_change(engine, prepared, now)
        return engine


@dataclass(frozen=True, slots=True)
class IssueNodeToken:
    """Node ``name`` has a new token: the digest of a static one (the token itself is
    never stored), or ``None`` for a signed one, ``token_id``; its older static token
    stops working."""

    name: str
    token_digest: str | None
    token_id: str | None = None

    def apply(self, engine: Engine, now: int) -> str:
        node_commands.set_node_token(engine, self.name, self.token_digest, now, self.token_id)
        return self.name


@dataclass(frozen=True, slots=True)
class RecordEvent:
    """Record an event the engine did not cause (a token issued or revoked), so that it
    joins the committed, numbered event log with who asked for it."""

    kind: str
    detail: dict[str, object] = field(default_factory=dict)

    def apply(self, engine: Engine, now: int) -> None:
        engine.outbox.emit(self.kind, now, None, None, **self.detail)


@dataclass(frozen=True, slots=True)
class CreatePartition(PrepareThenApply[PartitionMade, dict[str, object]]):
    """A partition from nodes of the default partition; the result is its summary. A
    :class:`Prepared` command: the default partition's replan without those nodes is
    made off the event loop."""

    spec: GangSpec | BackfillSpec = field(hash=False)
    force: bool = False

    def prepare(self, engine: Engine, now: int) -> PartitionMade:
        return partition_commands.plan_partition(engine, self.spec, now, self.force)

    def apply_prepared(
        self, engine: Engine, now: int, prepared: PartitionMade
    ) -> dict[str, object]:
        partition_commands.apply_partition(engine, prepared, now)
        return engine.partitions.partition_summary(self.spec.name)


@dataclass(frozen=True, slots=True)
class ChangePartition(PrepareThenApply[PolicyChange | None, dict[str, object]]):
    """A backfilling partition's policy (``policy``, ``options``, ``force``), or a gang
    partition's scheme, slot length and row limit; the result is its summary. A
    :class:`Prepared` command: a backfilling partition's replan is made off the event
    loop (a gang partition's change has nothing to prepare)."""

    name: str
    scheme: str | None = None
    slot_seconds: int | None = None
    max_rows: int | None = None
    clear_max_rows: bool = False
    policy: str | None = None
    options: dict[str, object] | None = field(default=None, hash=False)
    force: bool = False

    def prepare(self, engine: Engine, now: int) -> PolicyChange | None:
        if self.name in engine.gang:
            if self.policy not in (None, "gang") or self.options:
                raise RequestError(
                    "invalid",
                    f"partition {self.name!r} is a gang partition: change its scheme, "
                    "slot_seconds or max_rows (or delete it and create another)",
                    "policy",
                )
            return None
        lane = None if self.name == DEFAULT_PARTITION else self.name
        if lane is not None and lane not in engine.backfill:
            engine.partitions.partition(self.name)  # raises not_found, naming the partitions
        if self.scheme or self.slot_seconds or self.max_rows or self.clear_max_rows:
            raise RequestError(
                "invalid", f"partition {self.name!r} is not a gang partition", "scheme"
            )
        policy, options = engine.partitions.policy_spec(lane)
        return plan_policy_change(engine,
            self.policy or policy, dict(options) if self.options is None else self.options,
            now, self.force, lane,
        )  # fmt: skip

    def apply_prepared(
        self, engine: Engine, now: int, prepared: PolicyChange | None
    ) -> dict[str, object]:
        if prepared is None:
            partition_commands.change_partition(engine,
                self.name, now, self.scheme, self.slot_seconds, self.max_rows,
                self.clear_max_rows,
            )  # fmt: skip
        else:
            apply_policy_change(engine, prepared, now)
        return engine.partitions.partition_summary(self.name)


@dataclass(frozen=True, slots=True)
class DrainPartition:
    """Drain (``drained``) or reopen a partition; the result is its summary."""

    name: str
    drained: bool

    def apply(self, engine: Engine, now: int) -> dict[str, object]:
        partition_commands.drain_partition(engine, self.name, self.drained, now)
        return engine.partitions.partition_summary(self.name)


@dataclass(frozen=True, slots=True)
class DeletePartition(PrepareThenApply[PartitionGone, None]):
    """An empty partition goes, its nodes back in the default partition. A
    :class:`Prepared` command: the default partition's replan with them is made off the
    event loop."""

    name: str

    def prepare(self, engine: Engine, now: int) -> PartitionGone:
        return partition_commands.plan_delete(engine, self.name, now)

    def apply_prepared(self, engine: Engine, now: int, prepared: PartitionGone) -> None:
        partition_commands.apply_delete(engine, prepared, now)
