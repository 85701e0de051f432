"""``berth emulate --sweep``: a grid of replays on Dask, the same numbers as replaying
each point alone, in the grid's order; a bad grid names its key."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from berth.emulate.run import emulate
from berth.emulate.samples import KTH_SAMPLE
from berth.emulate.scenario import Scenario
from berth.emulate.sweep import grid_points, run_point
from berth.emulate.traces import read_workload
from berth.runtime.main import main

pytest.importorskip("distributed")

GRID = """
policies = ["easy", "conservative", "fcfs"]
selections = ["ff", "bb"]
estimates = ["user", "badness:2"]
seeds = [0, 1]
first = 200
"""


def test_a_sweep_prints_every_point_with_the_numbers_of_a_replay_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    table = tmp_path / "sweep.csv"
    argv = ["emulate", str(KTH_SAMPLE), "--sweep", str(grid), "--workers", "2",
            "--csv", str(table), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    with table.open() as stream:
        rows = list(csv.DictReader(stream))
    # fcfs takes no selection: 2 policies x 2 selections x 2 x 2, and fcfs x 2 x 2.
    assert len(rows) == 20
    assert [r["policy"] for r in rows[:8]] == ["easy"] * 8
    assert (rows[0]["selection"], rows[0]["estimates"], rows[0]["seed"]) == ("ff", "user", "0")
    workload = read_workload(KTH_SAMPLE)
    for row in rows:
        options = {} if row["selection"] == "-" else {"selection": row["selection"]}
        scenario = Scenario(first=200, estimates=row["estimates"], seed=int(row["seed"]))
        (alone,) = emulate(workload, row["policy"], scenario=scenario, policy_options=options)
        assert float(row["avg_wait"]) == pytest.approx(alone.report["avg_wait"])
        assert int(row["jobs"]) == alone.report["jobs"] == 200
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split()[:4] == ["policy", "selection", "estimates", "seed"]


def test_a_point_is_the_same_whoever_runs_it() -> None:
    (point,) = grid_points({"policies": ["easy"], "first": 100}, str(KTH_SAMPLE))
    assert run_point(point) | {"seconds": 0} == run_point(point) | {"seconds": 0}


@pytest.mark.parametrize(
    ("grid", "says"),
    [
        ({}, "policies: give at least one"),
        ({"policies": ["nope"]}, "policies: 'nope' is not one of"),
        ({"policies": ["easy"], "selections": ["xx"]}, "selections: 'xx' is not one of"),
        ({"policies": ["easy"], "estimates": ["magic"]}, "estimates"),
        ({"policies": ["easy"], "seeds": ["a"]}, "seeds: a list of whole numbers"),
        ({"policies": ["easy"], "colour": 1}, "unknown key(s) ['colour']"),
    ],
)
def test_a_bad_grid_names_its_key(grid: dict[str, object], says: str) -> None:
    with pytest.raises(ValueError, match=said(says)):
        grid_points(grid, str(KTH_SAMPLE))


def said(text: str) -> str:
    import re

    return re.escape(text)


def test_a_grid_that_cannot_be_read_exits_1_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text("policies = [easy")
    assert main(["emulate", str(KTH_SAMPLE), "--sweep", str(grid)]) == 1
    assert f"--sweep {grid}" in capsys.readouterr().err


def test_a_compression_budget_is_refused_by_a_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text('policies = ["easy"]')
    argv = ["emulate", str(KTH_SAMPLE), "--sweep", str(grid), "--compression-budget", "8"]
    assert main(argv) == 1
    assert "--compression-budget is not taken by a sweep" in capsys.readouterr().err


def test_a_local_cluster_starts_while_another_holds_dasks_default_port() -> None:
    """A second sweep (or a reproduction running) on the same host holds port 8787:
    the local cluster's scheduler takes a free port instead of failing."""
    import socket

    from berth.emulate.parallel import on_dask

    holder: socket.socket | None = None
    bound = socket.socket()
    try:
        bound.bind(("127.0.0.1", 8787))
        holder = bound
    except OSError:
        bound.close()  # someone else holds it already: the same situation
    try:
        with on_dask("local", 1) as client:
            assert client.submit(sum, [1, 2, 3]).result(timeout=60) == 6
    finally:
        if holder is not None:
            holder.close()
