"""Batch scripts: ``#BERTH`` and ``#SBATCH`` directives, and Slurm's time formats.

``berth submit job.sh [args...]`` reads the directives at the top of the script (every
line up to the first that is neither blank nor a comment, as sbatch does). A ``#BERTH``
line holds ``berth submit`` options spelled exactly as on the command line; a
``#SBATCH`` line holds Slurm's, for the common subset :func:`_sbatch_parser` reads and
:func:`_from_slurm` maps onto Berth's request (``docs/slurm.md`` has the table). Options on the command line win
over ``#BERTH`` lines, which win over ``#SBATCH`` lines. A directive Berth does not
know is an error naming its line (:class:`ScriptError`); with ``--ignore-unknown`` a
warning.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import Any

#: The largest script accepted (the daemon keeps each waiting job's script in memory).
MAX_SCRIPT_BYTES = 64 * 1024

#: Slurm's memory units (a bare number is megabytes).
_MEMORY_UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}


class ScriptError(ValueError):
    """A script Berth cannot take; the message names the line and the directive."""


def parse_time(text: str, bare: str = "seconds") -> int:
    """A time limit in seconds from Slurm's formats: ``MM:SS``, ``HH:MM:SS``, ``D-HH``,
    ``D-HH:MM``, ``D-HH:MM:SS``; a bare number counts ``bare`` units (Berth's command
    line: seconds; ``#SBATCH``: minutes, as in Slurm). ``ValueError`` names the format."""
    text = text.strip()
    match = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", text)
    if match is None or text.lower() in ("unlimited", "infinite"):
        raise ValueError(f"time {text!r}: expected SECONDS, MM:SS, HH:MM:SS or D-HH[:MM[:SS]]")
    days, first, second, third = match.groups()
    if days is not None:  # D-HH, D-HH:MM, D-HH:MM:SS
        hours, minutes, seconds = int(first), int(second or 0), int(third or 0)
        total = ((int(days) * 24 + hours) * 60 + minutes) * 60 + seconds
    elif third is not None:  # HH:MM:SS
        total = (int(first) * 60 + int(second)) * 60 + int(third)
    elif second is not None:  # MM:SS
        total = int(first) * 60 + int(second)
    else:
        total = int(first) * (60 if bare == "minutes" else 1)
    if total <= 0:
        raise ValueError(f"time {text!r} must be longer than zero")
    return total


def time_arg(text: str) -> int:
    """argparse ``type=`` for ``-t``: Berth's seconds or any of Slurm's formats."""
    try:
        return parse_time(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _memory_gb(text: str) -> float:
    """Slurm's ``--mem``/``--mem-per-cpu`` value in GiB (a bare number is MiB)."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)B?", text.strip().upper())
    if match is None:
        raise ValueError(f"memory {text!r}: expected a size such as 4000, 4G or 512M")
    return float(match.group(1)) * _MEMORY_UNITS[match.group(2) or "M"] / 1024


def _sbatch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    add = parser.add_argument
    add("-J", "--job-name", dest="name")
    add("-t", "--time", dest="time")
    add("-N", "--nodes", dest="nodes", type=int)
    add("-n", "--ntasks", dest="ntasks", type=int)
    add("--ntasks-per-node", dest="ntasks_per_node", type=int)
    add("-c", "--cpus-per-task", dest="cpus_per_task", type=int)
    add("--mem", dest="mem")
    add("--mem-per-cpu", dest="mem_per_cpu")
    add("--gres", dest="gres")
    add("--gpus-per-node", dest="gpus_per_node")
    add("--exclusive", dest="exclusive", action="store_true")
    add("-o", "--output", dest="output")
    add("-e", "--error", dest="error")
    add("-D", "--chdir", dest="chdir")
    add("-p", "--partition", dest="partition")
    add("-A", "--account", dest="account")
    add("--deadline", dest="deadline")
    add("-b", "--begin", dest="begin")
    add("--requeue", dest="requeue", action="store_true")
    add("-H", "--hold", dest="hold", action="store_true")
    add("--dependency", "-d", dest="dependency")
    add("--kill-on-invalid-dep", dest="kill_on_invalid_dep", type=yes_no)
    add("-a", "--array", dest="array")
    add("--parsable", dest="parsable", action="store_true")
    return parser


def yes_no(text: str) -> bool:
    """Slurm's ``yes``/``no``."""
    if text.lower() not in ("yes", "no"):
        raise ValueError(f"expected yes or no, got {text!r}")
    return text.lower() == "yes"


class Directives:
    """What a script's directives ask for, as ``berth submit`` options (``options``),
    with the warnings for what was ignored. (No dataclass: it would cost ``berth``'s
    start-up the import of :mod:`inspect`.)"""

    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.warnings: list[str] = []


def read_script(path: str) -> str:
    """The script's text; ``ScriptError`` if it is not one Berth can run."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SCRIPT_BYTES + 1)
    except OSError as error:
        raise ScriptError(f"cannot read the script: {error}") from None
    if len(data) > MAX_SCRIPT_BYTES:
        raise ScriptError(f"{path} is larger than {MAX_SCRIPT_BYTES // 1024} KiB")
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise ScriptError(f"{path} is not text (UTF-8)") from None
    if not text.startswith("#!"):
        raise ScriptError(
            f"{path}: the first line must start with #! and an interpreter (#!/bin/bash)"
        )
    return text


def directive_lines(script: str) -> list[tuple[int, str, list[str]]]:
    """``(line number, kind, words)`` of each ``#BERTH``/``#SBATCH`` line at the top."""
    import shlex

    found = []
    for number, line in enumerate(script.splitlines()[1:], start=2):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break  # the first command ends the directives, as in sbatch
        for kind in ("#BERTH", "#SBATCH"):
            if stripped.startswith(kind) and stripped[len(kind) : len(kind) + 1] in ("", " ", "\t"):
                words = shlex.split(stripped[len(kind) :], comments=True)
                found.append((number, kind, words))
    return found


def parse_directives(
    script: str, berth_options: argparse.ArgumentParser, ignore_unknown: bool = False
) -> Directives:
    """The options a script's directives give; ``#BERTH`` lines are parsed by
    ``berth_options`` (``berth submit``'s own options), ``#SBATCH`` lines mapped."""
    sbatch = _sbatch_parser()
    slurm: dict[str, Any] = {}
    berth: dict[str, Any] = {}
    result = Directives()
    for number, kind, words in directive_lines(script):
        parser = berth_options if kind == "#BERTH" else sbatch
        try:
            given, unknown = parser.parse_known_args(words, argparse.Namespace())
        except (argparse.ArgumentError, ValueError) as error:
            raise ScriptError(f"line {number}: {kind} {' '.join(words)}: {error}") from None
        if unknown:
            message = f"line {number}: {kind} directive {' '.join(unknown)} is not supported"
            if not ignore_unknown:
                raise ScriptError(message + " (--ignore-unknown skips it)")
            result.warnings.append(message + "; ignored")
        values = {k: v for k, v in vars(given).items() if v is not None and v is not False}
        if getattr(given, "kill_on_invalid_dep", None) is False:
            values["kill_on_invalid_dep"] = False  # "no" is an answer, not an absence
        (berth if kind == "#BERTH" else slurm).update(values)
    try:
        mapped = _from_slurm(slurm)
    except ValueError as error:
        raise ScriptError(f"#SBATCH: {error}") from None
    result.options = {**mapped, **berth}
    return result


def _from_slurm(given: dict[str, Any]) -> dict[str, Any]:
    """``berth submit`` options for the ``#SBATCH`` values ``given``."""
    options: dict[str, Any] = {}
    for name in ("name", "output", "error", "chdir", "partition", "account", "array",
                 "dependency", "kill_on_invalid_dep"):  # fmt: skip
        if name in given:
            options[name] = given[name]
    for flag in ("requeue", "parsable", "hold"):
        if given.get(flag):
            options[flag] = True
    if "time" in given:
        options["time_limit"] = parse_time(given["time"], bare="minutes")
    if "deadline" in given:
        options["deadline"] = _moment("--deadline", given["deadline"])
    if "begin" in given:
        options["begin_time"] = _moment("--begin", given["begin"])
    shape_keys = ("nodes", "ntasks", "ntasks_per_node", "cpus_per_task", "mem", "mem_per_cpu",
                  "gres", "gpus_per_node", "exclusive")  # fmt: skip
    if any(key in given for key in shape_keys):
        options.update(_slots(given))
    return options


def deadline_arg(text: str) -> int:
    """argparse ``type=`` for ``--deadline``: cluster seconds, or a local moment as
    Slurm writes it (``2026-12-01T18:00``, ``now+2hours``: :mod:`berth_client.moments`)."""
    return _moment_arg("--deadline", text)


def begin_arg(text: str) -> int:
    """argparse ``type=`` for ``--begin``, as :func:`deadline_arg` reads it."""
    return _moment_arg("--begin", text)


def _moment_arg(option: str, text: str) -> int:
    if text.strip().isdigit():
        return int(text)
    try:
        return _moment(option, text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _moment(option: str, text: str) -> int:
    """Slurm's ``--deadline`` or ``--begin`` (:mod:`berth_client.moments`, local time)
    as Unix seconds; ``ValueError`` naming ``option``."""
    import datetime

    from berth_client.moments import moment

    try:
        return int(moment(text, datetime.datetime.now().astimezone()).timestamp())
    except ValueError as error:
        raise ValueError(f"{option} {error}") from None


def _slots(given: dict[str, Any]) -> dict[str, Any]:
    """Slurm's shape as Berth's slots: a task is a slot of ``cpus-per-task`` cpus; memory
    and GPUs asked per node or per cpu are shared out over the slots of a node."""
    nodes = given.get("nodes")
    per_node = given.get("ntasks_per_node")
    tasks = given.get("ntasks") or (nodes * per_node if nodes and per_node else None)
    tasks = tasks or nodes or 1
    cpus = given.get("cpus_per_task") or 1
    per_slot: dict[str, int] = {"cpus": cpus}
    slots_per_node = tasks / nodes if nodes else tasks
    if "mem" in given:
        per_slot["mem_gb"] = math.ceil(_memory_gb(given["mem"]) / slots_per_node)
    elif "mem_per_cpu" in given:
        per_slot["mem_gb"] = math.ceil(_memory_gb(given["mem_per_cpu"]) * cpus)
    gpus = given.get("gpus_per_node")
    if "gres" in given:
        match = re.fullmatch(r"gpu(?::[\w.-]+)?:(\d+)", given["gres"])
        if match is None:
            raise ValueError(f"--gres {given['gres']!r}: Berth reads gpu:N (or gpu:TYPE:N)")
        gpus = match.group(1)
    if gpus is not None:
        per_node_gpus = int(str(gpus).rsplit(":", 1)[-1])
        if per_node_gpus % slots_per_node:
            raise ValueError(
                f"{per_node_gpus} GPUs a node do not divide among {slots_per_node:g} tasks a node"
            )
        per_slot["gpus"] = int(per_node_gpus // slots_per_node)
    options: dict[str, Any] = {"slots": tasks, "per_slot": per_slot}
    if nodes:
        options["nodes"] = nodes
    if given.get("exclusive"):
        options["exclusive"] = True
    return options
