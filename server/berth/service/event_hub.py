"""Committed events, numbered and handed to whoever listens.

The single writer numbers each batch's events on from the last one committed (so a
stream resumes across restarts: the store keeps the numbers), saves them with the
batch's changes and, only once that commit succeeded, publishes them here: to every
event-stream subscriber's queue (the API's ``/v1/events``, the dashboard) and to the
shell's log (``on_published``). A subscriber that falls :data:`SUBSCRIBER_BACKLOG`
events behind is dropped (its queue gets ``None``) rather than hold memory without
bound; it resumes from the store with ``Last-Event-ID``. No I/O.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from berth.service.model import Event, JobRecord
from berth.service.ports import EventRow

#: Events a slow event-stream subscriber may fall behind before it is dropped.
SUBSCRIBER_BACKLOG = 10_000


class EventHub:
    """The numbering of committed events and their subscribers."""

    def __init__(self, last_event_id: int = 0) -> None:
        #: The number of the latest committed event.
        self.last_id = last_event_id
        #: Told of every committed event as it is published (the shell's log).
        self.on_published: Callable[[EventRow], None] | None = None
        #: Events published so far, by kind (``/metrics``).
        self.by_kind: dict[str, int] = {}
        self._subscribers: set[asyncio.Queue[EventRow | None]] = set()

    def number(self, events: list[Event], jobs: Mapping[int, JobRecord]) -> list[EventRow]:
        """``events`` numbered after the last committed one, each with the user whose
        job it concerns (whom a user's stream shows it to); not yet published."""
        first = self.last_id + 1
        return [
            EventRow(first + i, event, None if (j := jobs.get(event.job_id or 0)) is None
                     else j.user)
            for i, event in enumerate(events)
        ]  # fmt: skip

    def publish(self, rows: list[EventRow]) -> None:
        """``rows`` were committed: they are the newest events now; tell everyone."""
        if rows:
            self.last_id = rows[-1].id
        for row in rows:
            kind = row.event.kind
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
            if self.on_published is not None:
                self.on_published(row)
            for queue in list(self._subscribers):
                if queue.qsize() >= SUBSCRIBER_BACKLOG:
                    self._subscribers.discard(queue)
                    queue.put_nowait(None)  # tell it it was dropped
                else:
                    queue.put_nowait(row)

    def subscribe(self) -> asyncio.Queue[EventRow | None]:
        """A queue of committed events as they are published; ``None`` means the stream
        ended. Subscribe before reading the store's backlog, so nothing falls between."""
        queue: asyncio.Queue[EventRow | None] = asyncio.Queue()
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[EventRow | None]) -> None:
        self._subscribers.discard(queue)

    def close(self) -> None:
        """The daemon stops: every stream ends."""
        for queue in list(self._subscribers):
            queue.put_nowait(None)
