"""The leader's lease and its fencing on a real PostgreSQL: a new leader raises the
epoch, and the old leader's writes are refused by the database itself. (HA needs
PostgreSQL; the fence is also checked on SQLite, where the store's writer reads the
update's row count instead of letting the database fail the transaction.)"""

from __future__ import annotations

import asyncio
import time

import pytest
import sqlalchemy as sa

from berth.service.handlers.job_commands import submit
from berth.store.lease import Fenced, Lease, current_leader
from berth.store.migrate import upgrade
from berth.store.sql import SqlStore
from berth.store.tables import create_db_engine
from tests.support.live import engine, request


def test_a_stale_leader_can_write_nothing(database: str) -> None:
    upgrade(database)
    db = create_db_engine(database)
    old = Lease(db, "old", "http://old", seconds=1.0)
    new = Lease(db, "new", "http://new", seconds=30.0)
    assert old.try_acquire().holder == "old"
    assert old.epoch == 1
    assert new.try_acquire().holder == "old"  # not expired: the new one waits
    assert new.epoch is None
    time.sleep(1.2)  # the old leader was paused past its lease
    assert new.try_acquire().holder == "new"
    assert new.epoch == 2
    leader = current_leader(db)
    assert leader is not None
    assert (leader.holder, leader.url, leader.epoch) == ("new", "http://new", 2)
    assert not old.renew()  # it learns it lost the lease ...
    stale = SqlStore(db, old)
    live = engine()
    submit(live, request(cpus=8), 0)
    with pytest.raises(Fenced):
        stale.save(live.take_changes())  # ... and the database refuses its writes
    assert SqlStore(db).load().jobs == []  # nothing of the refused batch landed
    fresh = SqlStore(db, new)
    submit(live, request(cpus=8), 0)
    fresh.save(live.take_changes())
    assert [job.id for job in SqlStore(db).load().jobs] == [2]
    assert new.renew()
    db.dispose()


def test_a_stale_leaders_awaited_write_is_refused_too(pg_database: str) -> None:
    """The daemon on PostgreSQL writes on its own asyncio connection
    (``SqlStore.save_async``): the fence refuses a stale leader there as well, and the
    store goes on writing for the new one."""
    upgrade(pg_database)
    database = create_db_engine(pg_database)
    old = Lease(database, "old", "http://old", seconds=1.0)
    new = Lease(database, "new", "http://new", seconds=30.0)
    old.try_acquire()
    time.sleep(1.2)
    assert new.try_acquire().holder == "new"
    stale, fresh = SqlStore(database, old), SqlStore(database, new)
    assert stale.commits == fresh.commits == "async"
    live = engine()

    async def scenario() -> None:
        submit(live, request(cpus=8), 0)
        with pytest.raises(Fenced):
            await stale.save_async(live.take_changes())
        submit(live, request(cpus=8), 0)
        await fresh.save_async(live.take_changes())
        submit(live, request(cpus=4), 0)
        await fresh.save_async(live.take_changes())  # the same connection, again
        await stale.aclose()
        await fresh.aclose()

    asyncio.run(scenario())
    assert [job.id for job in SqlStore(database).load().jobs] == [2, 3]
    database.dispose()


def test_an_awaited_write_after_a_lost_connection_opens_a_new_one(pg_database: str) -> None:
    """The database dropped the store's connection while it was idle (a restart, an
    operator's pg_terminate_backend): the next write checks it first and reconnects,
    as the pool's pre-ping does for the blocking writes."""
    upgrade(pg_database)
    database = create_db_engine(pg_database)
    store = SqlStore(database)
    live = engine()

    async def scenario() -> None:
        submit(live, request(cpus=8), 0)
        await store.save_async(live.take_changes())
        with database.begin() as conn:
            dropped = conn.execute(sa.text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )).scalar()  # fmt: skip
        assert dropped == 1  # the store's own connection
        time.sleep(1.1)  # idle long enough to be checked before use
        submit(live, request(cpus=4), 0)
        await store.save_async(live.take_changes())
        await store.aclose()

    asyncio.run(scenario())
    assert [job.id for job in SqlStore(database).load().jobs] == [1, 2]
    database.dispose()
