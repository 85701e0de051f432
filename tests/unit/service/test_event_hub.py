"""Committed events: numbered on from the store's last, published to every listener, a
subscriber that falls too far behind dropped."""

from __future__ import annotations

from berth.service import event_hub
from berth.service.event_hub import EventHub
from berth.service.model import Event, JobRecord, JobRequest
from berth.service.ports import EventRow


def _jobs() -> dict[int, JobRecord]:
    request = JobRequest("t", "alice", {"cpus": 1}, 60)
    return {7: JobRecord.from_request(7, request, 0)}


def test_events_are_numbered_after_the_last_committed_and_published_once_saved() -> None:
    hub = EventHub(last_event_id=41)
    logged: list[EventRow] = []
    hub.on_published = logged.append
    queue = hub.subscribe()
    rows = hub.number([Event("job.started", 5, 7), Event("node.down", 5, node="n1")], _jobs())
    assert [(r.id, r.user) for r in rows] == [(42, "alice"), (43, None)]
    assert hub.last_id == 41  # numbered, not yet committed
    hub.publish(rows)
    assert hub.last_id == 43
    assert logged == rows
    assert [queue.get_nowait(), queue.get_nowait()] == rows
    assert hub.by_kind == {"job.started": 1, "node.down": 1}
    assert hub.number([Event("job.completed", 9, 7)], _jobs())[0].id == 44


def test_a_subscriber_too_far_behind_is_dropped_and_told() -> None:
    hub = EventHub()
    slow, fresh = hub.subscribe(), hub.subscribe()
    for _ in range(event_hub.SUBSCRIBER_BACKLOG):
        hub.publish(hub.number([Event("job.started", 0, 7)], _jobs()))
    while not fresh.empty():
        fresh.get_nowait()  # this one keeps up
    hub.publish(hub.number([Event("job.completed", 1, 7)], _jobs()))
    assert slow.qsize() == event_hub.SUBSCRIBER_BACKLOG + 1
    items = [slow.get_nowait() for _ in range(slow.qsize())]
    assert items[-1] is None  # dropped: told so after what it had
    kept = fresh.get_nowait()
    assert kept is not None
    assert kept.event.kind == "job.completed"
    hub.close()
    assert fresh.get_nowait() is None
