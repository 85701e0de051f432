"""What a node policy says is free now: kept as jobs start, are adopted and end."""

from __future__ import annotations

from berth.core.model import Job
from berth.core.policies.node_registry import make_node_policy

NODES = {"a": {"cpus": 8, "mem_gb": 32}, "b": {"cpus": 8, "mem_gb": 32}}


def test_free_follows_jobs_adopted_started_and_ended() -> None:
    policy = make_node_policy("easy", NODES)
    space = policy.space
    everything = space.pack({"cpus": 16, "mem_gb": 64})
    assert policy.free == everything
    adopted = Job(1, 0, 100, {"cpus": 3, "mem_gb": 4})
    policy.adopt_running(adopted, 0, 5, placement={"a": {"cpus": 3, "mem_gb": 4}})
    assert policy.free == everything - space.pack({"cpus": 3, "mem_gb": 4})
    policy.submit(Job(2, 5, 50, {"cpus": 8, "mem_gb": 8}), 5)
    assert [start.job_id for start in policy.schedule(5)] == [2]
    assert policy.free == everything - space.pack({"cpus": 11, "mem_gb": 12})
    policy.complete([1], 20)
    assert policy.free == everything - space.pack({"cpus": 8, "mem_gb": 8})
    policy.complete([2], 30)
    assert policy.free == everything
