"""The composition root: settings in, a ready FastAPI app out.

Applies the migrations, opens the store, restores the engine from it (recovery after a
crash is the same path as a normal start), and wires the coordinator, the APScheduler
waker, the emulated nodes, the token table and the dry-run emulator into the app.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI

from berth.api.app import create_app
from berth.api.auth import Principal, Tokens, parse_tokens
from berth.api.deps import Daemon
from berth.dispatch.emulated import EmulatedNodes
from berth.emulate.live import replay_live
from berth.emulate.workload import TraceJob
from berth.runtime.clock import ScaledClock
from berth.runtime.daemon import Waker
from berth.runtime.settings import Settings, parse_nodes
from berth.service.coordinator import Coordinator
from berth.service.engine import Engine
from berth.service.model import RequestError
from berth.service.ports import Clock, Snapshot
from berth.store.migrate import upgrade
from berth.store.sql import SqlStore, create_db_engine

log = logging.getLogger("berth")


@dataclass(slots=True)
class Built:
    app: FastAPI
    daemon: Daemon
    tokens_note: str


def latest_time(snapshot: Snapshot) -> int:
    """The latest time any stored job mentions (the clock never goes back past it)."""
    latest = 0
    for job in snapshot.jobs:
        for moment in (job.submit_time, job.start_time, job.end_time):
            if moment is not None and moment > latest:
                latest = moment
    return latest


def load_tokens(settings: Settings) -> tuple[Tokens, str]:
    """The configured tokens; with none, a generated pair kept in ``data_dir/tokens``."""
    table: dict[str, Principal] = {}
    if settings.tokens:
        table.update(parse_tokens(settings.tokens))
    if settings.tokens_file is not None:
        table.update(parse_tokens(settings.tokens_file.read_text()))
    if table:
        return Tokens(table), ""
    path = settings.data_dir / "tokens"
    if not path.exists():
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        operator, user = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        path.write_text(f"{operator}:admin:operator\n{user}:demo:user\n")
        path.chmod(0o600)
    table = parse_tokens(path.read_text())
    lines = [f"  {p.role.value:8} {p.user:8} {t}" for t, p in table.items()]
    return Tokens(table), f"tokens (from {path}):\n" + "\n".join(lines)


async def dry_run(
    engine: Engine, policy: str, options: dict[str, object], now: int
) -> dict[str, object]:
    """Replay the live jobs forward under ``policy`` in the emulator (off the event loop)."""
    running = [
        (TraceJob(r.as_job(), EmulatedNodes.runtime(r)), r.start_time)
        for r in engine.running.values()
        if r.start_time is not None
    ]
    waiting = [TraceJob(r.as_job(), EmulatedNodes.runtime(r)) for r in engine.pending.values()]
    capacity = engine.cluster.full_capacity()
    try:
        records, report = await asyncio.to_thread(
            replay_live, running, waiting, policy, options, capacity, now
        )
    except (TypeError, ValueError) as error:
        raise RequestError("invalid", str(error), "options") from None
    return {
        "policy": policy,
        "now": now,
        "jobs": [
            {"job_id": r.id, "predicted_start": r.start, "predicted_end": r.end, "status": r.status}
            for r in records
        ],
        "metrics": report,
    }


def build(settings: Settings, clock: Clock | None = None) -> Built:
    """The app for ``settings``; ``clock`` replaces the scaled wall clock (tests)."""
    url = settings.url()
    upgrade(url)
    database = create_db_engine(url, settings.sqlite_synchronous)
    store = SqlStore(database)
    snapshot = store.load()
    if clock is None:
        clock = ScaledClock(settings.time_scale, not_before=latest_time(snapshot))
    engine = Engine.restore(
        snapshot,
        EmulatedNodes(),
        clock.now(),
        parse_nodes(settings.nodes),
        settings.policy,
        dict(settings.policy_options),
        hold_intents=True,
    )
    coordinator = Coordinator(engine, store, clock)
    tokens, note = load_tokens(settings)
    daemon = Daemon(coordinator, tokens, dry_run)
    waker = Waker(coordinator, settings.reconcile_seconds)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await coordinator.start()
        waker.start()
        waker.plan(engine.next_event())
        try:
            yield
        finally:
            waker.stop()
            await coordinator.stop()
            database.dispose()

    return Built(create_app(daemon, lifespan), daemon, note)
