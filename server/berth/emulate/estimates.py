"""Runtime-estimate models for research replays (``--estimates``).

* ``user``: the estimates in the workload, as given.
* ``exact``: estimate = runtime (perfect knowledge).
* ``badness:F``: estimate drawn uniformly from ``[r, F * r]`` for runtime ``r``, rounded
  to whole seconds, seeded (Feitelson & Mu'alem Weil 1998, section 3.3).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

from berth.emulate.workload import TraceJob


def parse_estimates(spec: str) -> tuple[str, float]:
    """Validate an ``--estimates`` value: ``("user"|"exact"|"badness", factor)``."""
    if spec in ("user", "exact"):
        return spec, 1.0
    kind, _, factor_text = spec.partition(":")
    if kind == "badness":
        try:
            factor = float(factor_text)
        except ValueError:
            factor = 0.0
        if factor >= 1.0:
            return kind, factor
        raise ValueError(f"--estimates badness:F needs a factor F >= 1, got {factor_text!r}")
    raise ValueError(f"--estimates must be user, exact or badness:F, got {spec!r}")


def apply_estimates(jobs: Sequence[TraceJob], spec: str, seed: int = 0) -> list[TraceJob]:
    """The jobs with their estimates replaced according to ``spec`` (new objects)."""
    kind, factor = parse_estimates(spec)
    if kind == "user":
        return list(jobs)
    rng = random.Random(seed)
    result = []
    for trace_job in jobs:
        runtime = trace_job.runtime
        if kind == "exact":
            estimate = runtime
        else:
            estimate = max(runtime, round(rng.uniform(runtime, factor * runtime)))
        job = dataclasses.replace(trace_job.job, estimate=estimate)
        result.append(dataclasses.replace(trace_job, job=job))
    return result
