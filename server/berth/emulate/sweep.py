"""A sweep: one workload replayed under a grid of policies, selections, estimate models
and seeds, each replay a task on Dask (``berth emulate WORKLOAD --sweep grid.toml``).

The grid is TOML; every key is optional but ``policies``::

    policies = ["easy", "conservative"]      # any of berth emulate's --policy but gang
    selections = ["ff", "bb"]                # for the policies that take a selection
    estimates = ["user", "exact", "badness:2"]
    seeds = [0, 1, 2]                        # seed the estimate models and load draws
    first = 5000                             # replay only the first N jobs
    load = 1.0                               # offered load factor
    capacity = "cpus=128"                    # or nodes = ["16xcpus=32,mem_gb=128"]

A run is a pure function of its point of the grid (:func:`run_point`): the table is the
same whichever Dask cluster computed it. Rows come back in the grid's order. Errors in the
grid name the key and what it takes. No I/O but reading the workload in the worker.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from berth.core.catalog import POLICY_NAMES, POLICY_OPTIONS, SELECTIONS
from berth.emulate.estimates import parse_estimates
from berth.emulate.run import emulate
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.emulate.workload import Workload

#: The grid's keys, and the columns of a row that name its point.
KEYS = ("policies", "selections", "estimates", "seeds", "first", "load", "capacity", "nodes")
POINT = ("policy", "selection", "estimates", "seed")


@dataclass(frozen=True, slots=True)
class Point:
    """One replay of the sweep."""

    workload: str
    policy: str
    selection: str | None
    estimates: str
    seed: int
    first: int | None = None
    load: float = 1.0
    capacity: tuple[tuple[str, int], ...] | None = None
    nodes: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] | None = None


def grid_points(
    grid: dict[str, Any],
    workload: str,
    capacity: dict[str, int] | None = None,
    nodes: dict[str, dict[str, int]] | None = None,
) -> list[Point]:
    """The points of a parsed grid, in order (policy, selection, estimates, seed);
    ``ValueError`` naming the key that cannot be used. ``capacity`` and ``nodes`` are
    the grid's, already parsed (the command line reads them)."""
    unknown = sorted(set(grid) - set(KEYS))
    if unknown:
        raise ValueError(f"unknown key(s) {unknown}; a grid takes {', '.join(KEYS)}")
    policies = _list(grid, "policies", None)
    for policy in policies:
        if policy not in POLICY_NAMES:
            raise ValueError(f"policies: {policy!r} is not one of {', '.join(POLICY_NAMES)}")
    selections = _list(grid, "selections", ["ff"])
    for selection in selections:
        if selection not in SELECTIONS:
            raise ValueError(f"selections: {selection!r} is not one of {', '.join(SELECTIONS)}")
    estimates = _list(grid, "estimates", ["user"])
    for model in estimates:
        parse_estimates(model)
    seeds = _list(grid, "seeds", [0])
    if not all(isinstance(s, int) for s in seeds):
        raise ValueError("seeds: a list of whole numbers")
    first = grid.get("first")
    load = float(grid.get("load", 1.0))
    frozen_capacity = None if capacity is None else tuple(sorted(capacity.items()))
    frozen_nodes = (
        None
        if nodes is None
        else tuple((name, tuple(sorted(a.items()))) for name, a in nodes.items())
    )
    points = []
    for policy, selection, model, seed in itertools.product(policies, selections, estimates,
                                                            seeds):  # fmt: skip
        takes_selection = "selection" in POLICY_OPTIONS.get(policy, ())
        if not takes_selection and selection != selections[0]:
            continue  # the same run again: the policy takes no selection
        points.append(
            Point(
                workload,
                policy,
                selection if takes_selection else None,
                model,
                seed,
                first,
                load,
                frozen_capacity,
                frozen_nodes,
            )
        )
    return points


def _list(grid: dict[str, Any], key: str, default: list[Any] | None) -> list[Any]:
    value = grid.get(key, default)
    if value is None:
        raise ValueError(f"{key}: give at least one (a list)")
    if not isinstance(value, list) or not value:
        raise ValueError(f"{key}: a non-empty list")
    return value


@lru_cache(maxsize=4)
def _workload(path: str) -> Workload:
    """Each worker reads a workload once for all its runs."""
    return read_workload(Path(path))


def run_point(point: Point) -> dict[str, object]:
    """One replay: the point's columns, the report and the seconds it took."""
    began = time.perf_counter()
    workload = _workload(point.workload)
    options = {} if point.selection is None else {"selection": point.selection}
    scenario = Scenario(first=point.first, estimates=point.estimates, load=point.load,
                        seed=point.seed)  # fmt: skip
    (result,) = emulate(
        workload,
        point.policy,
        capacity=None if point.capacity is None else dict(point.capacity),
        scenario=scenario,
        policy_options=options,
        nodes=None if point.nodes is None else {n: dict(a) for n, a in point.nodes},
    )
    return {
        "policy": point.policy,
        "selection": point.selection or "-",
        "estimates": point.estimates,
        "seed": point.seed,
        **result.report,
        "seconds": round(time.perf_counter() - began, 2),
    }
