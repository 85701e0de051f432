"""Reproduce Leinberger, Karypis & Kumar (1999), Figures 2 and 3: K-resource backfilling.

Workloads: the first 5,000 jobs of the cleaned KTH SP2 trace (sizes, runtimes, users'
estimates) extended to K in {2, 4, 8} resources with uniform or exponential requirements
scaled by the job size, arriving as a Poisson process calibrated so that FCFS/FF-EASY
reaches an average queue of 64, 128 or 256 jobs (``berth workload generate``; the paper
used the Feitelson 1996 model for sizes and runtimes, which we do not have).

Policies: FCFS/FF-EASY (the baseline), FCFS/BL-EASY, FCFS/BB-EASY and FCFS/FF-CONS, as
in the paper, plus BB with conservative backfilling and FF / BB with slack-based
backfilling (none of the papers tried these). Slack runs only at queue length 64: its
insertion is O(n^3) in the queue length and a 256-deep queue takes many minutes per run;
its AWT is the FF-CONS average wait on the same workload (Talby & Feitelson's method).

Every run is cached in ``experiments/results/leinberger.json``; re-running skips what is
cached, ``--render`` only redraws ``docs/results/leinberger.md`` and its plots.

    .venv/bin/python experiments/leinberger.py            # or: make reproduce-leinberger
    .venv/bin/python experiments/leinberger.py --render
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from berth.emulate.generate import calibrate, extend_to_k, resource_names, with_poisson_arrivals
from berth.emulate.run import run_jobs
from berth.emulate.traces import read_workload
from berth.emulate.workload import Workload as Trace
from berth.runtime.paths import find_shared_trace
from harness import load_cache, parse_arguments, run_missing, start_cache, write_generated

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "experiments" / "results" / "leinberger.json"
PAGE = ROOT / "docs" / "results" / "leinberger.md"
PLOTS = ROOT / "docs" / "results"

TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"
JOBS = 5000
KS = (2, 4, 8)
DISTRIBUTIONS = ("uniform", "exponential")
QUEUES = (64, 128, 256)
#: name -> (policy, selection); the baseline first.
VARIANTS = {
    "FF-EASY": ("easy", "ff"),
    "BL-EASY": ("easy", "bl"),
    "BB-EASY": ("easy", "bb"),
    "FF-CONS": ("conservative", "ff"),
    "BB-CONS": ("conservative", "bb"),
    "FF-SLACK": ("slack", "ff"),
    "BB-SLACK": ("slack", "bb"),
}
PAPER_VARIANTS = ("BL-EASY", "BB-EASY", "FF-CONS")
SLACK_QUEUES = (64,)

#: Seeds (workload extension and arrivals) for the cheap EASY variants; the others run
#: on seed 0 only. Gains are averaged over the seeds that ran.
SEEDS = (0, 1, 2)
Config = tuple[int, str, int, str]  # K, distribution, queue length, variant
WorkloadSpec = tuple[int, str, int, int]  # K, distribution, queue length, seed
#: A run: its config, the calibrated mean inter-arrival gap and (slack only) the AWT.
Task = tuple[Config, int, float, float | None]


@functools.cache
def _trace() -> Trace:
    """The base trace, read once per worker process (each runs many configurations)."""
    path = find_shared_trace(TRACE)
    assert path is not None, f"{TRACE} not found"
    return read_workload(path)


def _base_jobs(k: int, distribution: str, seed: int) -> tuple[list[Any], dict[str, int]]:
    base = _trace()
    processors = base.capacity["cpus"]
    jobs = extend_to_k(base.jobs[:JOBS], k, distribution, processors, seed=seed)
    return jobs, dict.fromkeys(resource_names(k), processors)


def _suffix(seed: int) -> str:
    return "" if seed == 0 else f"|seed{seed}"


def key(config: Config, seed: int = 0) -> str:
    return "|".join(str(part) for part in config) + _suffix(seed)


def calibrate_one(workload: WorkloadSpec) -> tuple[str, dict[str, Any]]:
    k, distribution, queue, seed = workload
    started = time.perf_counter()
    jobs, capacity = _base_jobs(k, distribution, seed)
    found = calibrate(jobs, capacity, queue, seed=seed)
    return _calibration_key(workload), {
        "gap": found.mean_interarrival,
        "queue_length": found.queue_length,
        "iterations": found.iterations,
        "seconds": time.perf_counter() - started,
    }


def _calibration_key(workload: WorkloadSpec) -> str:
    return "calibration|" + "|".join(str(part) for part in workload[:3]) + _suffix(workload[3])


def workloads() -> list[WorkloadSpec]:
    return [(k, d, q, seed) for seed in SEEDS for k in KS for d in DISTRIBUTIONS for q in QUEUES]


def tasks(cache: dict[str, Any], slack: bool) -> list[Task]:
    """Runs of the backfilling variants (EASY ones on every seed), or (``slack``) of the
    slack ones at SLACK_QUEUES with the AWT of the FF-CONS run of the same workload."""
    out: list[Task] = []
    for variant in VARIANTS:
        if ("SLACK" in variant) != slack:
            continue
        for k, d, q, seed in workloads():
            if (seed != 0 and "EASY" not in variant) or (slack and q not in SLACK_QUEUES):
                continue
            gap = cache[_calibration_key((k, d, q, seed))]["gap"]
            awt = None
            if slack:
                awt = max(1.0, float(cache[key((k, d, q, "FF-CONS"))]["avg_wait"]))
            out.append(((k, d, q, variant), seed, gap, awt))
    return out


def task_key(task: Task) -> str:
    return key(task[0], task[1])


def run_one(task: Task) -> tuple[str, dict[str, Any]]:
    (k, distribution, _queue, variant), seed, gap, awt = task
    policy, selection = VARIANTS[variant]
    jobs, capacity = _base_jobs(k, distribution, seed)
    arrivals = with_poisson_arrivals(jobs, gap, seed)
    options: dict[str, object] = {"selection": selection}
    if awt is not None:
        options["awt"] = awt
    started = time.perf_counter()
    result = run_jobs(arrivals, policy, capacity, policy_options=options)
    report = dict(result.report)
    report["seconds"] = time.perf_counter() - started
    report["options"] = options
    return task_key(task), report


# ------------------------------------------------------------------------- rendering
def _gains(cache: dict[str, Any], config: Config, metric: str) -> list[float]:
    """Per seed where both ran: relative gain over FF-EASY in percent (positive: better)."""
    k, distribution, queue, _ = config
    pairs = [
        (cache.get(key((k, distribution, queue, "FF-EASY"), seed)), cache.get(key(config, seed)))
        for seed in SEEDS
    ]
    return [
        100.0 * (base[metric] - run[metric]) / base[metric]
        for base, run in pairs
        if base is not None and run is not None
    ]


def gain(cache: dict[str, Any], config: Config, metric: str) -> float | None:
    """The gain averaged over the seeds that ran, or None."""
    gains = _gains(cache, config, metric)
    return sum(gains) / len(gains) if gains else None


def spread(cache: dict[str, Any], config: Config, metric: str) -> str:
    """The gain for the tables: ``+12.0 (+3..+20)`` (mean, per-seed range)."""
    gains = _gains(cache, config, metric)
    if not gains:
        return ""
    mean = sum(gains) / len(gains)
    if len(gains) == 1:
        return f"{mean:+.1f}"
    return f"{mean:+.1f} ({min(gains):+.0f}..{max(gains):+.0f})"


def _table(cache: dict[str, Any], metric: str) -> list[str]:
    variants = [v for v in VARIANTS if v != "FF-EASY"]
    out = [
        "| K | requirements | queue | " + " | ".join(variants) + " |",
        "|---|---|---:|" + "---:|" * len(variants),
    ]
    for k in KS:
        for distribution in DISTRIBUTIONS:
            for queue in QUEUES:
                cells = [spread(cache, (k, distribution, queue, v), metric) for v in variants]
                out.append(f"| {k} | {distribution} | {queue} | " + " | ".join(cells) + " |")
    return out


def _plot(cache: dict[str, Any], metric: str, name: str, title: str) -> None:
    figure, axes = plt.subplots(2, 3, figsize=(13, 7), sharey=True)
    shown = [v for v in VARIANTS if v != "FF-EASY"]
    width = 0.8 / len(shown)
    for row, distribution in enumerate(DISTRIBUTIONS):
        for column, k in enumerate(KS):
            axis = axes[row][column]
            for index, variant in enumerate(shown):
                xs, ys = [], []
                for position, queue in enumerate(QUEUES):
                    value = gain(cache, (k, distribution, queue, variant), metric)
                    if value is not None:
                        xs.append(position + (index - len(shown) / 2) * width + width / 2)
                        ys.append(value)
                axis.bar(xs, ys, width, label=variant)
            axis.axhline(0, color="black", linewidth=0.6)
            axis.set_xticks(range(len(QUEUES)), [str(q) for q in QUEUES])
            axis.set_title(f"K = {k}, {distribution}")
            if column == 0:
                axis.set_ylabel("gain over FF-EASY (%)")
            if row == 1:
                axis.set_xlabel("FF-EASY average queue length")
    axes[0][0].legend(fontsize=8)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(PLOTS / name, dpi=90)
    plt.close(figure)


def render(cache: dict[str, Any]) -> str:
    _plot(cache, "avg_response", "leinberger-avg-response.png", "Average response time")
    _plot(
        cache,
        "weighted_avg_response",
        "leinberger-weighted-response.png",
        "Weighted average response time",
    )
    out = [
        "### Figure 2: average response time, gain over FCFS/FF-EASY (%)",
        "",
        f"Positive is better than FF-EASY. EASY variants: mean over seeds {', '.join(map(str, SEEDS))} "
        "(each seed its own requirements, arrivals and calibration; per-seed range in brackets); "
        "CONS and SLACK: seed 0; SLACK at queue length 64 only.",
        "",
        *_table(cache, "avg_response"),
        "",
        "![average response](leinberger-avg-response.png)",
        "",
        "### Figure 3: weighted average response time, gain over FCFS/FF-EASY (%)",
        "",
        *_table(cache, "weighted_avg_response"),
        "",
        "![weighted average response](leinberger-weighted-response.png)",
        "",
        "### The calibrated workloads (seed 0)",
        "",
        "| K | requirements | target queue | FF-EASY queue | mean gap (s) | FF-EASY avg response (s) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for k in KS:
        for distribution in DISTRIBUTIONS:
            for queue in QUEUES:
                base = cache.get(key((k, distribution, queue, "FF-EASY")))
                found = cache.get(_calibration_key((k, distribution, queue, 0)))
                if base is not None and found is not None:
                    out.append(
                        f"| {k} | {distribution} | {queue} | {found['queue_length']:.1f} "
                        f"| {found['gap']:,.1f} | {base['avg_response']:,.0f} |"
                    )
    seconds: dict[str, list[float]] = {}
    for name, report in cache.items():
        if not name.startswith("calibration|"):
            seconds.setdefault(name.split("|")[3], []).append(report["seconds"])
    out += [
        "",
        "Replay time per run (s, median / max): "
        + ", ".join(
            f"{v} {sorted(s)[len(s) // 2]:.1f} / {max(s):.1f}"
            for v, s in sorted(seconds.items(), key=lambda item: list(VARIANTS).index(item[0]))
        )
        + ".",
        "",
        f"Generated by `.venv/bin/python experiments/leinberger.py` from {len(cache)} cached runs.",
    ]
    return "\n".join(out)


def main() -> None:
    args = parse_arguments(__doc__)
    start_cache(CACHE, args)
    cache = load_cache(CACHE)
    if not args.render:
        run_missing(CACHE, workloads(), _calibration_key, calibrate_one, args.workers, args.dask)
        cache = run_missing(
            CACHE, tasks(load_cache(CACHE), False), task_key, run_one, args.workers, args.dask
        )
        cache = run_missing(CACHE, tasks(cache, True), task_key, run_one, args.workers, args.dask)
    write_generated(PAGE, render(cache), "Leinberger et al. (1999) reproduction")


if __name__ == "__main__":
    main()
