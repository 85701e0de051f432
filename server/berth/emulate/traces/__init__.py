"""Workload readers: Standard Workload Format and JSONL, chosen by file name."""

from __future__ import annotations

from pathlib import Path

from berth.emulate.traces.jsonl import read_jsonl
from berth.emulate.traces.swf import read_swf
from berth.emulate.workload import Workload
from berth.service.collector import collector_paused


def read_workload(path: str | Path) -> Workload:
    """Read a ``.swf``/``.swf.gz`` or ``.jsonl``/``.jsonl.gz`` workload."""
    name = str(path).lower().removesuffix(".gz")
    if name.endswith(".swf"):
        reader = read_swf
    elif name.endswith((".jsonl", ".ndjson", ".json")):
        reader = read_jsonl
    else:
        raise ValueError(f"{path}: unknown workload format (expected .swf, .swf.gz or .jsonl)")
    with collector_paused():
        return reader(path)


__all__ = ["read_jsonl", "read_swf", "read_workload"]
