"""What happened to one job in a replay: the emulator's per-job record.

A :class:`JobRecord` is written as the replay goes (arrival, decision, start, end) and
read by everything after it: the metrics, the per-job output, the dependency tracking
and the tests' checks. Plain data, no behaviour beyond formatting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(slots=True)
class JobRecord:
    """What happened to one job in a replay (one line of the per-job output)."""

    id: int
    submit: int
    start: int | None
    end: int | None
    resources: Mapping[str, int]
    estimate: int
    runtime: int
    guarantee: int | None
    status: str  # "completed" | "killed" | "rejected" | "cancelled" (a dependency can never
    # be satisfied) (| "queued" if the replay was cut)
    reason: str
    swf_line: str | None = None
    deadline: int | None = None
    promised_completion: int | None = None
    priority: Mapping[str, float] = field(default_factory=dict)
    #: On a node cluster: what the job held on each node.
    nodes: Mapping[str, Mapping[str, int]] | None = None

    @property
    def ran(self) -> int:
        """Seconds the job held its resources."""
        return 0 if self.start is None or self.end is None else self.end - self.start

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "submit": self.submit,
            "start": self.start,
            "end": self.end,
            "resources": dict(self.resources),
            "estimate": self.estimate,
            "runtime": self.runtime,
            "guarantee": self.guarantee,
            "status": self.status,
            "reason": self.reason,
            **({"deadline": self.deadline} if self.deadline is not None else {}),
            **(
                {"promised_completion": self.promised_completion}
                if self.promised_completion is not None
                else {}
            ),
            **({"priority": dict(self.priority)} if self.priority else {}),
            **({"nodes": {n: dict(a) for n, a in self.nodes.items()}} if self.nodes else {}),
        }
