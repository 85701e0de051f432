"""First-come first-served: start jobs from the head of the queue while the head fits.

No backfilling and no promises (a queued job gets no reservation). Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.policies.base import QueuePolicy


class Fcfs(QueuePolicy):
    """FCFS over K resources: the head starts when it fits in every resource."""

    name = "fcfs"

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        for job_id in job_ids:
            self.finish(job_id)

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        entry = self.admit(job)
        if isinstance(entry, Reject):
            return entry
        self.waiting[job.id] = entry
        return None

    def schedule(self, now: int) -> list[Start]:
        return self.start_heads(now)

    def start_heads(self, now: int) -> list[Start]:
        """Start jobs from the head of the queue while the head fits."""
        started: list[Start] = []
        guard = self.guard
        while self.waiting:
            head = next(iter(self.waiting.values()))
            if ((self.free | guard) - head.demand) & guard != guard:
                break
            started.append(self.launch(head, now, "head of the queue fits"))
        return started
