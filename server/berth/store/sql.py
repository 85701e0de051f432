"""``SqlStore``: the Store port on SQLAlchemy 2 Core, for SQLite and PostgreSQL.

Four tables: ``jobs`` (one row per job, every field of the record), ``nodes``,
``config`` (key/value: the policy, its options, partitions) and ``events`` (every event,
numbered by the single writer, written with the change that caused it; pruned by age). A batch of changes is one
transaction (inserts for new rows, executemany updates for known ones, sent through the
driver as statements prepared once: :mod:`berth.store.writes`), so a command is
acknowledged only after everything it changed is committed. SQLite runs in WAL mode
with ``synchronous=FULL`` by default: a commit survives a killed process and a power
cut. The tables are declared in :mod:`berth.store.tables`; Alembic (``migrations/``)
creates and upgrades them, never this module.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect, Engine

from berth.service.model import JobRecord
from berth.service.ports import Changes, CommitMode, EventRow, JobFilter, Snapshot, UsageBy
from berth.service.rows import event_from_row, job_from_row, node_from_row, tally_usage
from berth.store.tables import CONFIG, EVENTS, JOBS, LIVE_STATES, NODES
from berth.store.writes import Fence, FenceRefused, Prepared, write, write_async

if TYPE_CHECKING:
    from berth.store.lease import Lease


class SqlStore:
    """Jobs, nodes and configuration in a SQL database (schema from the migrations)."""

    def __init__(self, engine: Engine, lease: Lease | None = None, recent: int = 1000) -> None:
        self.engine = engine
        #: High availability: every save first checks that this daemon still leads.
        self.lease = lease
        #: Finished jobs loaded at start-up, newest first (older ones stay in the table).
        self.recent = recent
        self._known_jobs: set[int] = set()
        #: Every job numbered up to this was stored before the load.
        self._stored_up_to = 0
        self._known_nodes: set[str] = set()
        self._writes = _Writes(engine.dialect)
        #: SQLite commits on the loop (a local commit is shorter than any hop); PostgreSQL
        #: on an asyncio connection, so the loop goes on while the database answers.
        modes: dict[str, CommitMode] = {"sqlite": "loop", "postgresql": "async"}
        self.commits: CommitMode = modes.get(engine.dialect.name, "thread")
        self._async: Any = None
        self._async_used = 0.0

    def load(self) -> Snapshot:
        """Live state: every job not finished, the ``recent`` latest finished ones, the
        nodes, the configuration; the history stays in the table (:meth:`job`,
        :meth:`history`), so a start costs the same after a year as after a day."""
        live = sa.select(JOBS).where(JOBS.c.state.in_(LIVE_STATES))
        finished = (
            sa.select(JOBS)
            .where(JOBS.c.state.not_in(LIVE_STATES))
            .order_by(JOBS.c.id.desc())
            .limit(self.recent)
        )
        with self.engine.connect() as conn:
            rows = [*conn.execute(live), *conn.execute(finished)]
            jobs = sorted((job_from_row(dict(r._mapping)) for r in rows), key=lambda j: j.id)
            top = conn.execute(sa.select(sa.func.max(JOBS.c.id))).scalar() or 0
            nodes = [node_from_row(dict(r._mapping)) for r in conn.execute(sa.select(NODES))]
            config = {r.key: r.value for r in conn.execute(sa.select(CONFIG))}
            last_event = conn.execute(sa.select(sa.func.max(EVENTS.c.id))).scalar()
        self._known_jobs = {job.id for job in jobs}
        self._stored_up_to = int(top)
        self._known_nodes = {node.name for node in nodes}
        return Snapshot(jobs=jobs, nodes=nodes, config=config, last_event_id=last_event or 0,
                        last_job_id=int(top))  # fmt: skip

    def job(self, job_id: int) -> JobRecord | None:
        """One stored job (finished ones the daemon no longer holds)."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(JOBS).where(JOBS.c.id == job_id)).first()
        return None if row is None else job_from_row(dict(row._mapping))

    def jobs_by_keys(self, keys: list[tuple[str, str]]) -> list[JobRecord]:
        """Stored jobs submitted with these ``(user, idempotency key)`` pairs."""
        if not keys:
            return []
        wanted = sa.tuple_(JOBS.c.user, JOBS.c.idempotency_key).in_(keys)
        with self.engine.connect() as conn:
            return [
                job_from_row(dict(r._mapping)) for r in conn.execute(sa.select(JOBS).where(wanted))
            ]

    def usage(
        self, since: int, until: int, by: UsageBy, where: JobFilter
    ) -> dict[str, dict[str, float]]:
        """Per user or account, over the jobs that pass ``where`` and ended in ``[since,
        until)`` (the ``end_time`` index finds them): jobs and resource-seconds."""
        group = JOBS.c.account if by == "account" else JOBS.c.user
        query = _filtered(
            sa.select(
                group, JOBS.c.resources, JOBS.c.start_time, JOBS.c.end_time, JOBS.c.usage
            ).where(
                JOBS.c.end_time >= since, JOBS.c.end_time < until, JOBS.c.start_time.is_not(None)
            ),
            where,
        )
        with self.engine.connect() as conn:
            rows = conn.execution_options(stream_results=True).execute(query)
            return tally_usage((row[0], row[1], row[2], row[3], row[4]) for row in rows)

    def history(self, where: JobFilter, before: int | None, limit: int) -> list[JobRecord]:
        """Stored jobs that pass ``where``, newest first, numbered below ``before``."""
        query = _filtered(sa.select(JOBS).order_by(JOBS.c.id.desc()).limit(limit), where)
        if before is not None:
            query = query.where(JOBS.c.id < before)
        with self.engine.connect() as conn:
            return [job_from_row(dict(r._mapping)) for r in conn.execute(query)]

    def events_after(self, after: int, limit: int, job_id: int | None = None) -> list[EventRow]:
        """Stored events numbered above ``after``, oldest first, at most ``limit``; only
        job ``job_id``'s if given."""
        query = sa.select(EVENTS).where(EVENTS.c.id > after).order_by(EVENTS.c.id).limit(limit)
        if job_id is not None:
            query = query.where(EVENTS.c.job_id == job_id)
        with self.engine.connect() as conn:
            return [event_from_row(dict(r._mapping)) for r in conn.execute(query)]

    def prune_events(self, before: float) -> int:
        """Delete events recorded (wall time) before ``before``; how many went."""
        with self.engine.begin() as conn:
            return conn.execute(EVENTS.delete().where(EVENTS.c.recorded_at < before)).rowcount

    def save(self, changes: Changes) -> None:
        """Write ``changes`` in one transaction on a pooled connection (blocking)."""
        if not changes:
            return
        steps, fence = self._steps(changes)
        try:
            write(self.engine, steps, fence)
        except FenceRefused:
            assert self.lease is not None
            raise self.lease.refused() from None
        self._written(changes)

    async def save_async(self, changes: Changes) -> None:
        """:meth:`save` awaited on the daemon's own asyncio connection (PostgreSQL)."""
        if not changes:
            return
        steps, fence = self._steps(changes)
        connection = await self._async_connection()
        try:
            await write_async(connection, steps, fence)
        except FenceRefused:
            assert self.lease is not None
            raise self.lease.refused() from None
        finally:
            self._async_used = time.monotonic()
        self._written(changes)

    async def _async_connection(self) -> Any:
        """The connection :meth:`save_async` writes on: opened when first needed and
        again once closed; after a second idle, checked with a round trip first (as the
        pool checks its connections), so a database restarted meanwhile costs a new
        connection, not a failed commit."""
        import psycopg  # only a daemon on PostgreSQL loads the driver's asyncio side

        connection = self._async
        if connection is not None and not connection.closed:
            if time.monotonic() - self._async_used < 1.0:
                return connection
            try:
                await connection.execute("SELECT 1")
                return connection
            except psycopg.Error:
                await connection.close()
        url = self.engine.url.set(drivername="postgresql")
        self._async = await psycopg.AsyncConnection.connect(
            url.render_as_string(hide_password=False)
        )
        return self._async

    async def aclose(self) -> None:
        """Close the asyncio connection, if one was opened."""
        if self._async is not None:
            await self._async.close()
            self._async = None

    def _steps(self, changes: Changes) -> tuple[list[tuple[Prepared, list[Any]]], Fence | None]:
        """The statements and rows that write ``changes``, and the fence they start with."""

        def known(job_id: int) -> bool:
            return job_id <= self._stored_up_to or job_id in self._known_jobs

        new_jobs = [row for i, row in changes.jobs.items() if not known(i)]
        old_jobs = [
            {"b_" + k: v for k, v in row.items()} for i, row in changes.jobs.items() if known(i)
        ]
        new_nodes = [row for n, row in changes.nodes.items() if n not in self._known_nodes]
        old_nodes = [
            {"b_" + k: v for k, v in row.items()}
            for n, row in changes.nodes.items()
            if n in self._known_nodes
        ]
        steps: list[tuple[Prepared, list[Any]]] = [
            (self._writes.insert_jobs, new_jobs),
            (self._writes.update_jobs, old_jobs),
            (self._writes.insert_nodes, new_nodes),
            (self._writes.update_nodes, old_nodes),
            (self._writes.insert_events, changes.events),
        ]
        if changes.config:
            rows = [{"key": k, "value": v} for k, v in changes.config.items()]
            steps += [(self._writes.delete_config, rows), (self._writes.insert_config, rows)]
        fence = None if self.lease is None else self.lease.fence(self.engine.dialect)
        return steps, fence

    def _written(self, changes: Changes) -> None:
        self._known_jobs.update(changes.jobs)
        self._known_nodes.update(changes.nodes)


class _Writes:
    """The statements :meth:`SqlStore.save` sends, compiled once for the dialect."""

    def __init__(self, dialect: Dialect) -> None:
        self.insert_jobs = Prepared.of(JOBS.insert(), dialect)
        self.update_jobs = Prepared.of(_update_by_key(JOBS, "id"), dialect)
        self.insert_nodes = Prepared.of(NODES.insert(), dialect)
        self.update_nodes = Prepared.of(_update_by_key(NODES, "name"), dialect)
        self.insert_events = Prepared.of(EVENTS.insert(), dialect)
        self.delete_config = Prepared.of(
            CONFIG.delete().where(CONFIG.c.key == sa.bindparam("key")), dialect
        )
        self.insert_config = Prepared.of(CONFIG.insert(), dialect)


def _filtered(query: sa.Select[Any], where: JobFilter) -> sa.Select[Any]:
    if where.states is not None:
        query = query.where(JOBS.c.state.in_(sorted(where.states)))
    if where.user is not None:
        query = query.where(JOBS.c.user == where.user)
    if where.account is not None:
        query = query.where(JOBS.c.account == where.account)  # set on every row (0008)
    if where.partitions is not None:  # (the default one's jobs record none)
        named = sorted(p for p in where.partitions if p is not None)
        chosen = JOBS.c.partition.in_(named)
        query = query.where(sa.or_(chosen, JOBS.c.partition.is_(None)) if None in where.partitions
                            else chosen)  # fmt: skip
    return query


def _update_by_key(table: sa.Table, key: str) -> sa.Update:
    """``UPDATE table SET every column WHERE key = :b_key`` (parameters prefixed ``b_``)."""
    return (
        table.update()
        .where(table.c[key] == sa.bindparam("b_" + key))
        .values({c.name: sa.bindparam("b_" + c.name) for c in table.columns if c.name != key})
    )
