"""Hand-checked schedules for FCFS, EASY and conservative backfilling (the golden cases)."""

from __future__ import annotations

from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.resources import ResourceSpace
from tests.support.builders import run, starts, trace_job


def test_fcfs_never_lets_a_later_job_pass_the_blocked_head() -> None:
    jobs = [
        trace_job(1, 0, runtime=10, cpus=3),
        trace_job(2, 1, runtime=5, cpus=2),  # blocked until 10
        trace_job(3, 2, runtime=1, cpus=1),  # would fit, but FCFS waits
    ]
    assert starts(run(jobs, "fcfs", {"cpus": 4})) == {1: 0, 2: 10, 3: 10}


def test_easy_backfills_counting_every_job_that_ends_at_the_shadow_time() -> None:
    # Two running jobs end together at 5: the head (3 cpus) fits once both have ended,
    # and the extra is 4 - 3 = 1 cpu. Job 4 (1 cpu, runs past the shadow) fits in the
    # extra and starts now. Counting only one of the two tied jobs would give extra 0.
    jobs = [
        trace_job(1, 0, runtime=5, cpus=1),
        trace_job(2, 0, runtime=5, cpus=1),
        trace_job(3, 1, runtime=4, cpus=1),  # starts at 1, ends at 5 too
        trace_job(4, 2, runtime=20, cpus=4),  # head from 2: waits for everything
        trace_job(5, 3, runtime=20, cpus=1),  # ends after the shadow: no extra (4 - 4)
    ]
    records = run(jobs, "easy", {"cpus": 4})
    assert starts(records) == {1: 0, 2: 0, 3: 1, 4: 5, 5: 25}

    tied = [
        trace_job(1, 0, runtime=5, cpus=1),
        trace_job(2, 0, runtime=5, cpus=1),
        trace_job(3, 1, runtime=10, cpus=3),  # head: free 2 + 1 at 5 is 3 -> shadow 5
        trace_job(4, 2, runtime=30, cpus=1),  # extra at 5 is 2 + 1 + 1 - 3 = 1: backfills
        trace_job(5, 3, runtime=30, cpus=1),  # the extra is used up: waits
    ]
    records = run(tied, "easy", {"cpus": 4})
    assert starts(records) == {1: 0, 2: 0, 3: 5, 4: 2, 5: 15}
    assert records[4].reason == "backfilled: fits in the extra resources beside the head at t=5"


def test_easy_backfills_a_short_job_that_ends_by_the_shadow() -> None:
    jobs = [
        trace_job(1, 0, runtime=10, cpus=3),
        trace_job(2, 1, runtime=5, cpus=4),  # head, shadow 10, extra 0
        trace_job(3, 2, runtime=8, cpus=1),  # ends at 10 <= shadow: backfills
        trace_job(4, 3, runtime=8, cpus=1),  # would end at 11: must wait
    ]
    records = run(jobs, "easy", {"cpus": 4})
    assert starts(records) == {1: 0, 2: 10, 3: 2, 4: 15}
    assert records[3].reason == "backfilled: ends by the head's shadow time t=10"


def test_easy_shadow_uses_estimates_and_overrunning_jobs_are_killed() -> None:
    jobs = [
        trace_job(1, 0, runtime=50, estimate=10, cpus=4),  # killed at 10
        trace_job(2, 1, runtime=5, cpus=4),
    ]
    records = run(jobs, "easy", {"cpus": 4})
    assert (records[1].end, records[1].status) == (10, "killed")
    assert "killed at its estimate of 10 s (runtime 50 s)" in records[1].reason
    assert starts(records)[2] == 10


def test_conservative_compression_moves_jobs_up_and_never_past_their_guarantee() -> None:
    jobs = [
        trace_job(1, 0, runtime=2, estimate=10, cpus=2),  # expected to end at 10, ends at 2
        trace_job(2, 0, runtime=20, cpus=2),  # holds 2 cpus until 20
        trace_job(3, 1, runtime=5, cpus=4),  # needs the whole machine: reserved at 20
        trace_job(4, 1, runtime=5, cpus=2),  # fits in the hole 10..20 beside job 2
    ]
    records = run(jobs, "conservative", {"cpus": 4})
    assert {i: records[i].guarantee for i in (1, 2, 3, 4)} == {1: 0, 2: 0, 3: 20, 4: 10}
    # Job 1 ends early at 2: compression moves job 4 up to 2; job 3 still waits for job 2.
    assert starts(records) == {1: 0, 2: 0, 3: 20, 4: 2}
    assert records[4].reason == "its reservation at t=2 is reached"


def test_conservative_rejects_what_can_never_run_and_keeps_going() -> None:
    jobs = [trace_job(1, 0, runtime=5, cpus=5), trace_job(2, 0, runtime=5, gpus=1)]
    records = run(jobs, "conservative", {"cpus": 4})
    assert records[1].status == "rejected"
    assert records[1].reason == "requests 5 cpus but the cluster has only 4"
    assert records[2].reason == "unknown resource 'gpus' (this cluster has: cpus)"


def test_a_policy_is_a_pure_function_of_its_inputs() -> None:
    space = ResourceSpace({"cpus": 4, "mem": 8})
    outcomes = []
    for _ in range(2):
        policy = make_policy("conservative", space)
        decisions = [policy.submit(Job(i, 0, 5, {"cpus": 2, "mem": 3}), 0) for i in range(4)]
        outcomes.append((decisions, policy.schedule(0), policy.next_wakeup()))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][2] == 5
