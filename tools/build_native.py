"""Build Berth's C availability profile (``server/berth/core/_profile_native.c``) in place.

``make`` runs this after installing the package: it compiles the module with the C
compiler and headers of the Python that runs it, next to its source, where
``berth.core.profile`` finds it (a wheel gets it from ``hatch_build.py``, which calls
:func:`build`). Without a compiler or headers it says so and stops
with status 0 (``--require``: status 1): Berth then plans with the profile written in
Python, which gives the same schedules, slower. ``BERTH_NATIVE=0`` chooses the Python
profile even where the module is built.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "server/berth/core/_profile_native.c"


def sources() -> list[Path]:
    """The module's C source and the headers it includes."""
    return [SOURCE, *sorted(SOURCE.parent.glob("_profile_*.h"))]


def target() -> Path:
    """Where the built module goes: beside its source, with this Python's suffix."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return SOURCE.with_name(SOURCE.stem + suffix)


def command(output: Path) -> list[str]:
    """The compiler's command line for this Python."""
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    if not shutil.which(compiler[0]):
        compiler = ["cc"]
    include = sysconfig.get_paths()["include"]
    flags = ["-O2", "-shared", "-fPIC", "-Wall", "-Wno-unused-parameter", f"-I{include}"]
    return [*compiler, *flags, "-o", str(output), str(SOURCE)]


def build(output: Path | None = None) -> str | None:
    """Compile the module to ``output`` (beside its source by default; only when the
    source is newer); why not, or ``None`` once it is there."""
    output = output or target()
    newest = max(path.stat().st_mtime for path in sources())
    if output.exists() and output.stat().st_mtime >= newest:
        return None
    if not Path(sysconfig.get_paths()["include"], "Python.h").exists():
        return f"no Python.h under {sysconfig.get_paths()['include']}"
    # Built in a temporary file and moved: a process importing the module meanwhile
    # never sees half a file.
    with tempfile.TemporaryDirectory(dir=output.parent) as work:
        partial = Path(work) / output.name
        try:
            done = subprocess.run(command(partial), capture_output=True, text=True, check=False)
        except OSError as error:
            return f"no C compiler ({error})"
        if done.returncode != 0:
            return f"the compiler failed:\n{done.stderr.strip()}"
        os.replace(partial, output)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description="Build the C availability profile in place.")
    parser.add_argument("--require", action="store_true", help="fail when it cannot be built")
    require = parser.parse_args().require
    why_not = build()
    if why_not is None:
        return 0
    fallback = (
        f"Berth keeps the one built before ({target().name}), older than its sources"
        if target().exists()
        else "Berth plans with the Python one"
    )
    print(f"berth: the C profile was not built ({why_not}); {fallback}", file=sys.stderr)
    return 1 if require else 0


if __name__ == "__main__":
    sys.exit(main())
