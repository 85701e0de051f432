"""Intents: what the engine wants done on nodes, sent only once the change is committed.

The engine never calls the node backend while it changes state: it records an intent
(:class:`StartOn`, :class:`Kill`, :class:`Suspend`, :class:`Resume`) beside the state
change. The coordinator commits the batch, and only then sends the batch's intents, in
order; a commit that fails sends nothing (the daemon restarts from committed state, in
which those jobs never started). Shells without a store (the dry run, unit tests) send
them when the engine is next advanced. No I/O here.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar

from berth.service.model import JobRecord
from berth.service.ports import NodeBackend


@dataclass(frozen=True, slots=True)
class StartOn:
    """Launch ``job`` on the nodes of its allocation, as of ``time``. Made with
    :meth:`of`: ``job`` is the record as the batch left it (the next batch may change
    the live record, a cancel or a requeue, before this one commits and is sent)."""

    job: JobRecord
    time: int

    @classmethod
    def of(cls, record: JobRecord, time: int) -> StartOn:
        # A shallow copy holds: the engine replaces a record's mappings, never edits them.
        return cls(copy.copy(record), time)

    def send(self, backend: NodeBackend) -> None:
        backend.start(self.job, self.time)


@dataclass(frozen=True, slots=True)
class JobSignal:
    """Tell the backend ``verb`` (kill, suspend, resume) for job ``job_id``."""

    verb: ClassVar[str]
    job_id: int
    time: int

    def send(self, backend: NodeBackend) -> None:
        getattr(backend, self.verb)(self.job_id, self.time)


class Kill(JobSignal):
    """Stop running job ``job_id`` for good."""

    __slots__ = ()
    verb = "kill"


class Suspend(JobSignal):
    """Stop job ``job_id``'s processes, keeping its allocation (gang scheduling)."""

    __slots__ = ()
    verb = "suspend"


class Resume(JobSignal):
    """Let suspended job ``job_id`` run again."""

    __slots__ = ()
    verb = "resume"


Intent = StartOn | JobSignal
