"""The policy of a cluster that has no node yet (a daemon waiting for its first agent).

Every request is refused before it reaches a policy (no resource is known), so this
only has to exist: it admits nothing, starts nothing and never wakes up.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.core.decisions import Reject, Reserve, Start
from berth.core.model import Job
from berth.core.policies.base import QueuePolicy
from berth.core.resources import ResourceSpace

#: The refusal for any job while the cluster has no node.
NO_NODES = "the cluster has no nodes yet (start a node agent: berth agent --url ...)"


class NoNodes(QueuePolicy):
    """A policy over nothing."""

    name = "none"
    places_on_nodes = True

    def __init__(self) -> None:
        super().__init__(ResourceSpace({"nodes": 1}))
        self.free = 0

    def submit(self, job: Job, now: int) -> Reserve | Reject | None:
        return Reject(job.id, NO_NODES)

    def complete(self, job_ids: Sequence[int], now: int) -> None:
        return None

    def schedule(self, now: int) -> list[Start]:
        return []
