"""Reproduce Feitelson & Mu'alem Weil (1998), Tables 2 and 3, on the cleaned KTH trace.

Table 2: every calendar month of the KTH trace (Europe/Stockholm) replayed separately
from an empty 100-processor machine with the users' estimates: average bounded slowdown
under EASY and conservative backfilling. Table 3: the whole trace with estimates drawn
uniformly from [r, F*r] for F in {1, 4, 11, 31, 101, 301} (mean over ``--seeds`` seeds,
with the spread) and with the users' estimates.

    .venv/bin/python experiments/feitelson_weil.py          # or: make reproduce

It rewrites the generated part of ``docs/results/feitelson-weil.md`` (between the
BEGIN/END GENERATED markers; the discussion around them is kept) and the plot
``docs/results/feitelson-weil.png``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from berth.emulate.run import emulate
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.emulate.workload import Workload
from berth.runtime.paths import find_shared_trace

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results" / "feitelson-weil.md"
PLOT = ROOT / "docs" / "results" / "feitelson-weil.png"
BEGIN, END = "<!-- BEGIN GENERATED -->", "<!-- END GENERATED -->"

#: Table 2 of the paper: month -> (jobs, EASY, conservative).
PAPER_TABLE_2 = {
    "1996-09": (86, 2, 2),
    "1996-10": (2377, 93, 76),
    "1996-11": (1988, 128, 135),
    "1996-12": (2294, 86, 124),
    "1997-01": (2899, 97, 81),
    "1997-02": (2908, 122, 134),
    "1997-03": (2078, 104, 118),
    "1997-04": (2820, 83, 92),
    "1997-05": (4061, 67, 60),
    "1997-06": (2694, 37, 31),
    "1997-07": (2160, 32, 34),
    "1997-08": (1925, 50, 57),
}
#: Table 3 of the paper: estimates -> (EASY, conservative).
PAPER_TABLE_3 = {
    "1": (62, 61),
    "4": (57, 53),
    "11": (51, 44),
    "31": (57, 45),
    "101": (62, 57),
    "301": (59, 52),
    "users": (81, 84),
}
POLICIES = ("easy", "conservative")


def _bsld(report: dict[str, object]) -> float:
    value = report["avg_bounded_slowdown"]
    assert isinstance(value, float)
    return value


def table_2(trace: Path) -> list[tuple[str, int, float, float]]:
    workload = read_workload(trace)
    by_policy = {p: emulate(workload, p, slice_by="month") for p in POLICIES}
    rows = []
    for easy, cons in zip(by_policy["easy"], by_policy["conservative"], strict=True):
        rows.append((easy.label, len(easy.records), _bsld(easy.report), _bsld(cons.report)))
    return rows


#: The three ways Table 3's "whole trace" figure could have been computed: one replay of
#: the whole year; every month replayed from an empty machine, averaged over all their
#: jobs; or the same monthly replays, averaged month by month (each month weighs one).
METHODS = ("whole", "months_jobs", "months_mean")
METHOD_LABELS = {
    "whole": "one replay of the year",
    "months_jobs": "monthly replays, mean over jobs",
    "months_mean": "monthly replays, mean of months",
}


def _three_ways(workload: Workload, policy: str, scenario: Scenario) -> dict[str, float]:
    (whole,) = emulate(workload, policy, scenario=scenario)
    months = emulate(workload, policy, scenario=scenario, slice_by="month")
    jobs = sum(len(m.records) for m in months)
    return {
        "whole": _bsld(whole.report),
        "months_jobs": sum(_bsld(m.report) * len(m.records) for m in months) / jobs,
        "months_mean": statistics.fmean(_bsld(m.report) for m in months),
    }


def table_3(trace: Path, seeds: int) -> dict[str, dict[str, dict[str, list[float]]]]:
    """factor -> policy -> method -> one value per seed."""
    workload = read_workload(trace)
    results: dict[str, dict[str, dict[str, list[float]]]] = {}
    scenarios = {
        factor: [Scenario(estimates=f"badness:{factor}", seed=seed)
                 for seed in range(seeds if factor != "1" else 1)]
        for factor in ("1", "4", "11", "31", "101", "301")
    }  # fmt: skip
    scenarios["users"] = [Scenario()]
    for factor, draws in scenarios.items():
        results[factor] = {p: {m: [] for m in METHODS} for p in POLICIES}
        for scenario in draws:
            for policy in POLICIES:
                for method, value in _three_ways(workload, policy, scenario).items():
                    results[factor][policy][method].append(value)
        print(f"  F={factor}: done", file=sys.stderr)
    return results


def _spread(values: list[float]) -> str:
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.0f}"
    return f"{mean:.0f} ({min(values):.0f}–{max(values):.0f})"


def _deviation(badness: dict[str, dict[str, dict[str, list[float]]]], method: str) -> float:
    """Mean absolute relative gap to the paper over Table 3's 14 values, in %."""
    gaps = []
    for factor, by_policy in badness.items():
        for index, policy in enumerate(POLICIES):
            ours = statistics.fmean(by_policy[policy][method])
            gaps.append(abs(ours / PAPER_TABLE_3[factor][index] - 1))
    return 100 * statistics.fmean(gaps)


def render(
    rows: list[tuple[str, int, float, float]],
    badness: dict[str, dict[str, dict[str, list[float]]]],
    seeds: int,
    seconds: float,
) -> str:
    out = [
        "### Table 2: KTH month by month, average bounded slowdown (users' estimates)",
        "",
        "| month | jobs (ours) | jobs (paper) | EASY (ours) | EASY (paper) | cons (ours) | cons (paper) | better (ours) | better (paper) |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    agree = 0
    counts = {"ours": {"EASY": 0, "cons": 0, "tie": 0}, "paper": {"EASY": 0, "cons": 0, "tie": 0}}
    for month, jobs, easy, cons in rows:
        p_jobs, p_easy, p_cons = PAPER_TABLE_2.get(month, (0, 0, 0))
        ours = (
            "EASY" if round(easy) < round(cons) else "cons" if round(cons) < round(easy) else "tie"
        )
        paper = "EASY" if p_easy < p_cons else "cons" if p_cons < p_easy else "tie"
        agree += ours == paper
        counts["ours"][ours] += 1
        counts["paper"][paper] += 1
        out.append(
            f"| {month} | {jobs} | {p_jobs} | {easy:.0f} | {p_easy} | {cons:.0f} | {p_cons} "
            f"| {ours} | {paper} |"
        )
    out += [
        "",
        f"The better policy agrees with the paper in {agree} of {len(rows)} months. "
        f"EASY is better in {counts['ours']['EASY']} months here and "
        f"{counts['paper']['EASY']} in the paper; conservative in {counts['ours']['cons']} "
        f"here and {counts['paper']['cons']} in the paper; ties (equal when rounded) "
        f"{counts['ours']['tie']} and {counts['paper']['tie']}.",
        "",
        "### Table 3: whole KTH trace, average bounded slowdown by estimate quality",
        "",
        f"Badness rows: mean over {seeds} seeds (min–max in brackets); F = 1 is exact "
        "estimates and needs one run.",
        "",
        "| estimates | EASY (ours) | EASY (paper) | cons (ours) | cons (paper) |",
        "|---|---:|---:|---:|---:|",
    ]
    for factor, by_policy in badness.items():
        p_easy, p_cons = PAPER_TABLE_3[factor]
        label = "users" if factor == "users" else f"F = {factor}"
        out.append(
            f"| {label} | {_spread(by_policy['easy']['whole'])} | {p_easy} "
            f"| {_spread(by_policy['conservative']['whole'])} | {p_cons} |"
        )
    out += [
        "",
        "#### Whole trace or month by month?",
        "",
        'The same statistics computed the three ways the paper\'s "whole trace" figures '
        "could have been (means over seeds; EASY / conservative):",
        "",
        "| estimates | paper | " + " | ".join(METHOD_LABELS[m] for m in METHODS) + " |",
        "|---|---:|" + "---:|" * len(METHODS),
    ]
    for factor, by_policy in badness.items():
        p_easy, p_cons = PAPER_TABLE_3[factor]
        label = "users" if factor == "users" else f"F = {factor}"
        cells = [
            f"{statistics.fmean(by_policy['easy'][m]):.0f} / "
            f"{statistics.fmean(by_policy['conservative'][m]):.0f}"
            for m in METHODS
        ]
        out.append(f"| {label} | {p_easy} / {p_cons} | " + " | ".join(cells) + " |")
    out.append(
        "| mean gap to the paper | | "
        + " | ".join(f"{_deviation(badness, m):.1f} %" for m in METHODS)
        + " |"
    )
    out += [
        "",
        "![Our numbers beside the paper's](feitelson-weil.png)",
        "",
        f"Generated by `make reproduce` (`experiments/feitelson_weil.py --seeds {seeds}`) "
        f"in {seconds:.0f} s.",
    ]
    return "\n".join(out)


def plot(
    rows: list[tuple[str, int, float, float]],
    badness: dict[str, dict[str, dict[str, list[float]]]],
) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    months = [r[0] for r in rows]
    x = range(len(months))
    left.plot(x, [r[2] for r in rows], "o-", color="tab:blue", label="EASY (Berth)")
    left.plot(x, [r[3] for r in rows], "s-", color="tab:red", label="conservative (Berth)")
    left.plot(x, [PAPER_TABLE_2[m][1] for m in months], "o--", color="tab:blue", alpha=0.5,
              label="EASY (paper)")  # fmt: skip
    left.plot(x, [PAPER_TABLE_2[m][2] for m in months], "s--", color="tab:red", alpha=0.5,
              label="conservative (paper)")  # fmt: skip
    left.set_xticks(list(x), [m[2:] for m in months], rotation=45)
    left.set_ylabel("average bounded slowdown")
    left.set_title("Table 2: KTH, month by month")
    left.legend(fontsize=8)
    factors = [f for f in badness if f != "users"]
    fx = [int(f) for f in factors]
    for policy, colour, marker in (("easy", "tab:blue", "o"), ("conservative", "tab:red", "s")):
        index = 0 if policy == "easy" else 1
        right.plot(fx, [statistics.fmean(badness[f][policy]["whole"]) for f in factors], marker + "-",
                   color=colour, label=f"{policy} (Berth)")  # fmt: skip
        right.plot(fx, [PAPER_TABLE_3[f][index] for f in factors], marker + "--", color=colour,
                   alpha=0.5, label=f"{policy} (paper)")  # fmt: skip
        right.axhline(statistics.fmean(badness["users"][policy]["whole"]), color=colour, linestyle=":",
                      label=f"{policy}, users' estimates (Berth)")  # fmt: skip
    right.set_xscale("log")
    right.set_xlabel("badness factor F (estimates uniform in [r, F·r])")
    right.set_title("Table 3: whole KTH, estimate quality")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(PLOT, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5, help="seeds per badness factor")
    args = parser.parse_args()
    trace = find_shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    if trace is None:
        raise SystemExit("KTH trace not found in ../shared/traces")
    started = time.perf_counter()
    print("Table 2 ...", file=sys.stderr)
    rows = table_2(trace)
    print("Table 3 ...", file=sys.stderr)
    badness = table_3(trace, args.seeds)
    seconds = time.perf_counter() - started
    generated = render(rows, badness, args.seeds, seconds)
    plot(rows, badness)
    page = (
        PAGE.read_text()
        if PAGE.exists()
        else f"# Feitelson & Mu'alem Weil 1998\n\n{BEGIN}\n{END}\n"
    )
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    PAGE.write_text(f"{head}{BEGIN}\n{generated}\n{END}{tail}")
    print(generated)


if __name__ == "__main__":
    main()
