"""Ports: what the engine and its coordinator need from the outside world.

* :class:`NodeBackend` starts, kills, suspends and resumes jobs on nodes and reports the
  jobs that ended (emulated nodes in-process, real node agents later);
* :class:`Store` loads the persisted state once and saves each batch of changes in one
  transaction (SQL, or memory for dry runs and unit tests);
* :class:`Clock` tells the cluster time in integer seconds and how long, in wall
  seconds, until a cluster time (a scaled clock runs emulated clusters faster).

Adapters are named ``<Tech><Port>``: ``SqlStore``, ``MemoryStore``, ``EmulatedNodes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from berth.service.model import Event, JobRecord, JobState, NodeRecord

#: What usage is totalled by: the job's user, or the account it was charged to.
UsageBy = Literal["user", "account"]


@dataclass(frozen=True, slots=True)
class JobFilter:
    """Which jobs a history page, a usage report or a cancel by filter covers (a field
    ``None``: any)."""

    states: frozenset[str] | None = None
    user: str | None = None
    account: str | None = None
    #: Partitions as jobs record them (a member ``None``: the default one).
    partitions: frozenset[str | None] | None = None

    def admits(self, row: Mapping[str, object]) -> bool:
        """Whether a job's row (``berth.service.rows``) passes."""
        account, partition = row.get("account"), row.get("partition")
        return self.holds(
            str(row["state"]),
            str(row["user"]),
            str(account) if account else None,
            str(partition) if partition else None,
        )

    def holds(self, state: str, user: str, account: str | None, partition: str | None) -> bool:
        """Whether a job in ``state`` of ``user``, charged to ``account`` (``None``: the
        user's own), in ``partition`` (``None``: the default one), passes."""
        return (
            (self.states is None or state in self.states)
            and (self.user is None or user == self.user)
            and (self.account is None or (account or user) == self.account)
            and (self.partitions is None or partition in self.partitions)
        )


@dataclass(frozen=True, slots=True)
class Ended:
    """A job that ended on its node by itself: when, in what state, and why."""

    job_id: int
    time: int
    state: JobState = JobState.COMPLETED
    reason: str = "exited"
    exit_code: int | None = None
    signal: int | None = None
    #: What it used, as its node measured it (see ``JobRecord.usage``).
    usage: dict[str, float] | None = None


class NodeBackend(Protocol):
    """Where jobs really run. Calls never block for long; failures surface as events."""

    @property
    def in_process(self) -> bool:
        """True for a backend with no effect outside this process (emulated nodes): its
        intents need not wait for their commit, and must not, since it tells the engine
        when the jobs it started end, even within the same batch. A failed commit stops
        the daemon, which restarts from committed state, so nothing it was told leaks."""
        ...

    def start(self, job: JobRecord, now: int) -> None:
        """Launch ``job`` on the nodes of ``job.allocation``."""
        ...

    def kill(self, job_id: int, now: int) -> None:
        """Stop a running job for good."""
        ...

    def suspend(self, job_id: int, now: int) -> None: ...

    def resume(self, job_id: int, now: int) -> None: ...

    def adopt(self, job: JobRecord, now: int) -> None:
        """After a restart: take back a job the store says is running."""
        ...

    def finished(self, now: int) -> list[Ended]:
        """The jobs that ended on their own by ``now``."""
        ...

    def next_event(self) -> int | None:
        """The next cluster time at which :meth:`finished` will have news, if known."""
        ...


@dataclass(slots=True)
class Snapshot:
    """Everything the store holds: the state a restarted daemon resumes from."""

    jobs: list[JobRecord] = field(default_factory=list)
    nodes: list[NodeRecord] = field(default_factory=list)
    config: dict[str, object] = field(default_factory=dict)
    #: The number of the latest stored event (0: none); the writer numbers on from it.
    last_event_id: int = 0
    #: The highest job number stored (finished jobs may not all be loaded).
    last_job_id: int = 0


@dataclass(frozen=True, slots=True)
class EventRow:
    """A committed event: its number, the event, and the user whose job it concerns."""

    id: int
    event: Event
    user: str | None = None


@dataclass(slots=True)
class Changes:
    """One batch to persist atomically: rows as plain dicts (copies, safe to hand to a
    writer thread), keyed by primary key."""

    jobs: dict[int, dict[str, object]] = field(default_factory=dict)
    nodes: dict[str, dict[str, object]] = field(default_factory=dict)
    config: dict[str, object] = field(default_factory=dict)
    #: Events of the batch as rows of the events table, numbered.
    events: list[dict[str, object]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.jobs or self.nodes or self.config or self.events)


#: How a store's commit is run: ``"loop"``, :meth:`Store.save` on the event loop (a
#: store whose commit costs less than any hop: SQLite on a local disk, a fraction of a
#: millisecond); ``"async"``, :meth:`Store.save_async` awaited on the loop (a database
#: server: the loop goes on while it answers); ``"thread"``, :meth:`Store.save` in a
#: worker thread (a blocking store; the thread must win the GIL back from a busy loop
#: after each call into the database, up to the 5 ms switch interval each time).
CommitMode = Literal["loop", "async", "thread"]


class TokenStore(Protocol):
    """Where the tokens a daemon issued, their revocations and the daemons' public keys
    are kept (shared by every daemon of an HA group). Rows are plain dicts with the
    ``tokens`` and ``token_keys`` tables' columns. Blocking: call off the loop."""

    def save_token(self, row: dict[str, object]) -> None: ...

    def token(self, token_id: str) -> dict[str, object] | None: ...

    def tokens(self, alive_at: int) -> list[dict[str, object]]: ...

    def revoked(self, alive_at: int) -> set[str]: ...

    def save_key(self, row: dict[str, object]) -> None: ...

    def public_keys(self) -> list[dict[str, object]]: ...


class Store(Protocol):
    commits: CommitMode

    async def save_async(self, changes: Changes) -> None:
        """:meth:`save`, awaited (stores that commit ``"async"``)."""
        ...

    def load(self) -> Snapshot: ...

    def save(self, changes: Changes) -> None:
        """Persist ``changes`` in one transaction; return only once it is durable."""
        ...

    def events_after(self, after: int, limit: int, job_id: int | None = None) -> list[EventRow]:
        """Stored events numbered above ``after``, oldest first, at most ``limit``; only
        job ``job_id``'s if given."""
        ...

    def job(self, job_id: int) -> JobRecord | None:
        """One stored job, loaded or not."""
        ...

    def jobs_by_keys(self, keys: list[tuple[str, str]]) -> list[JobRecord]:
        """Stored jobs submitted with these ``(user, idempotency key)`` pairs."""
        ...

    def history(self, where: JobFilter, before: int | None, limit: int) -> list[JobRecord]:
        """Stored jobs that pass ``where``, newest first, numbered below ``before``; a
        page of ``limit``."""
        ...

    def usage(
        self, since: int, until: int, by: UsageBy, where: JobFilter
    ) -> dict[str, dict[str, float]]:
        """Per user or account, over the jobs that pass ``where`` and ended in ``[since,
        until)``: jobs and resource-seconds (:func:`berth.service.rows.tally_usage`)."""
        ...

    def prune_events(self, before: float) -> int:
        """Delete events recorded (wall time) before ``before``; how many went."""
        ...


class Clock(Protocol):
    def now(self) -> int:
        """The cluster time, in integer seconds."""
        ...

    def wall_delay(self, cluster_time: int) -> float:
        """Wall-clock seconds from now until ``cluster_time`` (never negative)."""
        ...
