"""The daemon's log: one line per meaningful event, readable or as JSON.

An operator reads the log to learn what the cluster did, not what the web server did:
a job started or ended (and how), a node went down, was drained or came back, a
partition or the policy changed, a guarantee was missed, this daemon took or lost the
lead. Those lines come from the committed event stream (so a line never reports a
change that was not saved), at most one per event; submissions, replans and
guarantee moves are not logged (thousands a minute on a busy cluster: they are in the
event stream and ``/metrics``). The web server's own chatter is kept to warnings,
every request only with ``--access-log``.

``--log-format text`` (the default) writes ``2026-11-26 14:33:59 INFO job 19 started
on local1``; ``--log-format json`` one JSON object per line for log shippers, with the
event's fields (``kind``, ``job_id``, ``node``, ``reason``, ``cluster_time``, ...)
beside ``time``, ``level``, ``logger`` and ``message``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from berth.service.model import Event
    from berth.service.ports import EventRow

LogFormat = Literal["text", "json"]

#: The logger the cluster's events are written to.
events_log = logging.getLogger("berth.events")

#: The events worth a line, and the level each is logged at.
LOGGED: dict[str, int] = {
    "job.started": logging.INFO,
    "job.completed": logging.INFO,
    "job.failed": logging.INFO,
    "job.killed": logging.INFO,
    "job.cancelled": logging.INFO,
    "job.out_of_memory": logging.INFO,
    "job.node_fail": logging.WARNING,
    "job.requeued": logging.INFO,
    "job.guarantee_missed": logging.WARNING,
    "node.added": logging.INFO,
    "node.down": logging.WARNING,
    "node.drained": logging.INFO,
    "node.resumed": logging.INFO,
    "node.resized": logging.INFO,
    "partition.created": logging.INFO,
    "partition.changed": logging.INFO,
    "partition.drained": logging.INFO,
    "partition.resumed": logging.INFO,
    "partition.deleted": logging.INFO,
    "policy.changed": logging.INFO,
    "node.token_issued": logging.INFO,
    "token.issued": logging.INFO,
    "token.revoked": logging.INFO,
}


def configure(level: str = "info", log_format: LogFormat = "text") -> None:
    """Send every log record of this process to stderr in ``log_format``: Berth's own
    at ``level``, the libraries' (the web server, migrations, the job scheduler) at
    warnings unless ``level`` is ``debug``. uvicorn is given no configuration of its
    own, so its records come here too."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if log_format == "json" else Readable())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    own = logging.getLevelName(level.upper())
    root.setLevel(own if own == logging.DEBUG else max(own, logging.WARNING))
    logging.getLogger("berth").setLevel(own)


@contextmanager
def events_muted() -> Iterator[None]:
    """While a demo reports its own jobs: no event lines between the rows of its table
    (they are logged again once it is done)."""
    events_log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        events_log.setLevel(logging.NOTSET)


def quiet_web_server(level: str) -> None:
    """uvicorn announces its own start-up at INFO (four lines Berth's banner already
    says): keep its messages to warnings unless debugging."""
    if level.lower() != "debug":
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)


def log_event(row: EventRow) -> None:
    """One line for a committed event, if it is one operators want to read."""
    event = row.event
    level = LOGGED.get(event.kind)
    if level is not None and events_log.isEnabledFor(level):
        events_log.log(level, line_of(event), extra={"event": event.as_dict()})


def line_of(event: Event) -> str:
    """An event as a sentence: ``job 23 failed: exited with status 2``."""
    family, _, what = event.kind.partition(".")
    detail = event.detail
    if event.job_id is not None:
        subject = f"job {event.job_id}"
    elif event.node is not None:
        subject = f"node {event.node}"
    elif family == "partition":
        named = detail.get("partition")
        name = named.get("name") if isinstance(named, dict) else named
        subject = f"partition {name}"
    elif family == "token":
        subject = f"token {detail.get('token_id')} of {detail.get('user')} ({detail.get('role')})"
    else:
        subject = family
    text = f"{subject} {what.replace('_', ' ')}"
    if family == "policy":
        partition = detail.get("partition")
        text += f" to {detail.get('policy')}" + (f" on partition {partition}" if partition else "")
    nodes = detail.get("nodes")
    if event.kind == "job.started" and isinstance(nodes, list):
        text += " on " + ",".join(str(n) for n in nodes)
    if detail.get("reason"):
        text += f": {detail['reason']}"
    by = detail.get("by")
    if by and f"by {by}" not in text:  # who asked (the audit trail), unless already said
        text += f" (by {by})"
    return text


class Readable(logging.Formatter):
    """``2026-11-26 14:33:59 INFO job 19 started on local1`` (local time)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S")


class JsonLines(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, the
    event's fields when it is one, and the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        out: dict[str, Any] = {
            "time": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        event = getattr(record, "event", None)
        if isinstance(event, dict):
            fields = dict(event)
            fields["cluster_time"] = fields.pop("time", None)  # ``time`` is the wall time
            out.update({k: v for k, v in fields.items() if k not in out})
        if record.exc_info:
            out["traceback"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)
