"""Berth: a resource manager for parallel jobs that makes promises.

The package is layered (see ``docs/architecture.md``): ``core`` is the pure scheduling
engine, ``emulate`` replays workloads through it on a virtual clock, and ``runtime`` wires
the console entry points. Importing this package has one effect only: with
``BERTH_NATIVE=0`` in the environment, the C availability profile is hidden from import
(``berth.core.profile`` then plans with the Python one; the core itself reads no
environment).
"""

import os
import sys

__version__ = "0.1.0"

if os.environ.get("BERTH_NATIVE", "1") == "0":
    sys.modules.setdefault("berth.core._profile_native", None)  # type: ignore[arg-type]
