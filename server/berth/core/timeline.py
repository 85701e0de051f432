"""The order of events at one instant, written once for every shell.

Both shells, the emulator (virtual clock) and the daemon's engine (wall clock, commands
in batches), drive a policy through a :class:`Timeline`. At each instant it takes, in
the normative order of ``docs/semantics.md``:

1. :meth:`Timeline.end` — the jobs that ended (finished, killed at their limit,
   cancelled, lost with a node); the policy releases them (conservative compresses once
   per call);
2. :meth:`Timeline.arrive` — each arrival (or, in the daemon, each command of the batch
   that changes the queue), in order;
3. :meth:`Timeline.close` — one scheduling pass: the jobs to start now.

Calls for one instant may not go back in that order (an arrival after the pass, or an
end after an arrival, opens a new round at the same instant, as when a daemon's next
batch comes in the same second); time never goes backwards. :meth:`Timeline.next_instant`
is where the shell's loop goes next when nothing arrives: the earliest of the ends it
knows of and the policy's own wake-up. So a dry run of the live queue and the live queue
itself are the same computation. Pure: time is an argument, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.policies.base import Policy

P = TypeVar("P", bound=Policy)

#: The phases of one instant, in order.
ENDS, ARRIVALS, PASS = 0, 1, 2


class Timeline(Generic[P]):
    """One policy driven instant by instant. ``policy`` may be replaced between instants
    (the daemon rebuilds it when nodes or the policy change)."""

    __slots__ = ("_phase", "now", "policy", "rounds")

    def __init__(self, policy: P, now: int | None = None) -> None:
        self.policy = policy
        #: The instant being applied (``None`` before the first).
        self.now = now
        self._phase = PASS
        #: Rounds applied so far (an instant may take several in the daemon).
        self.rounds = 0

    def _enter(self, now: int, phase: int) -> None:
        if self.now is not None and now < self.now:
            raise ValueError(f"time went backwards: {now} after {self.now}")
        if now != self.now or phase < self._phase:
            self.rounds += 1  # a new instant, or a new round of the same one
        self.now = now
        self._phase = phase

    def end(self, job_ids: Sequence[int], now: int) -> None:
        """Phase 1: running jobs ``job_ids`` ended at ``now``."""
        self._enter(now, ENDS)
        if job_ids:
            self.policy.complete(job_ids, now)

    def arrive(self, job: Job, now: int) -> Reserve | Reject | None:
        """Phase 2: ``job`` arrives at ``now``; the policy's admission decision."""
        self._enter(now, ARRIVALS)
        return self.policy.submit(job, now)

    def close(self, now: int) -> list[Start]:
        """Phase 3: the scheduling pass; the jobs the policy starts at ``now``."""
        self._enter(now, PASS)
        return self.policy.schedule(now)

    def next_instant(self, known: Iterable[int | None]) -> int | None:
        """The next instant to apply: the earliest of ``known`` times (next arrival, next
        end, ...; ``None`` entries are ignored) and the policy's own wake-up."""
        earliest = self.policy.next_wakeup()
        for time in known:
            if time is not None and (earliest is None or time < earliest):
                earliest = time
        return earliest
