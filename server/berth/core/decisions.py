"""Decisions a policy returns to its shell, each with the reason it was taken.

Decisions are imperative nouns: :class:`Start` a job now, :class:`Reserve` it for a
later time (``guarantee`` is the latest start the scheduler has promised, or ``None``
when the policy makes no promise), :class:`Reject` it. A time in a reason is written
with :func:`at`. :class:`Kill`, :class:`Suspend`
and :class:`Resume` complete the vocabulary the daemon's node backends understand
(overrun kills, gang scheduling). The shell applies decisions; the core only returns
them. This module does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


def at(time: int) -> str:
    """A time as the core writes it in a reason: ``t=N``. The core cannot tell a Unix
    time from a trace's offset and formats no dates, so each shell renders these: the
    daemon as a date (``2026-11-24 22:01:03 UTC``, see ``berth.service.model.readable``),
    while the emulator keeps the trace's ``t=N`` offsets as they are."""
    return f"t={time}"


@dataclass(frozen=True, slots=True)
class JobAction:
    """Something to do to ``job_id`` at ``time`` (the instant the policy was called with)."""

    job_id: int
    time: int
    reason: str


@dataclass(frozen=True, slots=True)
class Start(JobAction):
    """Start the job now; on a node cluster ``placement`` names what it holds on each
    node (``None`` under the pool model, where the shell places it)."""

    placement: Mapping[str, Mapping[str, int]] | None = None


@dataclass(frozen=True, slots=True)
class Kill(JobAction):
    """Stop the job for good (it overran its estimate, or was cancelled)."""


@dataclass(frozen=True, slots=True)
class Suspend(JobAction):
    """Suspend the running job, keeping its resources bound (gang scheduling)."""


@dataclass(frozen=True, slots=True)
class Resume(JobAction):
    """Resume the suspended job."""


@dataclass(frozen=True, slots=True)
class Reserve:
    """``job_id`` is planned to start at ``start``; ``guarantee`` is its promised latest
    start, and ``completion`` its promised latest completion (deadline policies)."""

    job_id: int
    start: int
    guarantee: int | None
    reason: str
    completion: int | None = None


@dataclass(frozen=True, slots=True)
class Reject:
    """``job_id`` will never run under this policy; ``reason`` names what stops it."""

    job_id: int
    reason: str


Decision = Start | Reserve | Reject | Kill | Suspend | Resume
