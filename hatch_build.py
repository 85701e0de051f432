"""Wheel build hook: the C availability profile compiled into the wheel where it can be.

A wheel built from this tree (``pip wheel .``, ``pip install /path/to/berth``, the
image of ``deploy/Dockerfile``) carries ``berth/core/_profile_native*.so`` when the
build machine has a C compiler and Python's headers, and is then tagged for that
platform and Python; without them it stays a pure-Python wheel that plans with the
Python profile, and the build says why. Editable installs (``make``) are left alone:
``tools/build_native.py`` builds the module in place there.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent


class NativeProfileHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the C profile into a temporary directory and includes it."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        spec = importlib.util.spec_from_file_location(
            "build_native", ROOT / "tools/build_native.py"
        )
        assert spec is not None
        assert spec.loader is not None
        tool = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tool)
        self._work = tempfile.TemporaryDirectory()
        output = Path(self._work.name) / tool.target().name
        why_not = tool.build(output)
        if why_not is not None:
            print(f"berth: the wheel plans with the Python profile ({why_not})", file=sys.stderr)
            return
        build_data["force_include"][str(output)] = f"berth/core/{output.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "_work", None)
        if work is not None:
            work.cleanup()
