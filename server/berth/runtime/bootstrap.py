"""The composition root: settings in, a ready FastAPI app out.

Applies the migrations, opens the store, restores the engine from it (recovery after a
crash is the same path as a normal start), and wires the coordinator, the APScheduler
waker, the emulated nodes, the token table and the dry-run emulator into the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI

from berth.api.app import create_app
from berth.api.auth import Tokens
from berth.api.deps import Daemon
from berth.api.limits import Limits
from berth.api.principals import Role, digest, new_token, parse_tokens
from berth.api.waiters import Waiters
from berth.core.dependencies import parse_needs
from berth.dispatch.emulated import EmulatedNodes
from berth.emulate.live import replay_live
from berth.emulate.workload import TraceJob
from berth.runtime.clock import ScaledClock
from berth.runtime.daemon import Waker
from berth.runtime.heap import settle_heap
from berth.runtime.keys import issued_tokens
from berth.runtime.logs import log_event
from berth.runtime.settings import Settings
from berth.runtime.stalls import StallWatch
from berth.service.agent_commands import ExpireAgents, ResizeAgents, ReturnAgents
from berth.service.coordinator import Coordinator
from berth.service.engine import Engine
from berth.service.handlers.agents import AgentNodes, AgentSettings
from berth.service.model import RequestError
from berth.service.ports import Clock, NodeBackend, Snapshot
from berth.service.restore import restore_engine
from berth.store.lease import Lease
from berth.store.migrate import upgrade
from berth.store.sql import SqlStore
from berth.store.tables import create_db_engine

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


def load_tokens(settings: Settings, node_tokens: dict[str, str]) -> tuple[Tokens, str]:
    """The configured tokens; with none, a generated pair. The daemon keeps digests only
    (``data_dir/tokens``); the tokens themselves go to ``data_dir/credentials`` (mode
    600), the local operator's copy, which the daemon reads only to run its own demo."""
    table = settings.configured_tokens()
    if table:
        return Tokens(table, node_tokens), ""
    path = settings.data_dir / "tokens"
    credentials = settings.data_dir / "credentials"
    if not path.exists():
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        operator, user = new_token("operator"), new_token("user")
        credentials.touch(mode=0o600)
        credentials.write_text(f"{operator}:admin:operator\n{user}:demo:user\n")
        path.touch(mode=0o600)
        path.write_text(
            f"sha256:{digest(operator)}:admin:operator\nsha256:{digest(user)}:demo:user\n"
        )
    _hash_plaintext_tokens(path, credentials)
    table = parse_tokens(path.read_text())
    demo: dict[Role, str] = {}
    lines = []
    if credentials.exists():
        for line in credentials.read_text().split():
            token, user_name, role = line.split(":")
            demo.setdefault(Role(role), token)
            lines.append(f"  {role:8} {user_name:8} {token}")
    note = f"tokens (from {credentials}; the daemon keeps only their digests in {path}):\n"
    return Tokens(table, node_tokens, demo), note + "\n".join(lines)


def _hash_plaintext_tokens(path: Path, credentials: Path) -> None:
    """A data dir from before tokens were hashed holds them in plain text: move them to
    ``credentials`` and keep only their digests in ``tokens``."""
    lines = [line for line in path.read_text().split() if line]
    plain = [line for line in lines if not line.startswith("sha256:")]
    if not plain:
        return
    credentials.touch(mode=0o600)
    with credentials.open("a") as copy:
        copy.write("".join(f"{line}\n" for line in plain))
    hashed = [
        line
        if line.startswith("sha256:")
        else f"sha256:{digest(line.split(':', 1)[0])}:" + line.split(":", 1)[1]
        for line in lines
    ]
    path.write_text("".join(f"{line}\n" for line in hashed))


async def dry_run(
    engine: Engine, policy: str, options: dict[str, object], now: int
) -> dict[str, object]:
    """Replay the default partition's jobs forward under ``policy`` in the emulator (off
    the event loop); gang partitions keep their own nodes and are not replayed."""
    running = [
        (TraceJob(r.as_job(), EmulatedNodes.runtime(r)), r.start_time)
        for r in engine.running.values()
        if r.start_time is not None and r.partition is None
    ]
    waiting = [
        TraceJob(r.as_job(), EmulatedNodes.runtime(r), needs=tuple(parse_needs(r.needs)))
        for r in engine.pending.values()
        if r.partition is None
    ]
    capacity = engine.partitions.pool().full_capacity()
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


async def _watch_agents(coordinator: Coordinator, agents: AgentNodes) -> None:
    """Take down the nodes of silent agents, checking a few times per timeout; resize
    the nodes whose agent registered with other resources, and bring up those whose
    agent talks again or registers, as soon as one does (each kind in one change, with
    every node that came meanwhile)."""
    period = min(agents.settings.node_timeout / 4, 5.0)
    talked = asyncio.Event()
    agents.on_return = talked.set
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(talked.wait(), period)
        talked.clear()
        if coordinator.failed is not None:
            return
        for due, command in (
            (agents.silent, ExpireAgents),
            (agents.resized, ResizeAgents),  # (before: a node comes back as it is now)
            (agents.returned, ReturnAgents),
        ):
            if due(coordinator.engine, time.monotonic()):
                try:
                    await coordinator.call(command(agents, time.monotonic()))
                except Exception:  # the store failed: health says so; keep the loop alive
                    log.exception("changing the nodes of agents failed")


def build(settings: Settings, clock: Clock | None = None, lease: Lease | None = None) -> Built:
    """The app for ``settings``; ``clock`` replaces the scaled wall clock (tests);
    ``lease`` fences every write (high availability: this daemon leads)."""
    url = settings.url()
    upgrade(url)
    database = create_db_engine(url, settings.sqlite_synchronous)
    store = SqlStore(database, lease)
    snapshot = store.load()
    if clock is None:
        clock = ScaledClock(settings.time_scale, not_before=latest_time(snapshot))
    agents: AgentNodes | None = None
    backend: NodeBackend = EmulatedNodes()
    if settings.backend == "agents":
        agents = AgentNodes(
            AgentSettings(
                sync_wait=settings.sync_wait,
                node_timeout=settings.agent_timeout,
                startup_grace=settings.agent_grace,
                fence_seconds=settings.fence_seconds,
                kill_grace=settings.kill_grace,
            ),
            wall=time.time,
        )
        backend = agents
    engine = restore_engine(
        snapshot,
        backend,
        clock.now(),
        settings.default_nodes(),
        settings.policy,
        dict(settings.policy_options),
        hold_intents=True,
        deferred=True,
    )
    coordinator = Coordinator(engine, store, clock, snapshot.last_event_id)
    coordinator.events.on_published = log_event  # one line per meaningful event
    tokens, note = load_tokens(settings, engine.node_tokens)
    tokens.issued = issued_tokens(settings, database, f"{socket.gethostname()}:{settings.port}")
    waiters = None
    if agents is not None:
        waiters = Waiters()
        agents.on_change = waiters.notify
        agents.restarted(engine.cluster.nodes, time.monotonic())
    limits = Limits(settings.max_body_bytes, settings.submit_rate, settings.submit_burst)
    stalls = StallWatch(settings.stall_report_ms / 1000)
    daemon = Daemon(coordinator, tokens, dry_run, agents, waiters, limits, stalls.lag)
    waker = Waker(coordinator, settings.reconcile_seconds, settings.event_retention_days * 86_400)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await coordinator.start()
        settle_heap()  # the state just loaded is long-lived: the collector stops walking it
        stalls.start()
        waker.start()
        waker.plan(engine.next_event())
        watch = None
        if agents is not None:
            watch = asyncio.create_task(_watch_agents(coordinator, agents))
        assert tokens.issued is not None
        revocations = asyncio.create_task(tokens.issued.keep_fresh())
        try:
            yield
        finally:
            revocations.cancel()
            if watch is not None:
                watch.cancel()
            if waiters is not None:
                waiters.release_all()
            waker.stop()
            stalls.stop()
            await coordinator.stop()
            await store.aclose()
            database.dispose()

    return Built(create_app(daemon, lifespan), daemon, note)
