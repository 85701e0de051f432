"""Helpers for the live daemon's tests: a clock the test moves, engines, requests."""

from __future__ import annotations

from berth.dispatch.emulated import EmulatedNodes
from berth.service.engine import Engine
from berth.service.handlers.arrays import fill_whole, submit_array
from berth.service.model import JobRecord, JobRequest, NodeRecord
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine


class ManualClock:
    """Cluster time that moves only when the test says so."""

    def __init__(self, now: int = 1_000_000) -> None:
        self.time = now

    def now(self) -> int:
        return self.time

    def wall_delay(self, cluster_time: int) -> float:
        return max(0.0, float(cluster_time - self.time))

    def advance(self, seconds: int) -> int:
        self.time += seconds
        return self.time


def nodes(count: int = 4, **resources: int) -> list[NodeRecord]:
    amounts = resources or {"cpus": 8, "mem_gb": 32}
    return [NodeRecord(f"node{i + 1:03d}", dict(amounts)) for i in range(count)]


def engine(
    policy: str = "conservative",
    count: int = 4,
    now: int = 0,
    snapshot: Snapshot | None = None,
    **options: object,
) -> Engine:
    """A fresh engine (or one restored from ``snapshot``) on emulated nodes."""
    return restore_engine(
        snapshot or Snapshot(), EmulatedNodes(), now, nodes(count), policy, dict(options)
    )


def request(
    cpus: int = 8,
    limit: int = 100,
    runtime: int | None = None,
    user: str = "alice",
    deadline: int | None = None,
    key: str | None = None,
    **more: int,
) -> JobRequest:
    return JobRequest(
        name="t",
        user=user,
        resources={"cpus": cpus, **more},
        time_limit=limit,
        deadline=deadline,
        emulated_runtime=runtime,
        idempotency_key=key,
    )


def submit_whole_array(
    live: Engine, request: JobRequest, tasks: tuple[int, ...], now: int, limit: int | None = None
) -> tuple[list[JobRecord], bool]:
    """:func:`submit_array` with every part admitted at once (no reads in between)."""
    made = submit_array(live, request, tasks, now, limit)
    return made if not isinstance(made, int) else (fill_whole(live, made, now), True)
