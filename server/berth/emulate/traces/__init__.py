"""Workload readers: Standard Workload Format and JSONL, chosen by file name."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from berth.emulate.traces.jsonl import read_jsonl
from berth.emulate.traces.swf import read_swf
from berth.emulate.workload import Workload


def read_workload(path: str | Path) -> Workload:
    """Read a ``.swf``/``.swf.gz`` or ``.jsonl``/``.jsonl.gz`` workload."""
    name = str(path).lower().removesuffix(".gz")
    if name.endswith(".swf"):
        reader = read_swf
    elif name.endswith((".jsonl", ".ndjson", ".json")):
        reader = read_jsonl
    else:
        raise ValueError(f"{path}: unknown workload format (expected .swf, .swf.gz or .jsonl)")
    with _no_collection():
        return reader(path)


@contextmanager
def _no_collection() -> Iterator[None]:
    """The cyclic garbage collector paused while a workload is built. A reader builds
    hundreds of thousands of objects and no reference cycle, so each collection that
    the allocations set off finds nothing and walks everything built so far: a third
    of the time of reading SDSC-BLUE (1.13 s against 0.79 s). Reference counting still
    frees what the reader drops."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["read_jsonl", "read_swf", "read_workload"]
