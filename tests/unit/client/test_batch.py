"""Batch scripts' directives and Slurm's time formats, as ``berth submit`` reads them."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from berth_client.batch import ScriptError, parse_directives, parse_time, read_script
from berth_client.submit_cli import add_options


def _berth_lines() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        add_help=False, exit_on_error=False, argument_default=argparse.SUPPRESS
    )
    add_options(parser)
    return parser


def _directives(text: str, ignore_unknown: bool = False) -> dict[str, object]:
    return parse_directives(text, _berth_lines(), ignore_unknown).options


@pytest.mark.parametrize(
    ("text", "bare", "seconds"),
    [
        ("90", "seconds", 90),  # Berth's own: seconds
        ("90", "minutes", 5400),  # #SBATCH -t 90: minutes, as in Slurm
        ("1:30", "seconds", 90),  # MM:SS
        ("1:30:00", "seconds", 5400),  # HH:MM:SS
        ("2-00:00:00", "seconds", 172_800),  # D-HH:MM:SS
        ("1-12", "seconds", 129_600),  # D-HH
        ("1-0:30", "seconds", 88_200),  # D-HH:MM
    ],
)
def test_slurms_time_formats(text: str, bare: str, seconds: int) -> None:
    assert parse_time(text, bare) == seconds


@pytest.mark.parametrize("text", ["", "1:2:3:4", "abc", "0", "-5", "unlimited", "1-"])
def test_a_time_berth_cannot_read_names_the_formats(text: str) -> None:
    with pytest.raises(ValueError, match="time"):
        parse_time(text)


SBATCH = """#!/bin/bash
# a comment, then the directives
#SBATCH -J sweep
#SBATCH --time=1:30:00
#SBATCH -N 2 --ntasks-per-node=4
#SBATCH -c 2 --mem=8G
#SBATCH --gres=gpu:4
#SBATCH -o out-%j.txt --requeue
#SBATCH -p batch -A physics
srun ./app
#SBATCH -t 5   (after the first command: not a directive)
"""


def test_sbatch_lines_map_onto_slots_per_node() -> None:
    assert _directives(SBATCH) == {
        "name": "sweep",
        "time_limit": 5400,
        "slots": 8,  # 2 nodes x 4 tasks
        "per_slot": {
            "cpus": 2,
            "mem_gb": 2,
            "gpus": 1,
        },  # 8G and 4 GPUs a node, over 4 tasks a node
        "nodes": 2,
        "output": "out-%j.txt",
        "requeue": True,
        "partition": "batch",
        "account": "physics",
    }


def test_berth_lines_win_over_sbatch_lines() -> None:
    script = "#!/bin/sh\n#SBATCH -t 10 -n 4\n#BERTH -t 2:00 --name mine\ntrue\n"
    options = _directives(script)
    assert options["time_limit"] == 120
    assert options["name"] == "mine"
    assert options["slots"] == 4
    assert options["per_slot"] == {"cpus": 1}


def test_mem_per_cpu_and_a_single_task() -> None:
    options = _directives("#!/bin/sh\n#SBATCH -c 4 --mem-per-cpu=2000\ntrue\n")
    assert options["slots"] == 1
    assert options["per_slot"] == {"cpus": 4, "mem_gb": 8}  # 4 x 2000 MB, rounded up


def test_an_unknown_directive_names_its_line_unless_ignored() -> None:
    script = "#!/bin/sh\n#SBATCH -t 10\n#SBATCH --mail-user=me@example.org\ntrue\n"
    with pytest.raises(ScriptError, match=r"line 3: #SBATCH directive --mail-user=me@example.org"):
        _directives(script)
    ignored = parse_directives(script, _berth_lines(), ignore_unknown=True)
    assert ignored.options == {"time_limit": 600}
    assert ignored.warnings == [
        "line 3: #SBATCH directive --mail-user=me@example.org is not supported; ignored"
    ]


def test_dependencies_and_arrays_are_read_as_slurm_writes_them() -> None:
    script = "#!/bin/sh\n#SBATCH --dependency=afterok:12,singleton\n#SBATCH -a 0-9:3%2\ntrue\n"
    assert _directives(script) == {"dependency": "afterok:12,singleton", "array": "0-9:3%2"}
    no = "#!/bin/sh\n#SBATCH -d afterany:3 --kill-on-invalid-dep=no\ntrue\n"
    assert _directives(no) == {"dependency": "afterany:3", "kill_on_invalid_dep": False}
    yes = "#!/bin/sh\n#BERTH --kill-on-invalid-dep yes\ntrue\n"
    assert _directives(yes) == {"kill_on_invalid_dep": True}
    with pytest.raises(ScriptError, match="line 2: #SBATCH --kill-on-invalid-dep=maybe"):
        _directives("#!/bin/sh\n#SBATCH --kill-on-invalid-dep=maybe\ntrue\n")


def test_gpus_that_do_not_divide_among_the_tasks_are_refused() -> None:
    with pytest.raises(ValueError, match="3 GPUs a node do not divide among 2 tasks"):
        _directives("#!/bin/sh\n#SBATCH -N 1 --ntasks-per-node=2 --gpus-per-node=3\ntrue\n")


def test_a_script_needs_its_interpreter_line(tmp_path: Path) -> None:
    plain = tmp_path / "plain.sh"
    plain.write_text("echo no shebang\n")
    with pytest.raises(ScriptError, match="must start with #!"):
        read_script(str(plain))
    big = tmp_path / "big.sh"
    big.write_text("#!/bin/sh\n" + "#" * 70_000)
    with pytest.raises(ScriptError, match="larger than 64 KiB"):
        read_script(str(big))
    with pytest.raises(ScriptError, match="cannot read the script"):
        read_script(str(tmp_path / "missing.sh"))


def test_a_deadline_is_seconds_or_a_local_date_and_time() -> None:
    import datetime

    from berth_client.batch import deadline_arg

    assert deadline_arg("1900000000") == 1_900_000_000
    moment = datetime.datetime(2026, 12, 1, 18, 0).astimezone()
    assert deadline_arg("2026-12-01T18:00") == int(moment.timestamp())
    tomorrow = datetime.datetime.now().astimezone().date() + datetime.timedelta(days=1)
    at = datetime.datetime.combine(tomorrow, datetime.time()).astimezone()
    assert deadline_arg("tomorrow") == int(at.timestamp())  # (Slurm's words too)
    with pytest.raises(argparse.ArgumentTypeError, match=r"YYYY-MM-DD.*now\+COUNT"):
        deadline_arg("soon")
