"""Typed commands that shape the cluster: nodes added, drained, resumed or failed, the
policy changed, partitions made, changed, drained or deleted, node tokens issued, and
events the engine did not cause. Like the job commands (:mod:`berth.service.commands`),
each is plain data plus ``apply``, handed to the single writer; most are
:class:`~berth.service.commands.Prepared`: their replan runs off the event loop while
reads go on. No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from berth.service.commands import PrepareThenApply
from berth.service.handlers import node_commands, partition_commands
from berth.service.handlers.node_commands import NodeAdded, NodeChange, NodesDown
from berth.service.handlers.partition_commands import PartitionGone, PartitionMade
from berth.service.handlers.policy_commands import (
    PolicyChange,
    apply_policy_change,
    plan_policy_change,
)
from berth.service.model import NodeRecord, RequestError
from berth.service.partitions.specs import DEFAULT_PARTITION

if TYPE_CHECKING:
    from berth.service.engine import Engine
    from berth.service.partitions.gang import GangSpec
    from berth.service.partitions.specs import BackfillSpec


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
