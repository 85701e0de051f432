"""Run an emulation: pick estimates, slice the trace, replay each part, summarize.

This is the emulator's use case, shared by the ``berth emulate`` command, the demo, the
benchmarks and the experiments. ``progress`` builds a per-replay progress callback (the
command passes a tqdm bar); everything else is deterministic for a given seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from berth.core.policies import Policy, make_policy
from berth.core.resources import ResourceSpace
from berth.emulate.metrics import summarize
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.scenario import Scenario
from berth.emulate.workload import TraceJob, Workload

ProgressFactory = Callable[[str, int], AbstractContextManager[Callable[[int], None] | None]]


def no_progress(_label: str, _total: int) -> AbstractContextManager[None]:
    return nullcontext()


@dataclass(slots=True)
class Emulation:
    """One replay: its label (``"all"`` or a month), per-job records and report."""

    label: str
    records: list[JobRecord]
    report: dict[str, object]


def resolve_capacity(workload: Workload, override: Mapping[str, int] | None) -> dict[str, int]:
    """The trace's declared capacity updated with ``--capacity``; error if none is known."""
    capacity = dict(workload.capacity)
    capacity.update(override or {})
    if not capacity:
        used = ", ".join(workload.resources) or "cpus"
        raise ValueError(
            f"{workload.source}: no cluster capacity declared; pass --capacity (resources used: {used})"
        )
    return capacity


def node_totals(nodes: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """The capacity of a node cluster: each resource summed over the nodes."""
    total: dict[str, int] = {}
    for amounts in nodes.values():
        for name, amount in amounts.items():
            total[name] = total.get(name, 0) + amount
    return total


def run_jobs(
    jobs: list[TraceJob],
    policy_name: str,
    capacity: Mapping[str, int],
    label: str = "all",
    progress: ProgressFactory = no_progress,
    policy_options: Mapping[str, object] | None = None,
    nodes: Mapping[str, Mapping[str, int]] | None = None,
    compression_budget: int | None = None,
) -> Emulation:
    """Replay ``jobs`` from an empty machine under ``policy_name``: on the pool
    ``capacity``, or on named ``nodes`` (the node planner) when given; the node
    planner's compression in slices of ``compression_budget`` questions if given
    (:func:`~berth.emulate.replay.replay`)."""
    policy: Policy
    if nodes:
        from berth.core.policies.node_registry import make_node_policy  # only for node clusters

        policy = make_node_policy(policy_name, nodes, None, **(policy_options or {}))
    else:
        policy = make_policy(policy_name, ResourceSpace(capacity), **(policy_options or {}))
    with progress(label, len(jobs)) as tick:
        records = replay(jobs, policy, tick, compression_budget=compression_budget)
    return Emulation(label, records, summarize(records, capacity))


def emulate(
    workload: Workload,
    policy_name: str,
    capacity: Mapping[str, int] | None = None,
    scenario: Scenario | None = None,
    slice_by: str | None = None,
    progress: ProgressFactory = no_progress,
    policy_options: Mapping[str, object] | None = None,
    nodes: Mapping[str, Mapping[str, int]] | None = None,
    compression_budget: int | None = None,
) -> list[Emulation]:
    """Replay a workload prepared by ``scenario``, whole or by month (``slice_by="month"``),
    on a pool or, with ``nodes``, on named nodes (with ``compression_budget``: see
    :func:`run_jobs`). Jobs that ask for slots need nodes (``ValueError`` otherwise, as
    the daemon refuses them on a pool), and so does a compression budget."""
    if compression_budget is not None:
        if not nodes:
            raise ValueError(
                "--compression-budget slices the node planner's compression: give the "
                'cluster as nodes (--nodes, or a {"nodes": [...]} first line)'
            )
        if compression_budget < 1:
            raise ValueError(f"--compression-budget must be at least 1, got {compression_budget}")
    if not nodes:
        shaped = next((t.job.id for t in workload.jobs if t.job.shape is not None), None)
        if shaped is not None:
            raise ValueError(
                f"job {shaped} asks for slots on nodes: give the cluster as nodes "
                '(--nodes, or a {"nodes": [...]} first line)'
            )
    cluster = node_totals(nodes) if nodes else resolve_capacity(workload, capacity)
    jobs = (scenario or Scenario()).prepare(workload.jobs, cluster)
    if slice_by is None:
        return [
            run_jobs(
                jobs, policy_name, cluster, "all", progress, policy_options, nodes,
                compression_budget,
            )
        ]  # fmt: skip
    if slice_by != "month":
        raise ValueError(f"--slice must be 'month', got {slice_by!r}")
    from berth.emulate.slicing import by_month  # loads zoneinfo: only when slicing

    sliced = Workload(jobs, unix_start=workload.unix_start, timezone=workload.timezone)
    return [
        run_jobs(
            part, policy_name, cluster, month, progress, policy_options, nodes, compression_budget
        )
        for month, part in by_month(sliced)
    ]
