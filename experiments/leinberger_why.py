"""Why Leinberger et al.'s headline (BB-EASY up to 50 % better than FF-EASY in average
response) does not reproduce: the same comparison under the workload assumptions the
paper leaves open, one changed at a time.

The page's set-up (``leinberger.py``) extends the first 5,000 KTH jobs: their sizes,
runtimes and the users' estimates, K requirements ``ceil(x * size)`` with one ``x``
drawn per resource. The paper extends the Feitelson (1996) model, which has sizes and
runtimes only, so its scheduler most likely knew each runtime exactly; it does not say
how its requirements relate to each other. The variants:

* ``page``: the page's set-up (the runs are taken from ``leinberger.json``);
* ``exact``: the estimates are the runtimes (what a model without estimates implies);
* ``correlated``: one ``x`` per job for all K resources (requirements move together,
  so there is nothing to balance): the other extreme from independent draws;
* ``machine``: requirements ``ceil(x * P)`` drawn on the whole machine instead of
  scaled by the job's size (a job of 1 processor may want much of another resource);
* ``exact+machine``: both changes.

    .venv/bin/python experiments/leinberger_why.py          # run what is missing, print
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
import statistics
import time
from pathlib import Path
from typing import Any

from berth.emulate.generate import (
    calibrate,
    extend_to_k,
    resource_names,
    with_poisson_arrivals,
)
from berth.emulate.run import run_jobs
from berth.emulate.traces import read_workload
from berth.emulate.workload import TraceJob, Workload
from berth.runtime.paths import find_shared_trace
from harness import load_cache, parse_arguments, run_missing, start_cache
from leinberger import CACHE as PAGE_CACHE
from leinberger import JOBS, TRACE
from leinberger import key as page_key

CACHE = Path(__file__).resolve().parent / "results" / "leinberger-why.json"
VARIANTS = ("exact", "correlated", "machine", "exact+machine")
CELLS = ((4, "uniform", 128), (8, "uniform", 256), (2, "uniform", 256))
SEEDS = (0, 1, 2)

#: (variant, K, distribution, queue length, seed)
Spec = tuple[str, int, str, int, int]


@functools.cache
def _trace() -> Workload:
    path = find_shared_trace(TRACE)
    assert path is not None, f"{TRACE} not found"
    return read_workload(path)


def _jobs(
    variant: str, k: int, distribution: str, seed: int
) -> tuple[list[TraceJob], dict[str, int]]:
    base = _trace()
    processors = base.capacity["cpus"]
    jobs = list(base.jobs[:JOBS])
    if "exact" in variant:
        jobs = [dataclasses.replace(t, job=dataclasses.replace(t.job, estimate=t.runtime))
                for t in jobs]  # fmt: skip
    if variant == "correlated":
        rng = random.Random(f"correlated:{k}:{seed}")
        extended = []
        for t in jobs:
            size = min(t.job.resources.get("cpus", 1), processors)
            x = 1.0 - rng.random()
            wants = {name: max(1, math.ceil(x * size)) for name in resource_names(k)}
            extended.append(dataclasses.replace(t, job=dataclasses.replace(t.job, resources=wants)))
        jobs = extended
    elif variant.endswith("machine"):
        rng = random.Random(f"machine:{k}:{seed}")
        jobs = [dataclasses.replace(t, job=dataclasses.replace(t.job, resources={
            name: max(1, math.ceil((1.0 - rng.random()) * processors)) for name in resource_names(k)
        })) for t in jobs]  # fmt: skip
    else:
        jobs = extend_to_k(jobs, k, distribution, processors, seed=seed)
    return jobs, dict.fromkeys(resource_names(k), processors)


def key(spec: Spec) -> str:
    return "|".join(str(part) for part in spec)


def run_one(spec: Spec) -> tuple[str, dict[str, Any]]:
    """Calibrate the arrivals for FF-EASY, then replay FF-EASY and BB-EASY on them."""
    variant, k, distribution, queue, seed = spec
    started = time.perf_counter()
    jobs, capacity = _jobs(variant, k, distribution, seed)
    found = calibrate(jobs, capacity, queue, seed=seed)
    arrivals = with_poisson_arrivals(jobs, found.mean_interarrival, seed)
    report: dict[str, Any] = {"queue_length": found.queue_length}
    for selection in ("ff", "bb", "bl"):
        result = run_jobs(arrivals, "easy", capacity, policy_options={"selection": selection})
        report[selection] = {m: result.report[m] for m in
                             ("avg_response", "weighted_avg_response", "avg_wait", "utilization")}  # fmt: skip
    report["seconds"] = time.perf_counter() - started
    return key(spec), report


def gain(base: float, other: float) -> float:
    return 100.0 * (base - other) / base


def page_gains(k: int, distribution: str, queue: int, metric: str, selection: str) -> list[float]:
    cache = load_cache(PAGE_CACHE)
    found = []
    for seed in SEEDS:
        ff = cache.get(page_key((k, distribution, queue, "FF-EASY"), seed))
        other = cache.get(page_key((k, distribution, queue, f"{selection.upper()}-EASY"), seed))
        if ff is not None and other is not None:
            found.append(gain(float(ff[metric]), float(other[metric])))
    return found


def table(cache: dict[str, Any], metric: str, selection: str = "bb") -> list[str]:
    rows = ["| K | requirements | queue | " + " | ".join(("page", *VARIANTS)) + " |",
            "|---|---|---:|" + "---:|" * (1 + len(VARIANTS))]  # fmt: skip
    for k, distribution, queue in CELLS:
        cells = []
        for variant in ("page", *VARIANTS):
            if variant == "page":
                values = page_gains(k, distribution, queue, metric, selection)
            else:
                runs = [cache.get(key((variant, k, distribution, queue, s))) for s in SEEDS]
                values = [gain(float(r["ff"][metric]), float(r[selection][metric]))
                          for r in runs if r is not None]  # fmt: skip
            if not values:
                cells.append("–")
                continue
            cells.append(
                f"{statistics.fmean(values):+.1f} ({min(values):+.0f}..{max(values):+.0f})"
            )
        rows.append(f"| {k} | {distribution} | {queue} | " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    args = parse_arguments(__doc__)
    start_cache(CACHE, args)
    specs = [(v, k, d, q, s) for s in SEEDS for v in VARIANTS for k, d, q in CELLS]
    cache = (
        load_cache(CACHE)
        if args.render
        else run_missing(CACHE, specs, key, run_one, args.workers, args.dask)
    )
    for selection in ("bb", "bl"):
        for metric in ("avg_response", "weighted_avg_response"):
            print(f"\n{selection.upper()}-EASY's gain over FF-EASY in {metric} (%), mean (range) "
                  f"over seeds {SEEDS}:\n")  # fmt: skip
            print("\n".join(table(cache, metric, selection)))


if __name__ == "__main__":
    main()
