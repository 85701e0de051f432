"""Small sample workloads shipped with Berth (for the demo and the tests).

``kth-sp2-first-400.swf``: the header and first 400 jobs of the cleaned KTH SP2 trace
(``KTH-SP2-1996-2.1-cln``) from the Parallel Workloads Archive, unmodified.
"""

from __future__ import annotations

from pathlib import Path

KTH_SAMPLE = Path(__file__).with_name("kth-sp2-first-400.swf")
