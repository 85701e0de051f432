"""The reproduction pages' ordinal claims still hold, on reduced experiments.

Each page in ``docs/results/`` states claims about orderings (who beats whom, in how
many months) measured on the full experiments (``make reproduce``). These replays are
small enough for ``make test`` and large enough that the orderings are far from noise,
so a change to a policy that breaks a page's claim fails here, not months later. Zhou,
Brent and Walsh's claims are checked in ``test_gang_claims.py``.
"""

from __future__ import annotations

from functools import cache

import pytest

from berth.emulate.run import emulate
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.emulate.workload import Workload
from berth.runtime.paths import find_shared_trace


@cache
def trace(name: str) -> Workload:
    path = find_shared_trace(name)
    if path is None:
        pytest.skip(f"{name} is not in ../shared/traces")
    return read_workload(path)


def kth() -> Workload:
    return trace("KTH-SP2-1996-2.1-cln.swf.gz")


def monthly(policy: str, processors: int, **options: object) -> list[dict[str, object]]:
    """KTH replayed month by month from an empty machine with the users' estimates."""
    results = emulate(kth(), policy, capacity={"cpus": processors}, slice_by="month",
                      policy_options=options)  # fmt: skip
    return [dict(r.report) for r in results]


def number(value: object) -> float:
    assert isinstance(value, int | float)
    return float(value)


def yearly_wait(months: list[dict[str, object]]) -> float:
    ran = [number(m["jobs"]) - number(m["rejected"]) for m in months]
    waited = sum(number(m["avg_wait"]) * n for m, n in zip(months, ran, strict=True))
    return waited / sum(ran)


def test_feitelson_weil_neither_easy_nor_conservative_dominates_month_by_month() -> None:
    # feitelson-weil.md, Table 2: EASY has the lower slowdown in 5 of the 12 months.
    easy = monthly("easy", 100)
    conservative = monthly("conservative", 100)
    easy_wins = sum(
        number(e["avg_bounded_slowdown"]) < number(c["avg_bounded_slowdown"])
        for e, c in zip(easy, conservative, strict=True)
    )
    assert len(easy) == 12
    assert 3 <= easy_wins <= 9, f"EASY better in {easy_wins} of 12 months"


def test_talby_feitelson_slack_cuts_the_wait_in_most_months() -> None:
    # talby-feitelson.md, Table 1 on 128 processors: 13.3 % shorter yearly wait than
    # conservative, shorter in 11 of 12 months.
    conservative = monthly("conservative", 128)
    awt = yearly_wait(conservative)
    slack = monthly("slack", 128, heuristic="ast", slack_factor=3, awt=awt)
    better = sum(
        number(s["avg_wait"]) < number(c["avg_wait"])
        for s, c in zip(slack, conservative, strict=True)
    )
    assert better >= 9, f"slack better in {better} of 12 months"
    assert yearly_wait(slack) < 0.95 * awt


def test_qops_keeps_every_deadline_and_costs_utilization_against_easy() -> None:
    # qops.md: no admitted job misses its deadline; at S = 0.2 admission control costs
    # utilization against EASY.
    ctc = trace("CTC-SP2-1996-3.1-cln.swf.gz")
    reports = {}
    for policy in ("qops", "msb", "mrt", "easy"):
        scenario = Scenario(first=1500, estimates="exact", load=1.6, seed=0,
                            stringency=None if policy == "easy" else 0.2)  # fmt: skip
        (result,) = emulate(ctc, policy, capacity={"cpus": 430}, scenario=scenario)
        reports[policy] = result.report
    for policy in ("qops", "msb", "mrt"):
        report = reports[policy]
        assert report["deadline_misses"] == 0
        assert report["promise_misses"] == 0
        assert number(report["rejected"]) > 0, "load 1.6 at S = 0.2 forces rejections"
        utilization = number(dict(report["utilization"])["cpus"])  # type: ignore[call-overload]
        easy = number(dict(reports["easy"]["utilization"])["cpus"])  # type: ignore[call-overload]
        assert utilization < easy - 0.05, f"{policy} uses less of the machine than EASY"
