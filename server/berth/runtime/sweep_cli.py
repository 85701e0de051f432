"""``berth emulate WORKLOAD --sweep grid.toml``: a grid of replays on Dask, one table out.

Reads the grid (:mod:`berth.emulate.sweep`), runs each point as a Dask task on the
cluster ``--dask`` names (a local cluster of ``--workers`` processes by default; see
:func:`berth.emulate.parallel.on_dask`), with a progress bar on stderr, and prints one
table in the grid's order (and writes it as CSV with ``--csv``). Imported only for a
sweep: it loads Dask.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tomllib
from typing import Any

from berth.emulate.output import format_table
from berth.emulate.parallel import on_dask, run_all
from berth.emulate.sweep import POINT, Point, grid_points, run_point
from berth.runtime.options import node_cluster, node_group, parse_capacity

#: The report's columns shown after the point's.
SHOWN = ("jobs", "rejected", "avg_wait", "avg_bounded_slowdown", "utilization", "seconds")


def run_sweep(args: argparse.Namespace) -> int:
    if args.compression_budget is not None:
        print(
            f"berth emulate --sweep {args.sweep}: --compression-budget is not taken by a "
            "sweep (each point replays with whole compression); run that replay alone",
            file=sys.stderr,
        )
        return 1
    try:
        points = _points(args)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as error:
        print(f"berth emulate --sweep {args.sweep}: {error}", file=sys.stderr)
        return 1
    show = sys.stderr.isatty() if args.progress is None else args.progress
    rows: dict[Point, dict[str, object]] = {}
    print(f"{len(points)} replays of {args.workload} on "
          f"{args.dask or f'a local Dask cluster of {args.workers} workers'}",
          file=sys.stderr)  # fmt: skip
    from tqdm import tqdm

    with (
        on_dask(args.dask, args.workers) as client,
        tqdm(
            total=len(points), desc="sweep", unit="run", file=sys.stderr, disable=not show
        ) as bar,  # fmt: skip
    ):
        for point, row in run_all(client, run_point, points):
            rows[point] = row
            bar.update(1)
    table = [rows[point] for point in points]
    print(format_table(table, [*POINT, *SHOWN]))
    if args.csv:
        _write_csv(args, table)
    return 0


def _points(args: argparse.Namespace) -> list[Point]:
    grid: dict[str, Any] = tomllib.loads(args.sweep.read_text())
    capacity = parse_capacity(grid["capacity"]) if "capacity" in grid else args.capacity
    groups = grid.get("nodes")
    if groups is not None and not isinstance(groups, list):
        raise ValueError('nodes: a list of groups, such as ["16xcpus=32,mem_gb=128"]')
    nodes = node_cluster([node_group(g) for g in groups]) if groups else None
    if nodes is None and args.nodes:
        nodes = node_cluster(args.nodes)
    workload = str(args.workload.resolve())  # the workers read it: the same path
    return grid_points(grid, workload, capacity, nodes)


def _write_csv(args: argparse.Namespace, table: list[dict[str, object]]) -> None:
    columns = list(dict.fromkeys(key for row in table for key in row))
    with args.csv.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, columns)
        writer.writeheader()
        for row in table:
            writer.writerow({k: _cell(v) for k, v in row.items()})


def _cell(value: object) -> object:
    if isinstance(value, dict):
        return ";".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in value.items())  # fmt: skip
    return value
