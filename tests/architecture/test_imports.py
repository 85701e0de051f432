"""The core stays pure at run time too: importing it loads no clock, I/O or framework."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN_FOR_CORE = {"time", "datetime", "random", "asyncio", "threading", "logging",
                      "socket", "subprocess", "gzip", "json", "tqdm", "zoneinfo"}  # fmt: skip


def _loaded_after(statement: str) -> set[str]:
    code = (
        "import sys, json; before = set(sys.modules); "
        f"{statement}; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return {name.split(".")[0] for name in json.loads(out)}


def test_importing_the_core_loads_no_impure_module() -> None:
    loaded = _loaded_after("import berth.core.policies, berth.core.profile")
    assert not loaded & FORBIDDEN_FOR_CORE, loaded & FORBIDDEN_FOR_CORE


def test_emulator_does_not_load_the_runtime_shell() -> None:
    loaded = _loaded_after("import berth.emulate.run")
    assert "tqdm" not in loaded
    code = "import sys, berth.emulate.run; print('berth.runtime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "False"
