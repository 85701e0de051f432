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

import functools
import time
from collections.abc import Iterator
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from berth.emulate.run import emulate
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.emulate.workload import Workload
from berth.runtime.paths import find_shared_trace
from harness import (
    load_cache,
    parse_arguments,
    run_missing,
    start_cache,
    write_generated,
)

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "experiments" / "results" / "qops.json"
PAGE = ROOT / "docs" / "results" / "qops.md"
PLOTS = ROOT / "docs" / "results"

TRACES = {"CTC": "CTC-SP2-1996-3.1-cln.swf.gz", "SDSC": "SDSC-SP2-1998-4.2-cln.swf.gz"}
#: Processors: the machines the paper names. The CTC trace's header says 338 (its batch
#: partition of the 512-node machine); the paper ran CTC on 430, so that is used here.
#: The earlier runs at 338 stay in the cache (``CTC@338``) for the comparison.
PROCESSORS = {"CTC": 430, "SDSC": 128}
EARLIER_CTC = 338
FIRST = 5000
LOADS = (1.0, 1.2, 1.4, 1.6)
STRINGENCIES = (0.2, 0.5)
SEEDS = (0, 1, 2, 3, 4)
DEADLINE_POLICIES = ("qops", "msb", "mrt")
BACKFILL_POLICIES = ("easy", "conservative")

#: trace, policy, load, stringency S, fraction of jobs with deadlines, seed
Config = tuple[str, str, float, float, float, int]
#: A run: a configuration on a machine of that many processors.
Run = tuple[Config, int]


def runs() -> Iterator[Run]:
    """Every run: each configuration on the paper's machine, then CTC on the trace's 338
    processors (seed 0, every job with a deadline) for the comparison table."""
    for config in configurations():
        yield config, PROCESSORS[config[0]]
    for policy in DEADLINE_POLICIES:
        for load in LOADS:
            for stringency in STRINGENCIES:
                yield ("CTC", policy, load, stringency, 1.0, 0), EARLIER_CTC


def run_key(run: Run) -> str:
    return key(*run)


def configurations() -> Iterator[Config]:
    """Every configuration, cheapest policies first and seed by seed (MSB, the slowest,
    last), so an interrupted reproduction has whole seeds of the cheap policies."""
    for policy in ("qops", "mrt", "easy", "conservative", "msb"):
        for seed in SEEDS:
            for trace in TRACES:
                for load in LOADS:
                    if policy in BACKFILL_POLICIES:
                        yield trace, policy, load, 0.0, 0.0, seed
                        continue
                    for stringency in STRINGENCIES:
                        yield trace, policy, load, stringency, 1.0, seed
                        if trace == "CTC":
                            for fraction in (0.8, 0.2):
                                yield trace, policy, load, stringency, fraction, seed


def key(config: Config, processors: int | None = None) -> str:
    trace, policy, load, stringency, fraction, seed = config
    machine = processors or PROCESSORS[trace]
    return f"{trace}@{machine}|{policy}|{load}|{stringency}|{fraction}|seed{seed}"


@functools.cache
def _trace(trace: str) -> Workload:
    """A trace, read once per worker process (each runs many configurations)."""
    path = find_shared_trace(TRACES[trace])
    assert path is not None, f"{TRACES[trace]} not found"
    return read_workload(path)


def run_one(run: Run) -> tuple[str, dict[str, object]]:
    config, processors = run
    trace, policy, load, stringency, fraction, seed = config
    workload = _trace(trace)
    scenario = Scenario(
        first=FIRST,
        estimates="exact",
        load=load,
        stringency=stringency if policy in DEADLINE_POLICIES else None,
        deadline_fraction=fraction if policy in DEADLINE_POLICIES else 1.0,
        seed=seed,
    )
    started = time.perf_counter()
    capacity = {"cpus": processors}
    (result,) = emulate(workload, policy, capacity=capacity, scenario=scenario)
    report = dict(result.report)
    report["seconds"] = time.perf_counter() - started
    return run_key(run), report


# ------------------------------------------------------------------------- rendering
Cache = dict[str, dict[str, object]]


def _runs(cache: Cache, trace: str, policy: str, load: float, s: float, frac: float,
          machine: int | None = None) -> list[dict[str, object]]:  # fmt: skip
    """The cached reports of one setting, one per seed that ran."""
    found = (cache.get(key((trace, policy, load, s, frac, seed), machine)) for seed in SEEDS)
    return [r for r in found if r is not None]


def _number(value: object) -> float:
    assert isinstance(value, int | float)
    return float(value)


def _cpus(value: object) -> float:
    assert isinstance(value, dict)
    return _number(value["cpus"])


def _deadline_jobs_rejected(report: dict[str, object]) -> float:
    """% of the jobs *with deadlines* not admitted."""
    return 100.0 * _number(report["deadline_rejected"]) / max(_number(report["deadline_jobs"]), 1)


def _deadline_work_rejected(report: dict[str, object]) -> float | None:
    """% of the processor-seconds of the jobs with deadlines not admitted (None: a run
    from before the measure existed, with non-deadline jobs in it)."""
    if "deadline_rejected_resource_seconds" in report:
        return 100.0 * _cpus(report["deadline_rejected_resource_seconds"])
    if report["deadline_jobs"] == report["jobs"]:
        return 100.0 * _cpus(report["rejected_resource_seconds"])
    return None


def _others_rejected(report: dict[str, object]) -> float:
    """% of the jobs *without* deadlines (artificial ones) not admitted."""
    others = _number(report["jobs"]) - _number(report["deadline_jobs"])
    refused = _number(report["rejected"]) - _number(report["deadline_rejected"])
    return 100.0 * refused / max(others, 1)


def _utilization(report: dict[str, object]) -> float:
    return 100.0 * _cpus(report["utilization"])


def _spread(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, 0.0
    return mean, (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5


def _cell(values: list[float | None]) -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "–"
    mean, sd = _spread(known)
    return f"{mean:.1f}" if len(known) == 1 else f"{mean:.1f} ±{sd:.1f}"


def _admission_table(cache: Cache, trace: str, s: float, frac: float) -> list[str]:
    mixed = frac < 1.0
    columns = [f"{p} jobs %" for p in DEADLINE_POLICIES]
    columns += [f"{p} proc-s %" for p in DEADLINE_POLICIES]
    if mixed:
        columns += [f"{p} others %" for p in DEADLINE_POLICIES]
    rows = ["| load | " + " | ".join(columns) + " | misses | seeds |",
            "|---|" + "---:|" * (len(columns) + 2)]  # fmt: skip
    for load in LOADS:
        runs = {p: _runs(cache, trace, p, load, s, frac) for p in DEADLINE_POLICIES}
        cells = [_cell([_deadline_jobs_rejected(r) for r in runs[p]]) for p in DEADLINE_POLICIES]
        cells += [_cell([_deadline_work_rejected(r) for r in runs[p]]) for p in DEADLINE_POLICIES]
        if mixed:
            cells += [_cell([_others_rejected(r) for r in runs[p]]) for p in DEADLINE_POLICIES]
        misses = sum(int(_number(r["deadline_misses"]) + _number(r["promise_misses"]))
                     for p in DEADLINE_POLICIES for r in runs[p])  # fmt: skip
        seeds = "/".join(str(len(runs[p])) for p in DEADLINE_POLICIES)
        rows.append(f"| {load} | " + " | ".join(cells) + f" | {misses} | {seeds} |")
    return rows


def _plot_admission(cache: Cache, trace: str, frac: float, name: str) -> None:
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    measures = (_deadline_jobs_rejected, _deadline_work_rejected)
    for column, s in enumerate(STRINGENCIES):
        for policy, marker in zip(DEADLINE_POLICIES, "osd", strict=True):
            for offset, measure in enumerate(measures):
                points = []
                for load in LOADS:
                    values = [v for r in _runs(cache, trace, policy, load, s, frac)
                              if (v := measure(r)) is not None]  # fmt: skip
                    if values:
                        points.append((load, *_spread(values)))
                if points:
                    axes[2 * column + offset].errorbar(
                        [p[0] for p in points], [p[1] for p in points],
                        yerr=[p[2] for p in points], fmt=marker + "-", capsize=3, label=policy,
                    )  # fmt: skip
        axes[2 * column].set_title(f"S = {s}: deadline jobs not admitted (%)")
        axes[2 * column + 1].set_title(f"S = {s}: their proc-seconds not admitted (%)")
    for axis in axes:
        axis.set_xlabel("load factor")
        axis.legend(fontsize=8)
    what = "all jobs with deadlines" if frac == 1.0 else f"{frac:.0%} of jobs with deadlines"
    fig.suptitle(f"{trace} ({PROCESSORS[trace]} processors), first {FIRST} jobs, {what}; "
                 "mean and standard deviation over the seeds")  # fmt: skip
    fig.tight_layout()
    fig.savefig(PLOTS / name, dpi=100)
    plt.close(fig)


def _utilization_runs(cache: Cache, trace: str, policy: str, load: float, s: float) -> list[float]:
    if policy in BACKFILL_POLICIES:
        return [_utilization(r) for r in _runs(cache, trace, policy, load, 0.0, 0.0)]
    return [_utilization(r) for r in _runs(cache, trace, policy, load, s, 1.0)]


def _plot_utilization(cache: Cache, trace: str, name: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for column, s in enumerate(STRINGENCIES):
        axis = axes[column]
        for policy in (*DEADLINE_POLICIES, *BACKFILL_POLICIES):
            points = [(load, _spread(v)[0]) for load in LOADS
                      if (v := _utilization_runs(cache, trace, policy, load, s))]  # fmt: skip
            if points:
                axis.plot([p[0] for p in points], [p[1] for p in points], "o-", label=policy)
        axis.set_title(f"{trace}: utilization (%), S = {s}")
        axis.set_xlabel("load factor")
        axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(PLOTS / name, dpi=100)
    plt.close(fig)


def _plot_non_deadline(cache: Cache, name: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for policy in (*DEADLINE_POLICIES, *BACKFILL_POLICIES):
        points = []
        for load in LOADS:
            if policy in BACKFILL_POLICIES:
                runs = _runs(cache, "CTC", policy, load, 0.0, 0.0)
                fields = ("avg_response", "avg_bounded_slowdown")
            else:
                runs = _runs(cache, "CTC", policy, load, 0.2, 0.2)
                fields = ("non_deadline_avg_response", "non_deadline_avg_bounded_slowdown")
            if runs:
                points.append((_spread([_utilization(r) for r in runs])[0],
                               _spread([_number(r[fields[0]]) for r in runs])[0],
                               _spread([_number(r[fields[1]]) for r in runs])[0]))  # fmt: skip
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


def _machine_table(cache: Cache) -> list[str]:
    """CTC on 338 processors (the earlier runs) against 430, seed 0, all deadlines."""
    rows = ["| S | load | " + " | ".join(f"{p} at {EARLIER_CTC} / {PROCESSORS['CTC']}"
                                         for p in DEADLINE_POLICIES) + " |",
            "|---|---|" + "---:|" * len(DEADLINE_POLICIES)]  # fmt: skip
    for s in STRINGENCIES:
        for load in LOADS:
            cells = []
            for policy in DEADLINE_POLICIES:
                config = ("CTC", policy, load, s, 1.0, 0)
                before, now = cache.get(key(config, EARLIER_CTC)), cache.get(key(config))
                cells.append(" / ".join("–" if r is None else f"{_deadline_jobs_rejected(r):.1f}"
                                        for r in (before, now)))  # fmt: skip
            rows.append(f"| {s} | {load} | " + " | ".join(cells) + " |")
    return rows


def _mixed_utilization(cache: Cache) -> list[str]:
    """Utilization lost against EASY when only some jobs have deadlines (Figures 37-38)."""
    rows = [
        "| deadline jobs | S | load | qops | msb | mrt | easy |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for frac in (0.8, 0.2):
        for s in STRINGENCIES:
            for load in LOADS:
                easy = [_utilization(r) for r in _runs(cache, "CTC", "easy", load, 0.0, 0.0)]
                cells = [_cell([_utilization(r) for r in _runs(cache, "CTC", p, load, s, frac)])
                         for p in DEADLINE_POLICIES]  # fmt: skip
                rows.append(f"| {frac:.0%} | {s} | {load} | " + " | ".join(cells)
                            + f" | {_cell(list(easy))} |")  # fmt: skip
    return rows


def render(cache: Cache) -> str:
    out: list[str] = []
    for trace, figures in (("CTC", "Figures 4 and 5"), ("SDSC", "Figures 7 and 8")):
        out += [f"### {trace} on {PROCESSORS[trace]} processors: all jobs with deadlines "
                f"({figures})", ""]  # fmt: skip
        for s in STRINGENCIES:
            out += [f"S = {s}: jobs not admitted % and their processor-seconds %, mean ±sd over "
                    "the seeds (seeds run per policy: qops/msb/mrt)", ""]  # fmt: skip
            out += [*_admission_table(cache, trace, s, 1.0), ""]
        name = f"qops-{trace.lower()}-admission.png"
        _plot_admission(cache, trace, 1.0, name)
        out += [f"![{trace} admission]({name})", ""]
    out += [f"### CTC on {EARLIER_CTC} against {PROCESSORS['CTC']} processors (seed 0)", "",
            "Deadline jobs not admitted %, all jobs with deadlines:", "",
            *_machine_table(cache), ""]  # fmt: skip
    out += ["### Utilization against EASY and conservative (Figure 6, and SDSC)", "",
            "Achieved utilization %, mean ±sd over the seeds.", ""]  # fmt: skip
    header = "| trace | S | load | " + " | ".join((*DEADLINE_POLICIES, *BACKFILL_POLICIES)) + " |"
    for trace in TRACES:
        out += [header, "|---|---|---|" + "---:|" * 5]
        for s in STRINGENCIES:
            for load in LOADS:
                cells = [_cell(list(_utilization_runs(cache, trace, p, load, s)))
                         for p in (*DEADLINE_POLICIES, *BACKFILL_POLICIES)]  # fmt: skip
                out.append(f"| {trace} | {s} | {load} | " + " | ".join(cells) + " |")
        name = f"qops-{trace.lower()}-utilization.png"
        _plot_utilization(cache, trace, name)
        out += ["", f"![{trace} utilization]({name})", ""]
    out += ["### CTC with a mix of deadline and non-deadline jobs (Figures 13-16)", ""]
    for frac in (0.8, 0.2):
        for s in STRINGENCIES:
            out += [f"{frac:.0%} deadline jobs, S = {s}: *deadline* jobs not admitted % and "
                    "their processor-seconds %; *others*: jobs without a deadline (given the "
                    "artificial one) not admitted %", ""]  # fmt: skip
            out += [*_admission_table(cache, "CTC", s, frac), ""]
        name = f"qops-ctc-mixed-{round(frac * 100)}.png"
        _plot_admission(cache, "CTC", frac, name)
        out += [f"![CTC {frac:.0%} deadline jobs]({name})", ""]
    out += ["### Utilization with a mix of deadline and non-deadline jobs (Figures 37-38)", "",
            "Achieved utilization %, CTC, mean ±sd over the seeds.", "",
            *_mixed_utilization(cache), ""]  # fmt: skip
    _plot_non_deadline(cache, "qops-ctc-non-deadline.png")
    out += ["### Non-deadline jobs against achieved utilization (Figure 43)", "",
            "![non-deadline jobs](qops-ctc-non-deadline.png)", ""]  # fmt: skip
    current = {k: r for k, r in cache.items() if not k.startswith(f"CTC@{EARLIER_CTC}|")}
    seconds = {p: sorted(_number(r["seconds"]) for k, r in current.items() if k.split("|")[1] == p)
               for p in (*DEADLINE_POLICIES, *BACKFILL_POLICIES)}  # fmt: skip
    out += ["Replay time per run (s, including deriving deadlines with EASY): " + ", ".join(
        f"{p} median {v[len(v) // 2]:.0f} / max {max(v):.0f}" for p, v in seconds.items() if v
    ) + ".", "", f"Generated by `.venv/bin/python experiments/qops.py` from {len(current)} "
        f"runs ({len(cache) - len(current)} earlier ones on {EARLIER_CTC} processors kept for "
        "the comparison)."]  # fmt: skip
    return "\n".join(out)


def main() -> None:
    args = parse_arguments(__doc__)
    start_cache(CACHE, args)
    cache = load_cache(CACHE)
    if not args.render:
        cache = run_missing(CACHE, list(runs()), run_key, run_one, args.workers, args.dask)
    write_generated(PAGE, render(cache), "QoPS reproduction")


if __name__ == "__main__":
    main()
