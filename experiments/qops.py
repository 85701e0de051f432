"""Reproduce Islam et al. (2003): QoPS vs MSB vs MRT deadline admission, and vs EASY /
conservative backfilling, on the first 5,000 jobs of the CTC and SDSC SP2 traces.

Scenarios (exact estimates, load by job duplication, deadlines from an EASY replay):

* all jobs with deadlines, S in {0.2, 0.5}, load 1.0 .. 1.6, CTC and SDSC SP2
  (Figures 4, 5, 7, 8: unadmitted jobs and processor-seconds; Figure 6: utilization);
* CTC with 80 % and 20 % of the jobs given deadlines (Figures 13-16), and the jobs
  without deadlines' response time and slowdown against achieved utilization (Fig. 43).

Every run is cached in ``experiments/results/qops.json`` as it finishes (runs in
parallel on all cores); re-running skips what is cached, ``--render`` only redraws the
page and plots from the cache.

    .venv/bin/python experiments/qops.py            # run what is missing, then render
    .venv/bin/python experiments/qops.py --render   # redraw docs/results/qops.md
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from berth.emulate.run import emulate
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.runtime.main import find_shared_trace
from harness import load_cache, parse_arguments, run_missing, write_generated

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "experiments" / "results" / "qops.json"
PAGE = ROOT / "docs" / "results" / "qops.md"
PLOTS = ROOT / "docs" / "results"

TRACES = {"CTC": "CTC-SP2-1996-3.1-cln.swf.gz", "SDSC": "SDSC-SP2-1998-4.2-cln.swf.gz"}
FIRST = 5000
LOADS = (1.0, 1.2, 1.4, 1.6)
STRINGENCIES = (0.2, 0.5)
DEADLINE_POLICIES = ("qops", "msb", "mrt")
BACKFILL_POLICIES = ("easy", "conservative")


def configurations() -> Iterator[tuple[str, str, float, float, float]]:
    """(trace, policy, load, stringency, deadline fraction), cheapest policies first."""
    for policy in ("qops", "mrt", "easy", "conservative", "msb"):
        for trace in TRACES:
            for load in LOADS:
                if policy in BACKFILL_POLICIES:
                    yield trace, policy, load, 0.0, 0.0
                    continue
                for stringency in STRINGENCIES:
                    yield trace, policy, load, stringency, 1.0
                    if trace == "CTC":
                        for fraction in (0.8, 0.2):
                            yield trace, policy, load, stringency, fraction


def key(config: tuple[str, str, float, float, float]) -> str:
    trace, policy, load, stringency, fraction = config
    return f"{trace}|{policy}|{load}|{stringency}|{fraction}"


def run_one(config: tuple[str, str, float, float, float]) -> tuple[str, dict[str, object]]:
    trace, policy, load, stringency, fraction = config
    path = find_shared_trace(TRACES[trace])
    assert path is not None, f"{TRACES[trace]} not found"
    workload = read_workload(path)
    scenario = Scenario(
        first=FIRST,
        estimates="exact",
        load=load,
        stringency=stringency if policy in DEADLINE_POLICIES else None,
        deadline_fraction=fraction if policy in DEADLINE_POLICIES else 1.0,
        seed=0,
    )
    started = time.perf_counter()
    (result,) = emulate(workload, policy, scenario=scenario)
    report = dict(result.report)
    report["seconds"] = time.perf_counter() - started
    return key(config), report


# ------------------------------------------------------------------------- rendering
def _get(cache: dict[str, dict[str, object]], *config: object) -> dict[str, object] | None:
    return cache.get("|".join(str(c) for c in config))


def _pct(value: object) -> float:
    assert isinstance(value, int | float)
    return 100.0 * value


def _unadmitted(report: dict[str, object], deadline_only: bool) -> tuple[float, float]:
    """(% of jobs not admitted, % of processor-seconds not admitted)."""
    if deadline_only:
        jobs, rejected = report["deadline_jobs"], report["deadline_rejected"]
    else:
        jobs, rejected = report["jobs"], report["rejected"]
    assert isinstance(jobs, int)
    assert isinstance(rejected, int)
    work = report["rejected_resource_seconds"]
    assert isinstance(work, dict)
    return 100.0 * rejected / max(jobs, 1), _pct(work["cpus"])


def _admission_table(
    cache: dict[str, dict[str, object]], trace: str, s: float, frac: float
) -> list[str]:
    rows = [
        "| load | "
        + " | ".join(f"{p} jobs % / proc-s %" for p in DEADLINE_POLICIES)
        + " | misses |",
        "|---|" + "---:|" * len(DEADLINE_POLICIES) + "---:|",
    ]
    for load in LOADS:
        cells, misses = [], 0
        for policy in DEADLINE_POLICIES:
            report = _get(cache, trace, policy, load, s, frac)
            if report is None:
                cells.append("(not run)")
                continue
            jobs, work = _unadmitted(report, deadline_only=frac < 1.0)
            cells.append(f"{jobs:.1f} / {work:.1f}")
            misses += int(str(report["deadline_misses"])) + int(str(report["promise_misses"]))
        rows.append(f"| {load} | " + " | ".join(cells) + f" | {misses} |")
    return rows


def _plot_admission(
    cache: dict[str, dict[str, object]], trace: str, frac: float, name: str
) -> None:
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    for column, s in enumerate(STRINGENCIES):
        for policy, marker in zip(DEADLINE_POLICIES, "osd", strict=True):
            points = [
                (load, _unadmitted(r, frac < 1.0))
                for load in LOADS
                if (r := _get(cache, trace, policy, load, s, frac)) is not None
            ]
            if not points:
                continue
            loads = [p[0] for p in points]
            axes[2 * column].plot(loads, [p[1][0] for p in points], marker + "-", label=policy)
            axes[2 * column + 1].plot(loads, [p[1][1] for p in points], marker + "-", label=policy)
        axes[2 * column].set_title(f"S = {s}: unadmitted jobs (%)")
        axes[2 * column + 1].set_title(f"S = {s}: unadmitted proc-seconds (%)")
    for axis in axes:
        axis.set_xlabel("load factor")
        axis.legend(fontsize=8)
    what = "all jobs with deadlines" if frac == 1.0 else f"{frac:.0%} of jobs with deadlines"
    fig.suptitle(f"{trace}, first {FIRST} jobs, duplication, {what}")
    fig.tight_layout()
    fig.savefig(PLOTS / name, dpi=100)
    plt.close(fig)


def _plot_utilization(cache: dict[str, dict[str, object]], trace: str, name: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for column, s in enumerate(STRINGENCIES):
        axis = axes[column]
        for policy in (*DEADLINE_POLICIES, *BACKFILL_POLICIES):
            config = (
                (trace, policy, 0.0, 0.0)
                if policy in BACKFILL_POLICIES
                else (trace, policy, s, 1.0)
            )
            points = [
                (load, _pct(r["utilization"]["cpus"]))  # type: ignore[index]
                for load in LOADS
                if (r := _get(cache, config[0], config[1], load, config[2], config[3])) is not None
            ]
            if points:
                axis.plot([p[0] for p in points], [p[1] for p in points], "o-", label=policy)
        axis.set_title(f"{trace}: utilization (%), S = {s}")
        axis.set_xlabel("load factor")
        axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(PLOTS / name, dpi=100)
    plt.close(fig)


def _plot_non_deadline(cache: dict[str, dict[str, object]], name: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for policy in (*DEADLINE_POLICIES, *BACKFILL_POLICIES):
        points = []
        for load in LOADS:
            if policy in BACKFILL_POLICIES:
                r = _get(cache, "CTC", policy, load, 0.0, 0.0)
                fields = ("avg_response", "avg_bounded_slowdown")
            else:
                r = _get(cache, "CTC", policy, load, 0.2, 0.2)
                fields = ("non_deadline_avg_response", "non_deadline_avg_bounded_slowdown")
            if r is not None:
                points.append((_pct(r["utilization"]["cpus"]), r[fields[0]], r[fields[1]]))  # type: ignore[index]
        if points:
            points.sort()
            axes[0].plot([p[0] for p in points], [p[1] for p in points], "o-", label=policy)
            axes[1].plot([p[0] for p in points], [p[2] for p in points], "o-", label=policy)
    axes[0].set_title("non-deadline jobs: average response (s)")
    axes[1].set_title("non-deadline jobs: average bounded slowdown")
    for axis in axes:
        axis.set_xlabel("achieved utilization (%)")
        axis.legend(fontsize=8)
    fig.suptitle("CTC, 20 % deadline jobs, S = 0.2 (EASY and conservative: all jobs, no deadlines)")
    fig.tight_layout()
    fig.savefig(PLOTS / name, dpi=100)
    plt.close(fig)


def render(cache: dict[str, dict[str, object]]) -> str:
    out: list[str] = []
    for trace, figures in (("CTC", "Figures 4 and 5"), ("SDSC", "Figures 7 and 8")):
        out += [f"### {trace}: all jobs with deadlines ({figures})", ""]
        for s in STRINGENCIES:
            out += [f"S = {s}: unadmitted jobs % / unadmitted processor-seconds %", ""]
            out += [*_admission_table(cache, trace, s, 1.0), ""]
        name = f"qops-{trace.lower()}-admission.png"
        _plot_admission(cache, trace, 1.0, name)
        out += [f"![{trace} admission]({name})", ""]
    out += ["### Utilization against EASY and conservative (Figure 6, and SDSC)", ""]
    header = "| trace | S | load | " + " | ".join((*DEADLINE_POLICIES, *BACKFILL_POLICIES)) + " |"
    for trace in TRACES:
        out += [header, "|---|---|---|" + "---:|" * 5]
        for s in STRINGENCIES:
            for load in LOADS:
                cells = []
                for policy in (*DEADLINE_POLICIES, *BACKFILL_POLICIES):
                    r = (
                        _get(cache, trace, policy, load, 0.0, 0.0)
                        if policy in BACKFILL_POLICIES
                        else _get(cache, trace, policy, load, s, 1.0)
                    )
                    cells.append("–" if r is None else f"{_pct(r['utilization']['cpus']):.1f}")  # type: ignore[index]
                out.append(f"| {trace} | {s} | {load} | " + " | ".join(cells) + " |")
        name = f"qops-{trace.lower()}-utilization.png"
        _plot_utilization(cache, trace, name)
        out += ["", f"![{trace} utilization]({name})", ""]
    out += ["### CTC with a mix of deadline and non-deadline jobs (Figures 13-16)", ""]
    for frac in (0.8, 0.2):
        for s in STRINGENCIES:
            out += [
                f"{frac:.0%} deadline jobs, S = {s}: unadmitted *deadline* jobs % / proc-s %",
                "",
            ]
            out += [*_admission_table(cache, "CTC", s, frac), ""]
        name = f"qops-ctc-mixed-{round(frac * 100)}.png"
        _plot_admission(cache, "CTC", frac, name)
        out += [f"![CTC {frac:.0%} deadline jobs]({name})", ""]
    _plot_non_deadline(cache, "qops-ctc-non-deadline.png")
    out += [
        "### Non-deadline jobs against achieved utilization (Figure 43)",
        "",
        "![non-deadline jobs](qops-ctc-non-deadline.png)",
        "",
    ]
    seconds = {p: [r["seconds"] for k, r in cache.items() if k.split("|")[1] == p] for p in
               (*DEADLINE_POLICIES, *BACKFILL_POLICIES)}  # fmt: skip
    out += ["Replay time per run (s, including deriving deadlines with EASY): " + ", ".join(
        f"{p} median {sorted(v)[len(v) // 2]:.0f} / max {max(v):.0f}"  # type: ignore[type-var,arg-type]
        for p, v in seconds.items() if v
    ) + ".", "", f"Generated by `.venv/bin/python experiments/qops.py` from {len(cache)} cached runs."]  # fmt: skip
    return "\n".join(out)


def main() -> None:
    args = parse_arguments(__doc__)
    if args.render:
        cache = load_cache(CACHE)
    else:
        cache = run_missing(CACHE, list(configurations()), key, run_one, args.workers)
    write_generated(PAGE, render(cache), "QoPS reproduction")


if __name__ == "__main__":
    main()
