"""``MemoryStore``: the Store port kept in a dict, for dry runs and unit tests."""

from __future__ import annotations

import copy

from berth.service.ports import Changes, Snapshot
from berth.service.rows import job_from_row, node_from_row


class MemoryStore:
    def __init__(self) -> None:
        self.jobs: dict[int, dict[str, object]] = {}
        self.nodes: dict[str, dict[str, object]] = {}
        self.config: dict[str, object] = {}
        self.saves = 0

    def load(self) -> Snapshot:
        return Snapshot(
            jobs=[job_from_row(copy.deepcopy(row)) for row in self.jobs.values()],
            nodes=[node_from_row(copy.deepcopy(row)) for row in self.nodes.values()],
            config=copy.deepcopy(self.config),
        )

    def save(self, changes: Changes) -> None:
        self.jobs.update(copy.deepcopy(changes.jobs))
        self.nodes.update(copy.deepcopy(changes.nodes))
        self.config.update(copy.deepcopy(changes.config))
        self.saves += 1
