"""Leinberger, Karypis & Kumar (1999) on a node-shaped machine: BL and BB on nodes.

The pool page (``experiments/leinberger.py``) gives each job K totals over one machine.
On a cluster the K resources are per node and a job's tasks are slots: here the KTH
machine is 100 nodes with 4 units of each of K resources, and a job of p processors is
p slots, each asking ``ceil(f_i x 4)`` units of resource i (f_i drawn as on the pool
page: uniform on (0, 1] or exponential, per job). Arrivals are the pool page's
calibrated Poisson process (seed 0, queue 64) with the gap scaled by the ratio of the
offered work (resource-seconds) of the node jobs to the pool jobs, so both machines are
offered the same load. Policies: FF/BL/BB-EASY, FF/BB-CONS on nodes, with BL and BB
judged by the balance of the nodes a job lands on (``docs/semantics.md``).

    .venv/bin/python experiments/leinberger_nodes.py           # run what is missing, render
    .venv/bin/python experiments/leinberger_nodes.py --render
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
import time
from pathlib import Path
from typing import Any

from berth.core.shapes import Shape
from berth.emulate.generate import extend_to_k, resource_names, with_poisson_arrivals
from berth.emulate.run import run_jobs
from berth.emulate.traces import read_workload
from berth.emulate.workload import TraceJob
from berth.emulate.workload import Workload as Trace
from berth.runtime.paths import find_shared_trace
from harness import load_cache, run_and_render
from leinberger import VARIANTS as POOL_VARIANTS

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "experiments" / "results" / "leinberger_nodes.json"
POOL_CACHE = ROOT / "experiments" / "results" / "leinberger.json"
PAGE = ROOT / "docs" / "results" / "leinberger.md"

TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"
JOBS = 5000
NODES = 100
UNITS = 4
KS = (2, 4)
DISTRIBUTIONS = ("uniform", "exponential")
QUEUE = 64
#: The pool page's variants but slack (its O(n^3) insertion on nodes is left out here).
VARIANTS = {name: spec for name, spec in POOL_VARIANTS.items() if "SLACK" not in name}
Config = tuple[int, str, str]  # K, distribution, variant


@functools.cache
def _trace() -> Trace:
    path = find_shared_trace(TRACE)
    assert path is not None, f"{TRACE} not found"
    return read_workload(path)


def node_jobs(k: int, distribution: str) -> list[TraceJob]:
    """The first JOBS KTH jobs as slots on the nodes (seed 0)."""
    rng = random.Random(f"k-node-slots:{distribution}:{k}:0")
    names = resource_names(k)
    jobs = []
    for trace_job in _trace().jobs[:JOBS]:
        size = min(trace_job.job.resources.get("cpus", 1), NODES)
        per_slot = {}
        for name in names:
            fraction = (
                1.0 - rng.random()
                if distribution == "uniform"
                else min(rng.expovariate(1.0 / 0.25), 1.0)
            )
            per_slot[name] = max(1, math.ceil(fraction * UNITS))
        job = dataclasses.replace(trace_job.job, resources={}, shape=Shape(size, per_slot))
        jobs.append(dataclasses.replace(trace_job, job=job, swf_line=None))
    return jobs


def _work(jobs: list[TraceJob], capacity: float) -> float:
    """Offered work: resource-seconds over the capacity, summed over resources."""
    total = 0.0
    for trace_job in jobs:
        job = trace_job.job
        amounts = (
            {n: a * job.shape.count for n, a in job.shape.per_slot.items()}
            if job.shape is not None
            else job.resources
        )
        total += trace_job.runtime * sum(amounts.values()) / capacity
    return total


def gap(k: int, distribution: str) -> float:
    """The pool page's calibrated gap, scaled to offer the nodes the same load."""
    pool = load_cache(POOL_CACHE)[f"calibration|{k}|{distribution}|{QUEUE}"]["gap"]
    pool_jobs = extend_to_k(_trace().jobs[:JOBS], k, distribution, NODES, seed=0)
    ratio = _work(node_jobs(k, distribution), NODES * UNITS) / _work(pool_jobs, NODES)
    return float(pool) * ratio


def configurations() -> list[Config]:
    return [(k, d, v) for k in KS for d in DISTRIBUTIONS for v in VARIANTS]


def key(config: Config) -> str:
    return "|".join(str(part) for part in config)


def run_one(config: Config) -> tuple[str, dict[str, Any]]:
    k, distribution, variant = config
    policy, selection = VARIANTS[variant]
    arrivals = with_poisson_arrivals(node_jobs(k, distribution), gap(k, distribution), 0)
    names = resource_names(k)
    nodes = {f"n{i:03d}": dict.fromkeys(names, UNITS) for i in range(NODES)}
    started = time.perf_counter()
    totals = dict.fromkeys(names, NODES * UNITS)
    options: dict[str, object] = {"selection": selection}
    result = run_jobs(arrivals, policy, totals, policy_options=options, nodes=nodes)
    report = dict(result.report)
    report["seconds"] = time.perf_counter() - started
    return key(config), report


def _gain(cache: dict[str, Any], k: int, d: str, variant: str, metric: str) -> str:
    base = cache.get(key((k, d, "FF-EASY")))
    run = cache.get(key((k, d, variant)))
    if base is None or run is None:
        return "–"
    return f"{100.0 * (base[metric] - run[metric]) / base[metric]:+.1f}"


def _pool_gain(k: int, d: str, variant: str, metric: str) -> str:
    pool = load_cache(POOL_CACHE)
    base = pool.get(f"{k}|{d}|{QUEUE}|FF-EASY")
    run = pool.get(f"{k}|{d}|{QUEUE}|{variant}")
    if base is None or run is None:
        return "–"
    return f"{100.0 * (base[metric] - run[metric]) / base[metric]:+.1f}"


def render(cache: dict[str, Any]) -> str:
    lines = [
        "Gain in average response time over FF-EASY (%, positive is better): on the "
        f"pool (the page above, queue {QUEUE}, seed 0) / on {NODES} nodes of {UNITS} "
        "units per resource; the FF-EASY average response on nodes (s) and the replay "
        "time of each node run.",
        "",
        "| K | distribution | BL-EASY | BB-EASY | FF-CONS | BB-CONS | FF-EASY on nodes (s) "
        "| replay s (FF/BL/BB-EASY, FF/BB-CONS) |",
        "|---|---|---|---|---|---|---:|---|",
    ]
    for k in KS:
        for d in DISTRIBUTIONS:
            cells = [
                f"{_pool_gain(k, d, v, 'avg_response')} / {_gain(cache, k, d, v, 'avg_response')}"
                for v in ("BL-EASY", "BB-EASY", "FF-CONS", "BB-CONS")
            ]
            base = cache.get(key((k, d, "FF-EASY")))
            response = f"{base['avg_response']:,.0f}" if base else "–"
            seconds = " / ".join(
                f"{cache[key((k, d, v))]['seconds']:.0f}" if key((k, d, v)) in cache else "–"
                for v in VARIANTS
            )
            lines.append(f"| {k} | {d} | " + " | ".join(cells) + f" | {response} | {seconds} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    page = (PAGE, "Leinberger reproduction", "nodes")
    run_and_render(__doc__, CACHE, configurations, key, run_one, render, page)


if __name__ == "__main__":
    main()
