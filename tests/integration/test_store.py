"""The SQL store and its migrations on a real SQLite file and a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from berth.core.shapes import Shape
from berth.service.handlers.job_commands import submit
from berth.service.model import JobState
from berth.service.ports import JobFilter
from berth.service.rows import event_row
from berth.store.migrate import downgrade, upgrade
from berth.store.sql import SqlStore
from berth.store.tables import METADATA, create_db_engine
from tests.integration.api.harness import Api, make_api
from tests.integration.conftest import OPERATOR
from tests.support.live import engine, request
from tests.support.node_changes import drain


def _differences(url: str) -> list[object]:
    db = create_db_engine(url)
    with db.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), METADATA)
    db.dispose()
    return list(diff)


def test_upgrade_from_empty_equals_the_models(database: str) -> None:
    upgrade(database)
    assert _differences(database) == []


def test_downgrade_and_upgrade_round_trip(database: str) -> None:
    upgrade(database)
    downgrade(database, "base")
    db = create_db_engine(database)
    assert set(sa.inspect(db).get_table_names()) <= {"alembic_version"}
    db.dispose()
    upgrade(database)
    assert _differences(database) == []


def test_jobs_from_before_accounts_are_charged_to_their_user(database: str) -> None:
    upgrade(database, "0007")
    db = create_db_engine(database)
    with db.begin() as conn:
        conn.execute(
            sa.text(
                'INSERT INTO jobs (id, name, "user", resources, time_limit, submit_time, '
                "state, state_reason, allocation, start_time, end_time) VALUES (1, 'old', "
                "'alice', '{\"cpus\": 4}', 60, 0, 'COMPLETED', '', '{}', 10, 70)"
            )
        )
    upgrade(database)
    store = SqlStore(db)
    job = store.job(1)
    assert job is not None
    assert job.account == "alice"
    assert store.usage(0, 100, "account", JobFilter()) == {
        "alice": {"jobs": 1, "cpus_seconds": 240}
    }
    downgrade(database, "0007")
    assert "account" not in {c["name"] for c in sa.inspect(db).get_columns("jobs")}
    db.dispose()


def test_save_and_load_round_trip_the_engine_state(database: str) -> None:
    upgrade(database)
    store = SqlStore(create_db_engine(database))
    reader = SqlStore(create_db_engine(database))
    live = engine()
    for cpus in (32, 16, 16, 8):
        submit(live, request(cpus=cpus, limit=100, key=f"k{cpus}-{len(live.jobs)}"), 0)
    slotted = replace(request(cpus=4, limit=100), shape=Shape(2, {"cpus": 2}, nodes=2))
    submit(live, slotted, 0)  # a slot request keeps its shape across a restart
    drain(live, "node004", "maintenance", 0, force=True)
    store.save(live.take_changes())
    live.advance(100)  # updates of known rows
    store.save(live.take_changes())
    snapshot = reader.load()
    store.engine.dispose()
    reader.engine.dispose()
    assert {j.id: j for j in snapshot.jobs} == live.jobs
    assert {n.name: (n.state, n.reason) for n in snapshot.nodes} == {
        n.name: (n.state, n.reason) for n in live.cluster.nodes.values()
    }
    assert snapshot.config == {
        "policy": "conservative",
        "policy_options": {},
        "node_tokens": {},
        "arrays_in_parts": [],
        "partitions": [],
    }
    assert live.jobs[5].shape == Shape(2, {"cpus": 2}, nodes=2)
    restored = engine(snapshot=snapshot, now=100)
    assert {i: j.guaranteed_start for i, j in restored.jobs.items()} == {
        i: j.guaranteed_start for i, j in live.jobs.items()
    }
    assert restored.jobs[1].state is JobState.COMPLETED


@pytest.fixture
def pg_api(tmp_path: Path, pg_database: str) -> Iterator[Api]:
    yield from make_api(tmp_path, database_url=pg_database)


def test_the_api_on_postgresql(pg_api: Api) -> None:
    first = pg_api.submit(resources={"cpus": 32}, time_limit=100).json()
    second = pg_api.submit(resources={"cpus": 32}, time_limit=100).json()
    assert first["job"]["job_state"] == "RUNNING"
    assert second["job"]["guaranteed_start"] == 1_000_100
    drained = pg_api.call("POST", "/v1/admin/nodes/node001/drain", OPERATOR, json={"force": True})
    assert drained.json()["state"] == "drained"
    waiting = pg_api.call("GET", "/v1/jobs/2").json()  # waits for the drained node
    assert waiting["job_state"] == "PENDING"
    assert waiting["state_reason"].startswith("waits for nodes that are drained or down")


def test_events_are_stored_numbered_paged_and_pruned(database: str) -> None:
    upgrade(database)
    store = SqlStore(create_db_engine(database))
    live = engine()
    submit(live, request(cpus=8, limit=100), 0)
    changes = live.take_changes()
    events = live.outbox.take_events()
    changes.events = [event_row(i, e, "alice", 1000.0 + i) for i, e in enumerate(events, 1)]
    store.save(changes)
    assert [r.event.kind for r in store.events_after(0, 10)] == ["job.accepted", "job.started"]
    assert [r.id for r in store.events_after(1, 10)] == [2]
    assert store.events_after(0, 1)[0].user == "alice"
    assert store.events_after(0, 1)[0].event == events[0]
    reader = SqlStore(create_db_engine(database))
    assert reader.load().last_event_id == 2
    reader.engine.dispose()
    assert store.prune_events(before=1001.5) == 1  # recorded at 1001 and 1002
    assert [r.id for r in store.events_after(0, 10)] == [2]
    store.engine.dispose()
