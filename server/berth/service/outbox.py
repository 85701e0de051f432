"""What the engine's commands leave for its shell: rows to save, events, node intents.

Commands note here what they changed (jobs, nodes, the configuration), the events they
emit and the node commands they intend. The coordinator takes them after each batch:
it commits the rows (:meth:`~berth.service.engine.Engine.take_changes` turns the
changed names into rows), then sends the intents and publishes the events, so no
effect leaves before the state that causes it is saved. Without a shell that commits
(tests, the emulator's live dry run) intents go to the node backend at once. Every
change also bumps :attr:`Outbox.version`, which the read models cache on. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from berth.service.model import Event, JobRecord, NodeRecord
from berth.service.nodes.intents import Intent
from berth.service.ports import Changes, NodeBackend
from berth.service.rows import job_row, node_row


class Outbox:
    """The changes, events and intents of the commands since the shell last took them."""

    def __init__(self, backend: NodeBackend) -> None:
        self.backend = backend
        #: Set by a shell that commits: intents wait for :meth:`take_intents`.
        self.hold_intents = False
        #: Bumped by every change; caches (the forecast, the queue standing) key on it.
        self.version = 0
        self.jobs: set[int] = set()
        self.nodes: set[str] = set()
        self.config = False
        self._events: list[Event] = []
        self._intents: list[Intent] = []
        #: Who asked for the command being applied: named (``by``) in its events.
        self.actor: str | None = None

    def job_changed(self, record: JobRecord) -> None:
        """A job record changed: to persist, and to recompute predictions from."""
        self.jobs.add(record.id)
        self.version += 1

    def node_changed(self, name: str) -> None:
        self.nodes.add(name)

    def config_changed(self) -> None:
        """The policy, the partitions or the node tokens changed."""
        self.config = True

    def emit(
        self,
        kind: str,
        time: int,
        job_id: int | None = None,
        node: str | None = None,
        **detail: object,
    ) -> None:
        if self.actor is not None and "by" not in detail:
            detail["by"] = self.actor  # who asked for what caused it
        self._events.append(Event(kind, time, job_id, node, dict(detail)))

    def intend(self, intent: Intent) -> None:
        """A node command: held for the shell's commit, or sent now."""
        if self.hold_intents and not self.backend.in_process:
            self._intents.append(intent)
        else:
            intent.send(self.backend)

    def take_changes(
        self,
        jobs: Mapping[int, JobRecord],
        nodes: Mapping[str, NodeRecord],
        config: Callable[[], dict[str, object]],
    ) -> Changes:
        """The rows of what changed since the last call, from the records given."""
        changes = Changes(
            jobs={i: job_row(jobs[i]) for i in self.jobs},
            nodes={n: node_row(nodes[n]) for n in self.nodes},
            config=config() if self.config else {},
        )
        self.jobs.clear()
        self.nodes.clear()
        self.config = False
        return changes

    def take_events(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def take_intents(self) -> list[Intent]:
        """The node commands of the changes made since the last call, in order."""
        intents, self._intents = self._intents, []
        return intents

    def dispatch(self) -> None:
        """Send the pending intents to the node backend now (after their commit)."""
        for intent in self.take_intents():
            intent.send(self.backend)
