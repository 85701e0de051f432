"""The leader's lease and its fencing on a real PostgreSQL: a new leader raises the
epoch, and the old leader's writes are refused by the database itself. (HA needs
PostgreSQL; the fence is also checked on SQLite, where the store's writer reads the
update's row count instead of letting the database fail the transaction.)"""

from __future__ import annotations

import time

import pytest

from berth.store.lease import Fenced, Lease, current_leader
from berth.store.migrate import upgrade
from berth.store.sql import SqlStore, create_db_engine
from tests.support.live import engine, request


def test_a_stale_leader_can_write_nothing(database: str) -> None:
    url = database
    upgrade(url)
    database = create_db_engine(url)
    old = Lease(database, "old", "http://old", seconds=1.0)
    new = Lease(database, "new", "http://new", seconds=30.0)
    assert old.try_acquire().holder == "old"
    assert old.epoch == 1
    assert new.try_acquire().holder == "old"  # not expired: the new one waits
    assert new.epoch is None
    time.sleep(1.2)  # the old leader was paused past its lease
    assert new.try_acquire().holder == "new"
    assert new.epoch == 2
    leader = current_leader(database)
    assert leader is not None
    assert (leader.holder, leader.url, leader.epoch) == ("new", "http://new", 2)
    assert not old.renew()  # it learns it lost the lease ...
    stale = SqlStore(database, old)
    live = engine()
    live.submit(request(cpus=8), 0)
    with pytest.raises(Fenced):
        stale.save(live.take_changes())  # ... and the database refuses its writes
    assert SqlStore(database).load().jobs == []  # nothing of the refused batch landed
    fresh = SqlStore(database, new)
    live.submit(request(cpus=8), 0)
    fresh.save(live.take_changes())
    assert [job.id for job in SqlStore(database).load().jobs] == [2]
    assert new.renew()
    database.dispose()
