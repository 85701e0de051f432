"""The leader's lease on PostgreSQL, and the fencing epoch every write carries.

One row (``leader``, id 1) names the daemon that leads: its id, its URL, its epoch and
when its lease expires. Times are the database's own clock, so the daemons' clocks need
not agree. A daemon takes the lease when the row is missing or expired, raising the
epoch by one; the leader renews it every third of its length. Every store transaction
of the leader first updates the row *where the holder and epoch are its own*: if
another daemon has taken over, no row matches and the transaction is refused
(:class:`Fenced`), so a leader that was paused and woke up after losing its lease can
change nothing. The row lock also orders a takeover after any write in flight.

Why a lease row rather than an advisory lock: an advisory lock lives as long as one
database connection, and a connection pool, a PgBouncer or a database restart breaks
that tie silently; a row with an epoch survives all of them and is checked inside the
very transaction it protects.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect, Engine

from berth.store.tables import LEADER
from berth.store.writes import Fence


class Fenced(RuntimeError):
    """Another daemon leads now: this one's writes are refused."""


@dataclass(frozen=True, slots=True)
class Leadership:
    """Who leads: its id, URL and epoch."""

    holder: str
    url: str
    epoch: int


def _db_now(conn: Connection) -> float:
    if conn.dialect.name == "postgresql":
        value = conn.execute(sa.text("SELECT extract(epoch FROM clock_timestamp())")).scalar()
    else:  # SQLite: single-node only, but keep the module usable in its tests
        value = conn.execute(sa.text("SELECT (julianday('now') - 2440587.5) * 86400.0")).scalar()
    return float(str(value))


class Lease:
    """This daemon's side of the lease: take, renew, and the fence for its writes."""

    def __init__(self, database: Engine, holder: str, url: str, seconds: float) -> None:
        self.database = database
        self.holder = holder
        self.url = url
        self.seconds = seconds
        #: The epoch this daemon leads in (None: it does not lead).
        self.epoch: int | None = None
        self._fence: Fence | None = None

    def try_acquire(self) -> Leadership:
        """Take the lease if it is free or expired (a new epoch), or extend it if it is
        ours; the leadership now in force, ours or another's."""
        try:
            with self.database.begin() as conn:
                row = conn.execute(
                    sa.select(LEADER).where(LEADER.c.id == 1).with_for_update()
                ).first()
                now = _db_now(conn)
                mine = {"holder": self.holder, "url": self.url, "expires_at": now + self.seconds}
                if row is None:
                    epoch = 1
                    conn.execute(LEADER.insert().values(id=1, epoch=epoch, **mine))
                elif row.holder == self.holder and row.epoch == self.epoch:
                    epoch = int(row.epoch)
                    conn.execute(LEADER.update().where(LEADER.c.id == 1).values(**mine))
                elif row.expires_at < now:
                    epoch = int(row.epoch) + 1
                    conn.execute(
                        LEADER.update().where(LEADER.c.id == 1).values(epoch=epoch, **mine)
                    )
                else:
                    return Leadership(row.holder, row.url, int(row.epoch))
        except sa.exc.IntegrityError:  # another daemon inserted the first row just now
            return self.try_acquire()
        self.epoch = epoch  # only once committed
        return Leadership(self.holder, self.url, epoch)

    def renew(self) -> bool:
        """Extend our lease; False if it is no longer ours (or had expired)."""
        if self.epoch is None:
            return False
        with self.database.begin() as conn:
            now = _db_now(conn)
            renewed = conn.execute(
                LEADER.update()
                .where(
                    LEADER.c.id == 1,
                    LEADER.c.holder == self.holder,
                    LEADER.c.epoch == self.epoch,
                    LEADER.c.expires_at >= now,
                )
                .values(expires_at=now + self.seconds)
            ).rowcount
        return renewed == 1

    def fence(self, dialect: Dialect) -> Fence:
        """The check every write transaction of ours starts with: refused unless we still
        lead in our epoch (see :class:`~berth.store.writes.Fence`)."""
        if self.epoch is None:
            raise Fenced(f"daemon {self.holder} does not lead")
        if self._fence is None or self._fence.params["epoch"] != self.epoch:
            update = (
                LEADER.update()
                .where(
                    LEADER.c.id == 1,
                    LEADER.c.holder == sa.bindparam("holder"),
                    LEADER.c.epoch == sa.bindparam("epoch"),
                )
                .values(holder=LEADER.c.holder)
            )
            self._fence = Fence(self.holder, self.epoch, dialect, update)
        return self._fence

    def refused(self) -> Fenced:
        """What a write refused by the fence raises."""
        return Fenced(f"daemon {self.holder} no longer leads (epoch {self.epoch} is over)")


def current_leader(database: Engine) -> Leadership | None:
    """Who leads now, if anyone holds an unexpired lease."""
    with database.connect() as conn:
        row = conn.execute(sa.select(LEADER).where(LEADER.c.id == 1)).first()
        if row is None or row.expires_at < _db_now(conn):
            return None
        return Leadership(row.holder, row.url, int(row.epoch))
