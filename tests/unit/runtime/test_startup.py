"""Commands import only what they run: the CLI starts instantly and the emulator never
loads the daemon's web or database stack (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from berth.emulate.samples import KTH_SAMPLE
from berth.runtime.commands import GROUPS

#: The daemon's stack: none of it may load outside ``berth serve`` and ``berth db``.
DAEMON_STACK = ("fastapi", "starlette", "sqlalchemy", "alembic", "uvicorn", "pydantic", "httpx")


def _modules_after(argv: list[str], whole_names: bool = False) -> tuple[set[str], str]:
    """Top-level packages (or, with ``whole_names``, modules) loaded by ``berth ARGV`` run
    in a fresh interpreter, and what the command printed."""
    script = (
        "import json, sys\n"
        "from berth.runtime.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"names = {{m if {whole_names!r} else m.split('.')[0] for m in sys.modules}}\n"
        "print(json.dumps(sorted(names)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1])), done.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["emulate", "--help"],
        ["emulate", str(KTH_SAMPLE), "--policy", "conservative", "--json"],
        ["emulate", str(KTH_SAMPLE), "--policy", "easy", "--selection", "bb"],
        ["submit", "--help"],
        ["queue", "--help"],
    ],
)
def test_command_never_loads_the_daemon_stack(argv: list[str]) -> None:
    loaded, printed = _modules_after(argv)
    # The command really ran: help text, or a report of the sample's 400 jobs.
    assert ("usage:" in printed) if "--help" in argv else ("400" in printed)
    assert loaded.isdisjoint(DAEMON_STACK), sorted(loaded & set(DAEMON_STACK))


def test_help_loads_no_command_group_and_a_client_command_only_its_own() -> None:
    # Building every command's arguments and importing their modules was over half of
    # `berth --help`'s start-up: only the table of commands loads for it.
    loaded, printed = _modules_after(["--help"], whole_names=True)
    assert "queue" in printed  # every command listed
    assert "emulate" in printed
    assert loaded.isdisjoint(GROUPS.values()), sorted(loaded & set(GROUPS.values()))
    loaded, _ = _modules_after(["queue", "--help"], whole_names=True)
    others = {module for group, module in GROUPS.items() if group != "client"}
    assert GROUPS["client"] in loaded
    assert loaded.isdisjoint(others), sorted(loaded & others)


def test_help_loads_neither_the_policies_nor_tqdm() -> None:
    loaded, _ = _modules_after(["--help"])
    assert "tqdm" not in loaded
    assert "http" not in loaded  # the client's HTTP code loads with a client command


def test_a_replay_loads_only_its_policy_and_no_progress_bar_it_does_not_show() -> None:
    argv = ["emulate", str(KTH_SAMPLE), "--policy", "easy", "--no-progress"]
    loaded, printed = _modules_after(argv, whole_names=True)
    assert "400" in printed
    assert "berth.core.policies.easy" in loaded  # the probe sees the policy it ran
    unused = {"tqdm", "berth.core.policies.slack", "berth.core.policies.deadline",
              "berth.core.policies.nodes", "zoneinfo", "statistics"}  # fmt: skip
    assert loaded.isdisjoint(unused), sorted(loaded & unused)


def test_the_probe_sees_the_stack_when_a_command_loads_it() -> None:
    # The daemon's composition root does load the stack: the probe would notice a leak.
    script = "import sys; import berth.runtime.bootstrap; print('fastapi' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "True"
