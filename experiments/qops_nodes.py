"""QoPS, MSB and MRT on a node-shaped machine: the CTC workload of the QoPS page
(``experiments/qops.py``) replayed on named nodes beside the pool.

The same first 5,000 CTC jobs, exact estimates, loads 1.0 and 1.6, deadlines from an
EASY replay on the pool with S in {0.2, 0.5} (every job has one), seed 0, on three
machines of 430 processors:

* ``pool``: the paper's model, one pool of 430 processors;
* ``430x1``: 430 one-processor nodes (a job of n processors takes n whole nodes: the
  node planner counts them, so it must give the pool's schedule exactly);
* ``43x10``: 43 nodes of 10 processors (a job's processors are slots that share
  nodes: a placement must find them on named nodes for its whole window).

Every run is cached in ``experiments/results/qops_nodes.json``; ``--render`` only
redraws the nodes section of ``docs/results/qops.md``.

    .venv/bin/python experiments/qops_nodes.py            # or: make reproduce-qops-nodes
    .venv/bin/python experiments/qops_nodes.py --render
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

from berth.emulate.run import emulate
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.emulate.workload import Workload
from berth.runtime.paths import find_shared_trace
from harness import run_and_render

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "experiments" / "results" / "qops_nodes.json"
PAGE = ROOT / "docs" / "results" / "qops.md"

TRACE = "CTC-SP2-1996-3.1-cln.swf.gz"
PROCESSORS = 430
FIRST = 5000
LOADS = (1.0, 1.6)
STRINGENCIES = (0.2, 0.5)
POLICIES = ("qops", "msb", "mrt")
#: Machine name -> (nodes, processors per node); (0, 0): the pool.
MACHINES = {"pool": (0, 0), "430x1": (430, 1), "43x10": (43, 10)}

#: policy, load, stringency S, machine
Config = tuple[str, float, float, str]


def configurations() -> list[Config]:
    return [
        (policy, load, s, machine)
        for machine in MACHINES
        for load in LOADS
        for s in STRINGENCIES
        for policy in POLICIES
    ]


def key(config: Config) -> str:
    return "|".join(str(part) for part in config)


@functools.cache
def _trace() -> Workload:
    path = find_shared_trace(TRACE)
    assert path is not None, f"{TRACE} not found"
    return read_workload(path)


def run_one(config: Config) -> tuple[str, dict[str, object]]:
    policy, load, stringency, machine = config
    count, per_node = MACHINES[machine]
    scenario = Scenario(first=FIRST, estimates="exact", load=load, stringency=stringency, seed=0)
    nodes = {f"n{i:03d}": {"cpus": per_node} for i in range(count)} or None
    capacity = None if nodes else {"cpus": PROCESSORS}
    started = time.perf_counter()
    (result,) = emulate(_trace(), policy, capacity=capacity, scenario=scenario, nodes=nodes)
    report = dict(result.report)
    report["seconds"] = time.perf_counter() - started
    return key(config), report


def _number(value: object) -> float:
    assert isinstance(value, int | float)
    return float(value)


def _row(report: dict[str, object]) -> tuple[float, float, int, float, float]:
    """Rejected % of the jobs, utilization %, deadline misses, mean response of the
    admitted (s), seconds the replay took."""
    jobs = _number(report["jobs"])
    utilization = report["utilization"]
    assert isinstance(utilization, dict)
    return (
        100.0 * _number(report["rejected"]) / max(jobs, 1.0),
        100.0 * _number(utilization["cpus"]),
        int(_number(report["deadline_misses"])),
        _number(report["avg_response"]),
        _number(report["seconds"]),
    )


def render(cache: dict[str, dict[str, object]]) -> str:
    lines = [
        "| S | load | policy | rejected % (pool / 430x1 / 43x10) | utilization % "
        "(pool / 430x1 / 43x10) | mean response s (pool / 430x1 / 43x10) | misses | "
        "replay s (pool / 430x1 / 43x10) |",
        "|---|---|---|---|---|---|---:|---|",
    ]
    for s in STRINGENCIES:
        for load in LOADS:
            for policy in POLICIES:
                rows = [cache.get(key((policy, load, s, m))) for m in MACHINES]
                if any(r is None for r in rows):
                    continue
                cells = [_row(r) for r in rows if r is not None]
                lines.append(
                    f"| {s} | {load} | {policy} | "
                    + " / ".join(f"{c[0]:.1f}" for c in cells)
                    + " | "
                    + " / ".join(f"{c[1]:.1f}" for c in cells)
                    + " | "
                    + " / ".join(f"{c[3]:,.0f}" for c in cells)
                    + f" | {sum(c[2] for c in cells)} | "
                    + " / ".join(f"{c[4]:.1f}" for c in cells)
                    + " |"
                )
    return "\n".join(lines) + "\n"


def main() -> None:
    page = (PAGE, "QoPS reproduction", "nodes")
    run_and_render(__doc__, CACHE, configurations, key, run_one, render, page)


if __name__ == "__main__":
    main()
