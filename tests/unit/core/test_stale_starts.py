"""The heap of reserved starts stays about as long as the queue.

Each policy keeps its waiting jobs' reservations in a heap of ``(start, arrival, job
id)`` read lazily: a moved reservation leaves its old entry behind until the clock
passes it. A burst of QoPS decisions on nodes moves most of the queue each time, and
conservative's compression (on nodes and on the pool) moves jobs at each early end.
Before every push went through :func:`berth.core.policies.base.push_starts`, which
bounds the heap, 1,000 jobs submitted at one instant to 256 nodes had left 74,706
entries, every one copied by each what-if.
"""

from __future__ import annotations

import random

from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.policies.base import STALE_STARTS_PER_JOB, next_reserved_start
from berth.core.policies.conservative import Conservative
from berth.core.policies.node_deadline import NodeDeadline
from berth.core.policies.nodes import NodeBackfill
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape

NODES = {f"n{i}": {"cpus": 8, "mem_gb": 32} for i in range(6)}


def slots_job(rng: random.Random, job_id: int, now: int, deadline: int | None = None) -> Job:
    per_cpu = rng.choice([1, 2, 4])
    shape = Shape(rng.randint(1, 12), {"cpus": per_cpu, "mem_gb": 2 * per_cpu})
    return Job(job_id, now, rng.randint(60, 3600), {}, deadline=deadline, shape=shape)


def bounded(policy: NodeBackfill) -> bool:
    """The heap is within twice its bound (it is checked as entries are pushed; jobs
    that start in between shrink the queue first), and its earliest live entry is the
    queue's first reservation."""
    starts = [e.start for e in policy.waiting.values() if e.start is not None]
    limit = 2 * (STALE_STARTS_PER_JOB * len(policy.waiting) + 64)
    first = next_reserved_start(policy._starts, policy.waiting)
    return len(policy._starts) <= limit and first == (min(starts) if starts else None)


def test_a_burst_of_deadline_decisions_leaves_few_stale_starts() -> None:
    rng = random.Random(3)
    policy = NodeDeadline("qops", NODES)
    for job_id in range(1, 301):
        # (deadlines in any order: each new job goes ahead of some in EDF order)
        policy.submit(slots_job(rng, job_id, 0, deadline=rng.randint(10**6, 10**7)), 0)
        assert bounded(policy), job_id
    assert len(policy.waiting) > 200  # (the burst did queue: the bound was tested)


def test_compressions_leave_few_stale_starts() -> None:
    rng = random.Random(5)
    policy = NodeBackfill("conservative", NODES)
    for job_id in range(1, 301):
        policy.submit(slots_job(rng, job_id, 0), 0)
    running = [s.job_id for s in policy.schedule(0)]
    moved = 0
    for now in range(1, 400):
        if not running:
            break
        before = {j: e.start for j, e in policy.waiting.items()}
        policy.complete([running.pop(0)], now)  # each one ends early: the rest move up
        moved += sum(policy.waiting[j].start != s for j, s in before.items() if j in policy.waiting)
        running += [s.job_id for s in policy.schedule(now)]
        assert bounded(policy), now
    assert moved > STALE_STARTS_PER_JOB * 300 + 64  # (enough moves to pass the bound)


def test_compressions_on_the_pool_leave_few_stale_starts() -> None:
    rng = random.Random(7)
    policy = make_policy("conservative", ResourceSpace({"cpus": 48}))
    assert isinstance(policy, Conservative)
    for job_id in range(1, 301):
        cpus = rng.choice([1, 2, 4, 8, 16])
        policy.submit(Job(job_id, 0, rng.randint(60, 3600), {"cpus": cpus}), 0)
    running = [s.job_id for s in policy.schedule(0)]
    for now in range(1, 400):
        if not running:
            break
        policy.complete([running.pop(0)], now)  # each one ends early: the rest move up
        running += [s.job_id for s in policy.schedule(now)]
        waiting = policy.waiting
        first = next_reserved_start(policy._starts, waiting)
        assert len(policy._starts) <= 2 * (STALE_STARTS_PER_JOB * len(waiting) + 64), now
        assert first == min(
            (e.start for e in waiting.values() if e.start is not None), default=None
        )
    assert policy.moved_up > STALE_STARTS_PER_JOB * 300 + 64  # (enough moves to pass the bound)
