"""Slack-based priority backfilling (Talby & Feitelson 1999) on hand-made cases."""

from __future__ import annotations

import math

import pytest

from berth.core.decisions import Reject, Reserve
from berth.core.model import Job
from berth.core.policies import make_policy
from berth.core.policies.slack import HEURISTICS, SlackBackfilling
from berth.core.resources import ResourceSpace
from berth.emulate.run import emulate
from berth.emulate.samples import KTH_SAMPLE
from berth.emulate.traces import read_workload
from tests.support.builders import run, trace_job


def _busy_cluster(**options: object) -> SlackBackfilling:
    """10 cpus: job 1 holds all of them for [0, 100); job 2 (6 cpus, 1,000 s) waits."""
    policy = SlackBackfilling(ResourceSpace({"cpus": 10}), **options)  # type: ignore[arg-type]
    policy.submit(Job(1, 0, 100, {"cpus": 10}), 0)
    policy.schedule(0)
    decision = policy.submit(Job(2, 5, 1000, {"cpus": 6}), 5)
    assert isinstance(decision, Reserve)
    assert decision.start == 100
    return policy


def _starts(policy: SlackBackfilling) -> dict[int, int | None]:
    return {job_id: entry.start for job_id, entry in policy.waiting.items()}


def test_new_job_pushes_a_waiting_job_within_its_slack_when_that_is_cheaper() -> None:
    policy = _busy_cluster()
    decision = policy.submit(Job(3, 6, 50, {"cpus": 5}), 6)
    # Conservative would place job 3 at 1,100; putting it at 100 and delaying job 2 by
    # 50 s costs 0.5 * 94 (its own wait) + about 20 (job 2's delay): far cheaper.
    assert isinstance(decision, Reserve)
    assert decision.start == 100
    assert _starts(policy) == {2: 150, 3: 100}
    assert policy.planned_bound(2) == 4854  # unchanged by the push


def test_price_terms_follow_the_paper() -> None:
    policy = _busy_cluster()
    job_two = policy.waiting[2]
    state = policy.state[2]
    # Scheduler priority after placement: waited 95 s of 2 * AWT; user = political = 0.5.
    scheduler = 95 / (2 * 2401)
    assert state.priority == pytest.approx((0.5 + 0.5 + scheduler) / 3)
    assert state.initial == pytest.approx((1 - state.priority) * 3 * 2401)
    assert state.bound == 100 + math.floor(state.initial)
    # cost = n * t * (p_i / p) * (s0 / s), n the share of the cluster (6 / 10).
    remaining = state.bound - 100
    expected = 0.6 * 50 * (state.priority / 0.5) * (state.initial / remaining)
    assert policy.cost(job_two, 150, 0.5) == pytest.approx(expected)
    assert policy.cost(job_two, 100, 0.5) == 0.0
    assert policy.cost(job_two, 90, 0.5) == pytest.approx(-expected / 5)


def test_no_job_is_pushed_past_its_slack() -> None:
    # AWT 10 s gives job 2 about 20 s of slack: the 50 s push is infinitely expensive.
    policy = _busy_cluster(awt=10)
    decision = policy.submit(Job(3, 6, 50, {"cpus": 5}), 6)
    assert isinstance(decision, Reserve)
    assert decision.start == 1100
    assert _starts(policy) == {2: 100, 3: 1100}


def test_zero_slack_factor_behaves_like_conservative_on_a_trace() -> None:
    jobs = [
        trace_job(i, submit=i * 7 % 50, runtime=5 + i * 13 % 60, cpus=1 + i % 4)
        for i in range(1, 40)
    ]
    slack = run(jobs, "slack", {"cpus": 5}, slack_factor=0)
    conservative = run(jobs, "conservative", {"cpus": 5})
    for record in slack.values():
        # Nobody can be pushed, so every job starts no later than its first reservation.
        assert record.start is not None
        assert record.guarantee is not None
        assert record.start <= record.guarantee
    assert (
        sum(r.start or 0 for r in slack.values())
        <= sum(r.start or 0 for r in conservative.values()) + 1000
    )  # compression order differs (AST, not arrival), the schedules stay close


def test_over_quota_job_has_unbounded_slack_and_never_pushes_anyone() -> None:
    policy = _busy_cluster()
    over = policy.submit(Job(3, 6, 50, {"cpus": 5}, priority={"political": -math.inf}), 6)
    assert isinstance(over, Reserve)
    assert over.start == 1100
    assert over.guarantee is None
    # A normal job may push the over-quota job for free, as far as it likes.
    normal = policy.submit(Job(4, 7, 2000, {"cpus": 5}), 7)
    assert isinstance(normal, Reserve)
    assert policy.cost(policy.waiting[3], 5000, 0.5) == 0.0


def test_invalid_priorities_are_rejected_with_the_limit() -> None:
    policy = SlackBackfilling(ResourceSpace({"cpus": 4}))
    decision = policy.submit(Job(1, 0, 10, {"cpus": 1}, priority={"user": 1.5}), 0)
    assert isinstance(decision, Reject)
    assert decision.reason == "user priority must be in [0, 1], got 1.5"
    decision = policy.submit(Job(2, 0, 10, {"cpus": 1}, priority={"political": -1.0}), 0)
    assert isinstance(decision, Reject)
    assert "political priority must be in [0, 1] or -inf" in decision.reason


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"heuristic": "xyz"}, "slack heuristic must be one of ast, aat, du, dc, dp"),
        ({"alpha_u": 2}, "alpha_u must be in [0.0, 1.0], got 2"),
        ({"awt": 0}, "awt must be > 0.0, got 0"),
        ({"slack_factor": "x"}, "slack_factor must be a number, got 'x'"),
    ],
)
def test_bad_options_name_the_option_and_the_limit(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        make_policy("slack", ResourceSpace({"cpus": 4}), **options)


def _queue(heuristic: str) -> SlackBackfilling:
    """Three waiting jobs behind a full machine, with distinct arrival, size and priority."""
    policy = SlackBackfilling(ResourceSpace({"cpus": 10}), heuristic=heuristic, awt=1e6)
    policy.submit(Job(1, 0, 100, {"cpus": 10}), 0)
    policy.schedule(0)
    policy.submit(Job(2, 1, 10, {"cpus": 10}, priority={"user": 0.0}), 1)  # at 100
    policy.submit(Job(3, 2, 500, {"cpus": 10}, priority={"user": 1.0}), 2)  # at 110
    policy.submit(Job(4, 3, 20, {"cpus": 2}, priority={"user": 0.5}), 3)
    return policy


@pytest.mark.parametrize(
    ("heuristic", "order"),
    [
        ("ast", [2, 4, 3]),  # by reserved start: 4 took 110 and pushed 3 to 130
        ("aat", [2, 3, 4]),  # by arrival
        ("du", [3, 2, 4]),  # by share x estimate: 500, 10, 4
        ("dp", [3, 4, 2]),  # by priority: user 1.0, 0.5, 0.0
        ("dc", [3, 2, 4]),  # by cost of one second, n * p_i / p: 1.0, 0.33, 0.13
    ],
)
def test_permutation_heuristics_order_the_delayed_jobs(heuristic: str, order: list[int]) -> None:
    policy = _queue(heuristic)
    entries = sorted(policy.waiting.values(), key=lambda e: (e.start, e.job.id))
    assert [e.job.id for e in policy.permutation(entries, 0.5)] == order


def test_removal_compresses_the_schedule() -> None:
    policy = _queue("ast")
    assert _starts(policy) == {2: 100, 3: 130, 4: 110}
    assert policy.withdraw(2, 4)
    assert _starts(policy) == {3: 120, 4: 100}  # both moved up, in AST order
    assert 2 not in policy.state


@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_every_heuristic_replays_the_kth_sample_within_its_bounds(heuristic: str) -> None:
    (result,) = emulate(read_workload(KTH_SAMPLE), "slack", policy_options={"heuristic": heuristic})
    for record in result.records:
        assert record.start is not None
        assert record.guarantee is not None
        assert record.start <= record.guarantee


def test_k_resource_job_size_is_its_largest_share() -> None:
    policy = SlackBackfilling(ResourceSpace({"cpus": 16, "mem": 32}))
    policy.submit(Job(1, 0, 100, {"cpus": 16}), 0)
    policy.schedule(0)
    policy.submit(Job(2, 0, 100, {"cpus": 4, "mem": 24}), 0)
    assert policy.state[2].area == pytest.approx(0.75 * 100)
