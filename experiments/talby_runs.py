"""Talby & Feitelson (1999) on KTH: the runs (configurations, their cache keys, one
monthly replay per configuration) and reading them back from the cache. Rendering is in
``talby_feitelson.py`` (the paper's tables) and ``talby_sweeps.py`` (Table 4 and the
sweeps of the paper's text)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from berth.emulate.run import emulate, run_jobs
from berth.emulate.scenario import Scenario
from berth.emulate.slicing import by_month
from berth.emulate.traces import read_workload
from berth.emulate.workload import Workload
from berth.runtime.paths import find_shared_trace

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "experiments" / "results" / "talby-feitelson.json"
PAGE = ROOT / "docs" / "results" / "talby-feitelson.md"
PLOTS = ROOT / "docs" / "results"
TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"
MACHINES = (100, 128)
PAPER_AWT = 2401.0
SLACK_FACTORS = (1, 3, 5, 7, 9, 11)
HEURISTICS = ("ast", "aat", "dc", "du", "dp")

#: Table 1: month -> (conservative, priority).
PAPER_TABLE_1 = {
    "1996-09": (440.6, 440.6),
    "1996-10": (3062.7, 2504.3),
    "1996-11": (4887.0, 3774.6),
    "1996-12": (2157.2, 1904.2),
    "1997-01": (3302.3, 2531.9),
    "1997-02": (2624.3, 2373.9),
    "1997-03": (2644.8, 2196.9),
    "1997-04": (2220.3, 1905.2),
    "1997-05": (2093.6, 1779.2),
    "1997-06": (1443.2, 1282.0),
    "1997-07": (399.9, 354.1),
    "1997-08": (1941.5, 1670.8),
}
PAPER_TABLE_1_AVERAGE = (2401.44, 2004.46)
PAPER_TABLE_2 = {1: 2156, 3: 2004, 5: 2027, 7: 1986, 9: 1939, 11: 1956}
#: Table 3: month -> (all jobs, hi-pri, lo-pri) with unequal priorities.
PAPER_TABLE_3 = {
    "1996-09": (440.6, 0.0, 550.8),
    "1996-10": (2783.7, 2295.6, 2906.0),
    "1996-11": (4797.7, 4460.2, 1882.3),
    "1996-12": (2026.0, 1814.8, 2078.8),
    "1997-01": (2777.4, 2603.8, 2820.8),
    "1997-02": (2728.7, 2369.2, 2818.7),
    "1997-03": (2220.9, 1687.2, 2354.6),
    "1997-04": (2056.2, 1797.4, 2120.9),
    "1997-05": (1889.3, 1491.9, 1988.7),
    "1997-06": (1374.7, 1323.3, 1387.6),
    "1997-07": (372.6, 320.2, 385.8),
    "1997-08": (1847.1, 1817.5, 1854.5),
}
PAPER_TABLE_3_AVERAGE = (2226.17, 1955.28, 2294.0)
#: Table 5: heuristic -> (equal, unequal, hi-pri, lo-pri).
PAPER_TABLE_5 = {
    "ast": (2004.5, 2226.2, 1955.3, 2294.0),
    "aat": (2088.5, 2223.3, 1952.6, 2291.1),
    "dc": (2179.9, 2250.1, 1988.1, 2315.7),
    "du": (2206.0, 2279.8, 2048.9, 2337.6),
    "dp": (2120.0, 2228.5, 1962.3, 2295.1),
}
HIGH, LOW = "political=1,user=1", "political=0,user=0"

#: Table 4: the priority gap between the high group (every fifth job) and the others.
PAPER_TABLE_4 = {0.0: 2004.46, 0.5: 2020.40, 1.0: 2044.39, 1.5: 2017.82, 2.0: 2226.17}
GAPS = (0.0, 0.5, 1.0, 1.5, 2.0)
#: The AWT sweep: multiples of the measured conservative average wait.
AWT_FACTORS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0)
#: The alpha weights: the paper's (all 1), and its "importance of priority" test.
ALPHAS = {"1": {}, "p1-rest0.2": {"alpha_p": 1.0, "alpha_u": 0.2, "alpha_t": 0.2, "alpha_f": 0.2}}
#: The sweeps run on the machine the paper names.
SWEEP_MACHINE = 128

#: (processors, policy, heuristic, slack factor, priorities, AWT: "conservative", its
#: multiple "conservative*F" or seconds; alpha weights: a key of ALPHAS).
Config = tuple[int, str, str, int, str, str, str]


def key(config: Config) -> str:
    """The run's cache key (runs with the paper's alphas keep their earlier key)."""
    parts = config[:6] if config[6] == "1" else config
    return "|".join(str(part) for part in parts)


def gap_priorities(gap: float) -> str:
    return "equal" if gap == 0 else "every-nth:5" if gap == 2 else f"every-nth:5:{gap:g}"


def gap_label(gap: float) -> str:
    """The high group's priority class label in a report."""
    return f"political={gap / 2:g},user={gap / 2:g}"


def configurations() -> list[Config]:
    out: list[Config] = []
    for machine in MACHINES:
        out += [
            (machine, "conservative", "-", 0, "equal", "-", "1"),
            (machine, "easy", "-", 0, "equal", "-", "1"),
        ]
    # 128 processors first: it is the machine the paper names and the faster one (a
    # shorter queue); a 100-processor slack run takes several minutes.
    for machine in sorted(MACHINES, reverse=True):
        out.append((machine, "slack", "ast", 3, "equal", "conservative", "1"))
        out += [
            (machine, "slack", "ast", sf, "equal", "conservative", "1")
            for sf in SLACK_FACTORS
            if sf != 3
        ]
        for heuristic in HEURISTICS:
            for priorities in ("equal", "every-nth:5"):
                if (heuristic, priorities) != ("ast", "equal"):
                    out.append((machine, "slack", heuristic, 3, priorities, "conservative", "1"))
        out.append((machine, "slack", "ast", 3, "equal", str(PAPER_AWT), "1"))
    # Table 4, the alpha test and the AWT sweep (the paper's text), on 128 processors.
    sweep = SWEEP_MACHINE
    out += [(sweep, "slack", "ast", 3, gap_priorities(g), "conservative", "1")
            for g in GAPS if g not in (0.0, 2.0)]  # fmt: skip
    out += [(sweep, "slack", "ast", 3, p, "conservative", "p1-rest0.2")
            for p in ("equal", "every-nth:5")]  # fmt: skip
    out += [(sweep, "slack", "ast", 3, "equal", f"conservative*{f:g}", "1")
            for f in AWT_FACTORS if f != 1.0]  # fmt: skip
    out.append((sweep, "slack", "ast", 3, "equal", "monthly", "1"))
    return out


def yearly(months: list[dict[str, Any]]) -> float:
    """Total wait over total jobs (the paper's yearly average)."""
    ran = [m["jobs"] - m["rejected"] for m in months]
    total = sum(m["avg_wait"] * n for m, n in zip(months, ran, strict=True))
    return float(total / sum(ran))


def class_wait(months: list[dict[str, Any]], label: str) -> float:
    jobs = [m.get("priority_classes", {}).get(label, {"jobs": 0, "avg_wait": 0.0}) for m in months]
    count = sum(j["jobs"] for j in jobs)
    return sum(j["jobs"] * j["avg_wait"] for j in jobs) / count if count else 0.0


#: A run: its config and the AWT it uses (slack only; a list: one per month).
Task = tuple[Config, float | list[float] | None]


def tasks(configs: list[Config], cache: dict[str, Any]) -> list[Task]:
    """Each config with its AWT: the measured conservative yearly average, or literal."""
    out: list[Task] = []
    for config in configs:
        machine, policy, _, _, _, awt, _ = config
        if policy != "slack":
            out.append((config, None))
        elif awt == "monthly":  # each month its own conservative average (section 3.2)
            reference = cache[key((machine, "conservative", "-", 0, "equal", "-", "1"))]
            out.append((config, [max(1.0, m["avg_wait"]) for m in reference["months"]]))
        elif not awt.startswith("conservative"):
            out.append((config, float(awt)))
        else:
            reference = cache[key((machine, "conservative", "-", 0, "equal", "-", "1"))]
            factor = float(awt.partition("*")[2] or 1.0)
            out.append((config, factor * yearly(reference["months"])))
    return out


def task_key(task: Task) -> str:
    return key(task[0])


def run_one(task: Task) -> tuple[str, dict[str, Any]]:
    config, awt = task
    machine, policy, heuristic, slack_factor, priorities, _, alphas = config
    path = find_shared_trace(TRACE)
    assert path is not None, f"{TRACE} not found"
    options: dict[str, object] = {}
    if policy == "slack":
        options = {"heuristic": heuristic, "slack_factor": slack_factor, "awt": awt,
                   **ALPHAS[alphas]}  # fmt: skip
    scenario = Scenario(priorities=None if priorities == "equal" else priorities)
    started = time.perf_counter()
    if isinstance(awt, list):  # one AWT per month: each month replayed with its own
        workload = read_workload(path)
        jobs = scenario.prepare(workload.jobs, {"cpus": machine})
        sliced = Workload(jobs, unix_start=workload.unix_start, timezone=workload.timezone)
        parts = by_month(sliced)
        assert len(parts) == len(awt), "one AWT per month"
        results = [
            run_jobs(part, policy, {"cpus": machine}, month, policy_options={**options, "awt": a})
            for (month, part), a in zip(parts, awt, strict=True)
        ]
        months = [{"label": r.label, **r.report} for r in results]
        return key(config), {"months": months, "options": {**options, "awt": awt},
                             "seconds": time.perf_counter() - started}  # fmt: skip
    results = emulate(
        read_workload(path),
        policy,
        capacity={"cpus": machine},
        scenario=scenario,
        slice_by="month",
        policy_options=options,
    )
    months = [{"label": r.label, **r.report} for r in results]
    return key(config), {
        "months": months,
        "options": options,
        "seconds": time.perf_counter() - started,
    }


def get_run(cache: dict[str, Any], *config: object) -> list[dict[str, Any]] | None:
    run = cache.get("|".join(str(c) for c in config))
    return None if run is None else run["months"]


def slack_run(cache: dict[str, Any], machine: int, heuristic: str = "ast", sf: int = 3,
           priorities: str = "equal", awt: str = "conservative",
           alphas: str = "1") -> list[dict[str, Any]] | None:  # fmt: skip
    run = cache.get(key((machine, "slack", heuristic, sf, priorities, awt, alphas)))
    return None if run is None else run["months"]


def cons_run(
    cache: dict[str, Any], machine: int, policy: str = "conservative"
) -> list[dict[str, Any]] | None:
    return get_run(cache, machine, policy, "-", 0, "equal", "-")


def reduction(before: float, after: float) -> str:
    return f"{100 * (before - after) / before:.1f}%" if before else "–"
