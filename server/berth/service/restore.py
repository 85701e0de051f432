"""A (re)started daemon's engine, rebuilt from what the store holds.

Persisted nodes, policy, partitions and jobs come back (defaults on a fresh store):
who waits for whom (from each waiting job's needs), waiting jobs in arrival order with
their planned starts and guarantees (those held back by what they wait for outside the
plan, as before the restart), running jobs
with what they hold, handed back to the node backend (gang jobs on their blocks, with
the time they spent suspended); the rest of an array that was going in in parts. Then
one advance handles whatever should have happened while the daemon was down. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from berth.service.engine import Engine
from berth.service.handlers.arrays import fill_whole
from berth.service.jobs.array_fill import ArrayFill
from berth.service.model import JobState, NodeRecord
from berth.service.partitions.gang import GangPartition, GangSpec
from berth.service.partitions.specs import spec_from_dict
from berth.service.ports import NodeBackend, Snapshot


def restore_engine(
    snapshot: Snapshot,
    backend: NodeBackend,
    now: int,
    default_nodes: Iterable[NodeRecord],
    default_policy: str,
    default_options: dict[str, object],
    hold_intents: bool = False,
    deferred: bool = False,
) -> Engine:
    """The engine a (re)started daemon resumes with. A daemon passes ``hold_intents``:
    what the catch-up starts or kills is sent only after the coordinator's start-up
    commit; and ``deferred``: the compressions of the jobs that ended while it was down
    wait for the single writer's slices, as they would have live (on 4,096 nodes with
    3,500 jobs waiting, made in the catch-up they held the daemon's start 15 s)."""
    fresh = not snapshot.nodes
    nodes = list(default_nodes) if fresh else snapshot.nodes
    policy = str(snapshot.config.get("policy", default_policy))
    options = snapshot.config.get("policy_options", default_options)
    assert isinstance(options, dict)
    try:
        engine = Engine(nodes, policy, options, backend)
    except ValueError as error:
        if "policy" not in snapshot.config:
            raise
        # (A database from a version that took what this one refuses.)
        raise ValueError(f"the database's policy {policy!r}: {error}") from error
    engine.outbox.hold_intents = hold_intents
    engine.defer_improvements = deferred
    partitions = snapshot.config.get("partitions", [])
    assert isinstance(partitions, list)
    for row in partitions:
        spec = spec_from_dict(row)
        if isinstance(spec, GangSpec):
            engine.gang[spec.name] = GangPartition(spec, engine.cluster.nodes)
        else:
            engine.backfill[spec.name] = spec
    tokens = snapshot.config.get("node_tokens", {})
    assert isinstance(tokens, dict)
    engine.node_tokens.update({str(k): str(v) for k, v in tokens.items()})
    if fresh:
        engine.outbox.nodes.update(engine.cluster.nodes)
        engine.outbox.config_changed()
    records = sorted(snapshot.jobs, key=lambda r: r.id)
    for record in records:
        engine.jobs[record.id] = record
    # Who waits for whom, and which waiting jobs are held back outside the plan.
    engine.deps.rebuild()
    for record in records:
        if record.state is JobState.PENDING and record.needs:
            engine.deps.held_back(record)
    for record in records:
        engine.memory.note_key(record)
        part = engine.partitions.gang_of(record)
        if record.state is JobState.PENDING:
            engine.pending[record.id] = record
            if part is not None and record.id not in engine.deps.waits.gated:
                part.arrive(record.id, record.resources, record.submit_time)  # in order
        elif record.state is JobState.RUNNING:
            engine.book.add_running(record)
            engine.cluster.bind(record.allocation)
            backend.adopt(record, now)
            if part is not None and record.gang_offset is not None:
                running = record.suspended_at is None
                part.restore(record.id, record.resources, record.gang_offset, running, now)
    engine.book.next_id = max(snapshot.last_job_id, *engine.jobs, 0) + 1
    filling = snapshot.config.get("arrays_in_parts", [])
    assert isinstance(filling, list)
    for row in filling:  # (arrays that were going in: their job numbers stay set aside)
        fill = ArrayFill.from_dict(row)
        engine.book.filling[fill.array_id] = fill
        engine.book.next_id = max(engine.book.next_id, fill.array_id + len(fill.tasks))
    for job_id, record in engine.jobs.items():
        if record.final:
            engine.memory.finished(job_id)
    for lane in [None, *engine.backfill]:
        name, settings = engine.partitions.policy_spec(lane)
        replan = engine.replan(name, settings, now, True, partition=lane, tighten=False)
        engine.life.install(replan, now, restoring=True, partition=lane)
    # The rest of an array that was going in when the daemon stopped, before any
    # command: its first task's request, its task numbers, as if it had not stopped.
    for array_id in list(engine.book.filling):
        fill_whole(engine, array_id, now)
    # No catch-up across the downtime: nothing could start while the daemon was down;
    # ends and kills that fell in it are still recorded at their own times.
    engine._stepped = now
    engine.advance(now)
    return engine
