"""What the engine hands its shell: changed rows, events and node intents.

Commands note what they changed (dirty jobs and nodes, the configuration), the events
they emit and the node commands they intend; the coordinator takes them after each
batch, commits the rows, publishes the events and then sends the intents. A part of
:class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from berth.service.engine_base import EngineBase
from berth.service.intents import Intent
from berth.service.model import Event, JobRecord
from berth.service.ports import Changes, NodeBackend
from berth.service.rows import job_row, node_row


class ShellOutputs(EngineBase):
    """The engine's outputs for its shell (a mixin)."""

    backend: NodeBackend
    hold_intents: bool
    version: int
    _events: list[Event]
    _intents: list[Intent]
    _dirty_jobs: set[int]

    def take_changes(self) -> Changes:
        changes = Changes(
            jobs={i: job_row(self.jobs[i]) for i in self._dirty_jobs},
            nodes={n: node_row(self.cluster.nodes[n]) for n in self._dirty_nodes},
            config=(
                {
                    "policy": self.policy_name,
                    "policy_options": dict(self.policy_options),
                    "node_tokens": dict(self.node_tokens),
                    "partitions": [
                        *(p.spec.as_dict() for p in self.gang.values()),
                        *(spec.as_dict() for spec in self.backfill.values()),
                    ],
                }
                if self._config_dirty
                else {}
            ),
        )
        self._dirty_jobs.clear()
        self._dirty_nodes.clear()
        self.let_go()  # what it lets go is in ``changes``, committed before any later read
        self._config_dirty = False
        return changes

    def take_events(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def _intend(self, intent: Intent) -> None:
        if self.hold_intents and not self.backend.in_process:
            self._intents.append(intent)
        else:
            intent.send(self.backend)

    def take_intents(self) -> list[Intent]:
        """The node commands of the changes made since the last call, in order."""
        intents, self._intents = self._intents, []
        return intents

    def dispatch(self) -> None:
        """Send the pending intents to the node backend now (after their commit)."""
        for intent in self.take_intents():
            intent.send(self.backend)

    def touch(self, record: JobRecord) -> None:
        """Note a record changed from outside the engine's commands (agent reports)."""
        self._touch(record)

    def _touch(self, record: JobRecord) -> None:
        """Note a changed record: to persist, and to recompute predictions from."""
        self._dirty_jobs.add(record.id)
        self.version += 1

    def _emit(
        self,
        kind: str,
        time: int,
        job_id: int | None = None,
        node: str | None = None,
        **detail: object,
    ) -> None:
        self._events.append(Event(kind, time, job_id, node, dict(detail)))
