"""The daemon's log lines: each meaningful event said as a sentence, the rest silent."""

from __future__ import annotations

import json
import logging

import pytest

from berth.runtime.logs import JsonLines, line_of, log_event
from berth.service.model import Event
from berth.service.ports import EventRow


@pytest.mark.parametrize(
    ("event", "line"),
    [
        (Event("job.started", 5, 19, detail={"nodes": ["n1", "n2"]}), "job 19 started on n1,n2"),
        (Event("job.failed", 9, 23, detail={"reason": "exited with status 2"}),
         "job 23 failed: exited with status 2"),
        (Event("job.out_of_memory", 9, 4, detail={"reason": "limit 1 GiB"}),
         "job 4 out of memory: limit 1 GiB"),
        (Event("node.down", 3, node="n7", detail={"reason": "agent silent for 30 s"}),
         "node n7 down: agent silent for 30 s"),
        (Event("partition.created", 1, detail={"partition": {"name": "gang", "nodes": []}}),
         "partition gang created"),
        (Event("partition.deleted", 1, detail={"partition": "short", "nodes": ["n3"]}),
         "partition short deleted"),
        (Event("policy.changed", 1, detail={"policy": "easy", "partition": None}),
         "policy changed to easy"),
        (Event("policy.changed", 1, detail={"policy": "qops", "partition": "deadline"}),
         "policy changed to qops on partition deadline"),
        (Event("node.drained", 2, node="n2", detail={"reason": "disk", "by": "admin"}),
         "node n2 drained: disk (by admin)"),
        (Event("token.revoked", 2, detail={"token_id": "x7", "user": "carol", "role": "viewer",
                                           "by": "admin"}),
         "token x7 of carol (viewer) revoked (by admin)"),
    ],
)  # fmt: skip
def test_an_event_reads_as_a_sentence(event: Event, line: str) -> None:
    assert line_of(event) == line


def test_routine_events_are_not_logged_and_meaningful_ones_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="berth.events"):
        log_event(EventRow(1, Event("job.accepted", 0, 1)))
        log_event(EventRow(2, Event("job.guarantee_changed", 0, 1)))
        log_event(EventRow(3, Event("job.started", 0, 1, detail={"nodes": ["n1"]})))
        log_event(EventRow(4, Event("node.down", 0, node="n1", detail={"reason": "gone"})))
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "job 1 started on n1"),
        ("WARNING", "node n1 down: gone"),
    ]


def test_a_json_line_keeps_the_wall_time_and_the_cluster_time_apart() -> None:
    record = logging.LogRecord("berth.events", logging.INFO, __file__, 1, "job 1 ended", (), None)
    record.event = {"kind": "job.completed", "time": 42, "job_id": 1, "message": "not this"}
    out = json.loads(JsonLines().format(record))
    assert out["cluster_time"] == 42
    assert out["time"].endswith("Z")
    assert out["message"] == "job 1 ended"  # an event's field never hides the record's
    assert out["kind"] == "job.completed"
