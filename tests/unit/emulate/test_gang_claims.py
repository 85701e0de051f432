"""The reproduction's ordinal claims still hold, on a reduced experiment.

``docs/results/zhou-brent-walsh.md`` checks the paper's claims on 5 sets of 20,000 jobs
(three groups); this runs 3 sets of 2,000 jobs at a light and a heavy load, enough for
the orderings to be far from noise, so a change that breaks a scheme shows up in
``make test`` and not only in ``make reproduce-zhou``.
"""

from __future__ import annotations

import statistics

import pytest

from berth.emulate.gang import replay_gang
from berth.emulate.zhou import PROCESSORS, SLOT_SECONDS, generate_zhou

SCHEMES = ("bc", "br", "brms", "brmms")
CLASSES = (
    "avg_turnaround",
    "avg_turnaround_small",
    "avg_turnaround_medium",
    "avg_turnaround_large",
)


def averaged(load: float) -> dict[str, dict[str, float]]:
    sets = [generate_zhou(load, 2000, seed=seed) for seed in (11, 12, 13)]
    cells = {}
    for scheme in SCHEMES:
        reports = [replay_gang(s.jobs, PROCESSORS, scheme, SLOT_SECONDS).report for s in sets]
        cells[scheme] = {
            key: statistics.fmean(float(str(report[key])) for report in reports)
            for key in (*CLASSES, "n_a")
        }
    return cells


@pytest.mark.parametrize("load", [0.5, 0.9])
def test_the_papers_orderings_hold(load: float) -> None:
    cells = averaged(load)
    for key in CLASSES:
        assert cells["br"][key] < cells["bc"][key], f"BR beats BC on {key}"
        best = min(SCHEMES, key=lambda scheme: cells[scheme][key])
        assert best == "brmms", f"BRMMS has the best {key}"
    assert cells["brms"]["avg_turnaround_small"] > cells["br"]["avg_turnaround_small"]
    assert cells["brmms"]["n_a"] <= cells["br"]["n_a"]
