"""The emulator pauses the cyclic collector while it reads and replays: it must then
build no reference cycle, or memory would only be given back when the collector runs."""

from __future__ import annotations

import gc
import random

from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.policies.node_registry import make_node_policy
from berth.core.policies.node_schedule import NODE_POLICIES
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob
from berth.service.collector import collector_paused

POOL_POLICIES = ("fcfs", "easy", "conservative", "qops", "slack")


def _jobs(count: int = 400) -> list[TraceJob]:
    rng = random.Random(7)
    jobs, now = [], 0
    for job_id in range(1, count + 1):
        now += rng.randint(0, 30)
        cpus = rng.choice((1, 2, 4, 8, 16))
        resources = {"cpus": cpus, "mem_gb": 4 * cpus}
        if rng.random() < 0.2:
            resources["gpus"] = rng.choice((1, 2))
        estimate = rng.choice((60, 300, 900))
        deadline = now + 4 * estimate if rng.random() < 0.3 else None
        job = Job(job_id, now, estimate, resources, deadline=deadline)
        jobs.append(TraceJob(job, rng.randint(1, estimate + 60)))
    return jobs


def _garbage_cycles_after(run: object) -> int:
    gc.collect()
    with collector_paused():
        assert callable(run)
        run()
    return gc.collect()


def test_replays_leave_no_reference_cycle() -> None:
    jobs = _jobs()
    totals = ResourceSpace({"cpus": 64, "mem_gb": 256, "gpus": 4})
    nodes = {f"n{i}": {"cpus": 16, "mem_gb": 64} for i in range(3)}
    nodes |= {"g0": {"cpus": 16, "mem_gb": 64, "gpus": 4}}
    for name in POOL_POLICIES:
        assert _garbage_cycles_after(lambda n=name: replay(jobs, make_policy(n, totals))) == 0, name
    for name in NODE_POLICIES:
        found = _garbage_cycles_after(lambda n=name: replay(jobs, make_node_policy(n, nodes)))
        assert found == 0, name


def test_the_collector_is_left_as_it_was() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
