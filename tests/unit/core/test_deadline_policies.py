"""Hand-checked cases for QoPS, MSB and MRT: each algorithm's branches."""

from __future__ import annotations

import pytest

from berth.core.decisions import Reject, Reserve
from berth.core.model import Job
from berth.core.policies.deadline import ARTIFICIAL_DEADLINE_FLOOR, DeadlinePolicy
from berth.core.policies.mrt import Mrt
from berth.core.policies.msb import Msb
from berth.core.policies.node_deadline import NodeDeadline
from berth.core.policies.qops import Qops, insertion_points
from berth.core.resources import ResourceSpace

THREE = ResourceSpace({"cpus": 3})
ONE = ResourceSpace({"cpus": 1})


def _job(job_id: int, estimate: int, cpus: int, deadline: int | None, submit: int = 0) -> Job:
    return Job(job_id, submit, estimate, {"cpus": cpus}, deadline=deadline)


def _submit_all(policy: DeadlinePolicy, jobs: list[Job]) -> list[Reserve | Reject | None]:
    decisions = []
    for job in jobs:
        decisions.append(policy.submit(job, job.submit))
        policy.schedule(job.submit)
    return decisions


def _starts(policy: DeadlinePolicy) -> dict[int, int | None]:
    return {job_id: entry.start for job_id, entry in policy.waiting.items()}


@pytest.mark.parametrize(
    ("n", "points"),
    [(0, [0]), (1, [0, 1]), (2, [0, 1, 2]), (5, [0, 3, 4, 5]), (8, [0, 4, 6, 7, 8])],
)
def test_qops_tries_positions_0_half_three_quarters_and_the_end(n: int, points: list[int]) -> None:
    assert insertion_points(n) == points


# Three cpus, all jobs submitted at 0: (id, estimate, cpus, deadline).
K_FACTOR_CASE = [_job(1, 2, 3, 3), _job(2, 8, 1, 19), _job(3, 5, 3, 15), _job(4, 5, 1, 7)]


def test_qops_repairs_a_violation_when_the_k_factor_allows_it() -> None:
    # Insertion point 0 for job 4: job 4 at 2 (ends 7), then EDF places job 3 at 7 and
    # job 2 at 12, which ends at 20 > 19: a violation at T = 12. The repair takes out the
    # jobs placed in [mid(2, 12) = 7, 12] (job 3), puts job 2 first: job 2 at 2 (beside
    # job 4), then job 3 at 10 (ends 15 <= 15). Every deadline holds.
    policy = Qops(THREE, k_factor=1)
    decisions = _submit_all(policy, K_FACTOR_CASE)
    assert decisions[3] == Reserve(
        4, 2, 2, "admitted by qops: every admitted deadline holds (deadline t=7)", completion=7
    )
    assert _starts(policy) == {2: 2, 3: 10, 4: 2}


def test_qops_rejects_when_violations_exceed_the_k_factor_and_keeps_the_schedule() -> None:
    policy = Qops(THREE, k_factor=0)
    decisions = _submit_all(policy, K_FACTOR_CASE[:3])
    assert all(isinstance(d, Reserve) for d in decisions)
    before = (policy.profile.steps(), _starts(policy))
    rejected = policy.submit(K_FACTOR_CASE[3], 0)
    assert rejected == Reject(
        4,
        "admitting it would break the deadline t=19 of admitted job 2 (it would complete at t=20)",
    )
    assert (policy.profile.steps(), _starts(policy)) == before
    assert 4 not in policy.deadline_of


BACKTRACK_CASE = [_job(1, 4, 1, 10), _job(2, 2, 3, 13), _job(3, 10, 1, 13)]


def test_mrt_backtracks_to_the_next_candidate() -> None:
    # EDF ties jobs 2 and 3 (deadline 13); job 2 first leaves job 3 unable to finish by 13
    # (it could only start at 6), so the partial schedule is not strongly feasible. The
    # next candidate, job 3 at 0, leaves room for job 2 at 10 (ends 12 <= 13).
    policy = Mrt(THREE, max_backtracks=1)
    decisions = _submit_all(policy, BACKTRACK_CASE)
    assert isinstance(decisions[2], Reserve)
    assert decisions[2].start == 0
    assert _starts(policy) == {2: 10}  # job 3 started at 0


def test_mrt_rejects_past_the_backtrack_limit() -> None:
    policy = Mrt(THREE, max_backtracks=0)
    decisions = _submit_all(policy, BACKTRACK_CASE)
    assert decisions[2] == Reject(
        3,
        "its deadline t=13 cannot be met: it would complete at t=16 at best beside the admitted jobs",
    )
    assert _starts(policy) == {2: 4}


def _msb_with_job_2_reserved_at_10(deadline: int) -> Msb:
    """One cpu: job 1 runs from 0 to 10, job 2 (5 s, ``deadline``) is reserved at 10."""
    policy = Msb(ONE)
    _submit_all(policy, [_job(1, 10, 1, 50), _job(2, 5, 1, deadline, submit=1)])
    return policy


def test_msb_keeps_the_order_and_picks_a_feasible_insertion_point() -> None:
    policy = _msb_with_job_2_reserved_at_10(deadline=15)
    # Job 3 (deadline 25): before job 2 it would push job 2 past 15; after it, it ends at 20.
    decision = policy.submit(_job(3, 5, 1, 25, submit=2), 2)
    assert isinstance(decision, Reserve)
    assert decision.start == 15
    # Job 4 (deadline 14) fits nowhere: after job 3 it misses its own deadline, and
    # before job 2 it would make job 2 miss its one.
    rejected = policy.submit(_job(4, 2, 1, 14, submit=3), 3)
    assert isinstance(rejected, Reject)
    assert _starts(policy) == {2: 10, 3: 15}


def test_msb_prefers_the_cheapest_schedule() -> None:
    # Job 3 (2 s, deadline 30) can go first (delaying job 2 by 2 s: price 7 + 2 = 9) or
    # last (price 15 - 3 = 12): the cheaper is first.
    policy = _msb_with_job_2_reserved_at_10(deadline=40)
    decision = policy.submit(_job(3, 2, 1, 30, submit=3), 3)
    assert isinstance(decision, Reserve)
    assert decision.start == 10
    assert _starts(policy) == {2: 12, 3: 10}


@pytest.mark.parametrize("policy_type", [Qops, Msb, Mrt])
def test_an_impossible_deadline_is_refused_up_front(policy_type: type[DeadlinePolicy]) -> None:
    policy = policy_type(ONE)
    assert policy.submit(_job(1, 10, 1, 5), 0) == Reject(
        1, "deadline t=5 is before now (t=0) + its estimate (10 s)"
    )
    assert policy.submit(_job(2, 1, 2, 50), 0) == Reject(
        2, "requests 2 cpus but the cluster has only 1"
    )


def test_jobs_without_deadline_get_the_artificial_one() -> None:
    policy = Qops(ONE, relaxation=5)
    short = policy.submit(_job(1, 60, 1, None, submit=100), 100)
    long = policy.submit(_job(2, 100_000, 1, None, submit=100), 100)
    assert isinstance(short, Reserve)
    assert isinstance(long, Reserve)
    assert short.completion == 100 + ARTIFICIAL_DEADLINE_FLOOR
    assert long.completion == 100 + 5 * 100_000
    assert short.reason.endswith(f"(artificial deadline t={100 + ARTIFICIAL_DEADLINE_FLOOR})")


def test_llf_orders_by_latest_start_and_bad_settings_are_refused() -> None:
    policy = Qops(THREE, heuristic="llf")
    _submit_all(policy, [_job(1, 5, 1, 100), _job(2, 50, 1, 120)])
    key = policy.order_key()
    entries = sorted(policy.waiting.values(), key=key)
    assert [e.job.id for e in entries] == sorted(policy.waiting)  # 2's latest start is 70
    with pytest.raises(ValueError, match=r"heuristic must be one of edf, llf"):
        Qops(THREE, heuristic="fifo")
    with pytest.raises(ValueError, match=r"k_factor must be >= 0"):
        Qops(THREE, k_factor=-1)
    with pytest.raises(ValueError, match=r"max_backtracks must be >= 0"):
        Mrt(THREE, max_backtracks=-1)


@pytest.mark.parametrize("on_nodes", [False, True])
def test_msb_reads_the_waiting_jobs_by_reserved_start_not_arrival(on_nodes: bool) -> None:
    # Job 3 arrives after job 2 but is placed before it (10 and 12). For job 4 (1 s,
    # deadline 100) MSB's options are the positions in start order: first (4 at 10, 3 at
    # 11, 2 at 13: price 7 + 1 + 1 = 9), between them (4 at 12, 2 at 13: 10) or last (4
    # at 17: 14). Read in arrival order, "between" would take out job 3 instead and put
    # job 4 in its gap (price 8, job 2 staying at 12). The same on one one-cpu node.
    policy: DeadlinePolicy | NodeDeadline = (
        NodeDeadline("msb", {"n0": {"cpus": 1}}) if on_nodes else Msb(ONE)
    )
    for job in [_job(1, 10, 1, 50), _job(2, 5, 1, 50, submit=1), _job(3, 2, 1, 13, submit=2)]:
        assert isinstance(policy.submit(job, job.submit), Reserve)
        policy.schedule(job.submit)
    assert {i: e.start for i, e in policy.waiting.items()} == {2: 12, 3: 10}
    assert [e.job.id for e in policy.queue().jobs] == [2, 3]  # (as they came)
    decision = policy.submit(_job(4, 1, 1, 100, submit=3), 3)
    assert isinstance(decision, Reserve)
    assert {i: e.start for i, e in policy.waiting.items()} == {2: 13, 3: 11, 4: 10}
