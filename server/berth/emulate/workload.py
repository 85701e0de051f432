"""A replayable workload: jobs with their real runtimes, and what the trace declared.

:class:`TraceJob` pairs the core's :class:`~berth.core.model.Job` (what the scheduler may
know) with what only the emulator knows: the real runtime and, for SWF traces, the
original line. :class:`Workload` also carries the capacity the trace declares, the
jobs the reader skipped and why, and the trace's time origin and zone (for slicing by
calendar month).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import repeat

from berth.core.columns import build_frozen
from berth.core.dependencies import Need
from berth.core.model import Job


class WorkloadError(ValueError):
    """A workload file that cannot be read; the message names the file, line and field."""


@dataclass(frozen=True, slots=True)
class TraceJob:
    """A job to replay: the scheduler's view plus its real runtime (>= 1 s)."""

    job: Job
    runtime: int
    swf_line: str | None = None
    #: The jobs of the workload it waits for (:mod:`berth.core.dependencies`).
    needs: tuple[Need, ...] = ()


def trace_jobs(jobs: list[Job], runtimes: list[int], lines: Iterable[str | None]) -> list[TraceJob]:
    """One :class:`TraceJob` per job, built a column at a time (a trace's many jobs);
    ``runtimes`` must already be at least 1 s."""
    columns: dict[str, Iterable[object]] = {
        "job": jobs,
        "runtime": runtimes,
        "swf_line": lines,
        "needs": repeat(()),
    }
    return build_frozen(TraceJob, len(jobs), columns)


@dataclass(slots=True)
class Workload:
    """Jobs sorted by (submit, id), with the trace's declared capacity and metadata."""

    jobs: list[TraceJob]
    capacity: dict[str, int] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    unix_start: int | None = None
    timezone: str | None = None
    source: str = ""
    header: list[str] = field(default_factory=list)
    #: The named nodes the workload declares (a JSONL ``nodes`` line), if any.
    nodes: dict[str, dict[str, int]] | None = None

    @property
    def resources(self) -> list[str]:
        """Every resource name any job asks for, capacity names first."""
        names = dict.fromkeys(self.capacity)
        for trace_job in self.jobs:
            names.update(dict.fromkeys(trace_job.job.resources))
        return list(names)
