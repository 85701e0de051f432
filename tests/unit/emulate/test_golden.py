"""Golden schedules: the first 400 KTH jobs under each policy, byte for byte.

The goldens pin behaviour against regressions; correctness itself is argued by the
brute-force oracle (tests/property). After an intended change of semantics, regenerate
with ``BERTH_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/unit/emulate/test_golden.py``
and explain the difference in the commit message.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from berth.emulate.output import write_jobs_jsonl
from berth.emulate.run import emulate
from berth.emulate.samples import KTH_SAMPLE
from berth.emulate.traces import read_workload

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "slack"])
def test_kth_400_matches_golden(policy: str) -> None:
    (result,) = emulate(read_workload(KTH_SAMPLE), policy)
    buffer = io.StringIO()
    write_jobs_jsonl(result.records, buffer)
    golden = DATA / "golden" / f"kth-400-{policy}.jsonl"
    if os.environ.get("BERTH_REGEN_GOLDEN") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(buffer.getvalue())
    assert buffer.getvalue() == golden.read_text()
