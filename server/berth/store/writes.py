"""Prepared writes: a batch's rows handed to the database driver without SQLAlchemy's
per-statement work.

Every batch the single writer commits is a few ``executemany`` calls of the same four
statements (new jobs, changed jobs, events, sometimes nodes). Through SQLAlchemy's
``Connection.execute`` each call looked its compiled form up, built an execution
context and ran every value through its type's bind processor: about a third of a
submission's commit on SQLite, measured with py-spy. Here each statement is compiled
once for the database's dialect, and a row becomes the driver's parameters with the
very bind processors SQLAlchemy would apply (JSON columns serialised, booleans as the
database wants them), so the stored values are the same as before.

:func:`write` runs one transaction on a pooled connection; :func:`write_async` on the
daemon's own asyncio connection to PostgreSQL. On PostgreSQL it is sent as one pipeline
(psycopg's pipeline mode): the fence, every row and the ``COMMIT`` travel together and
the database answers once, instead of once per statement. The fence
there is a statement that *fails* when this daemon no longer leads (a division by
zero on the count of lease rows it could lock), so the transaction aborts on the
server before anything queued behind it can commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.sql.compiler import SQLCompiler


@dataclass(frozen=True, slots=True)
class Prepared:
    """One statement compiled for one dialect, and how a row becomes its parameters."""

    sql: str
    #: Bind names in the order of the driver's positional parameters, or ``None`` when
    #: the driver takes them by name (psycopg's ``%(name)s``).
    positions: tuple[str, ...] | None
    #: Every bind's name and its value when a row has none (a literal of the statement
    #: such as ``id = 1``, else NULL).
    defaults: tuple[tuple[str, Any], ...]
    #: ``(bind name, processor)`` for the binds whose type converts values.
    processors: tuple[tuple[str, Callable[[Any], Any]], ...]

    @classmethod
    def of(cls, statement: sa.ClauseElement, dialect: Dialect) -> Prepared:
        compiled = statement.compile(dialect=dialect)
        assert isinstance(compiled, SQLCompiler)
        defaults = tuple((name, bind.value) for name, bind in compiled.binds.items())
        processors = []
        for name, bind in compiled.binds.items():
            process = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if process is not None:
                processors.append((name, process))
        positions = tuple(compiled.positiontup or ()) if compiled.positional else None
        return cls(compiled.string, positions, defaults, tuple(processors))

    def params(self, row: Mapping[str, Any]) -> tuple[Any, ...] | dict[str, Any]:
        """The driver's parameters for ``row`` (keyed by bind name)."""
        values = {name: row.get(name, default) for name, default in self.defaults}
        for name, process in self.processors:
            values[name] = process(values[name])
        if self.positions is None:
            return values
        return tuple([values[name] for name in self.positions])


#: Refuses the transaction on PostgreSQL unless this daemon still holds the lease in its
#: epoch: the update locks the lease row (so a takeover waits for this commit), and when
#: no row matched, the count is 0 and the division fails (SQLSTATE 22012), which aborts
#: the transaction on the server, pipeline and all.
PG_FENCE = (
    "WITH held AS (UPDATE leader SET holder = holder"
    " WHERE id = 1 AND holder = %(holder)s AND epoch = %(epoch)s RETURNING 1)"
    " SELECT 1 / (SELECT count(*) FROM held)"
)
#: The SQLSTATE of a division by zero: :data:`PG_FENCE` refused the transaction.
FENCE_REFUSED = "22012"


class Fence:
    """The check a leader's transaction starts with: its statement and parameters, and
    whether the database refuses the transaction by itself (PostgreSQL: see
    :data:`PG_FENCE`) or the writer must read how many rows the update matched."""

    def __init__(self, holder: str, epoch: int, dialect: Dialect, update: sa.Update) -> None:
        self.params = {"holder": holder, "epoch": epoch}
        self.fails_itself = dialect.name == "postgresql"
        self.prepared = None if self.fails_itself else Prepared.of(update, dialect)

    def check(self, cursor: Any) -> bool:
        """Send the check; False if it matched no row (only where it does not fail)."""
        if self.prepared is None:
            cursor.execute(PG_FENCE, self.params)
            return True
        cursor.execute(self.prepared.sql, self.prepared.params(self.params))
        return bool(cursor.rowcount == 1)


class FenceRefused(Exception):
    """The fence found another daemon leading; the transaction was rolled back."""


def write(
    engine: Engine, steps: Iterable[tuple[Prepared, list[dict[str, Any]]]], fence: Fence | None
) -> None:
    """One transaction: ``fence`` if given, then every step's rows, then the commit; all
    in one pipeline on PostgreSQL. Raises :class:`FenceRefused` if the fence refused it,
    the driver's error if the database did; either way nothing of it is committed."""
    raw = engine.raw_connection()
    try:
        driver = raw.driver_connection
        pipelined = engine.dialect.name == "postgresql"
        cursor = raw.cursor()
        try:
            with driver.pipeline() if pipelined else nullcontext():  # type: ignore[union-attr]
                if fence is not None and not fence.check(cursor):
                    raise FenceRefused
                for prepared, rows in steps:
                    if rows:
                        batch: list[Any] = [prepared.params(row) for row in rows]
                        cursor.executemany(prepared.sql, batch)
                raw.commit()
        except Exception as error:
            try:
                raw.rollback()
            except Exception:  # the connection itself is gone: never hand it out again
                raw.invalidate()
            if getattr(error, "sqlstate", None) == FENCE_REFUSED:
                raise FenceRefused from error
            raise
        finally:
            cursor.close()
    finally:
        raw.close()


async def write_async(
    connection: Any, steps: Iterable[tuple[Prepared, list[dict[str, Any]]]], fence: Fence | None
) -> None:
    """:func:`write` on a psycopg ``AsyncConnection`` (PostgreSQL): the same pipeline,
    awaited, so the event loop goes on with other requests while the database answers
    (no worker thread, which would have to win the GIL back from the loop after each
    round trip). Raises :class:`FenceRefused` if the fence refused the transaction."""
    try:
        async with connection.pipeline():
            cursor = connection.cursor()
            if fence is not None:
                assert fence.fails_itself, "an awaited write is PostgreSQL's"
                await cursor.execute(PG_FENCE, fence.params)
            for prepared, rows in steps:
                if rows:
                    batch: list[Any] = [prepared.params(row) for row in rows]
                    await cursor.executemany(prepared.sql, batch)
            await connection.commit()
    except Exception as error:
        if not connection.closed:
            try:
                await connection.rollback()
            except Exception:  # the connection itself is gone: the store opens another
                await connection.close()
        if getattr(error, "sqlstate", None) == FENCE_REFUSED:
            raise FenceRefused from error
        raise
