"""The plan, the cluster, the event stream, health and Prometheus metrics."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from itertools import accumulate
from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

from berth.api.deps import MAX_NUMBER, DaemonDep, PageDep, PrincipalDep
from berth.api.errors import incident
from berth.api.schemas import AccountQuery, ClusterOut, NodeOut, ScheduleOut, WhoAmI, Window
from berth.service.engine import Engine
from berth.service.model import LAG_BUCKETS, JobRecord, JobState, RequestError
from berth.service.partitions.specs import DEFAULT_PARTITION
from berth.service.ports import EventRow, JobFilter, UsageBy
from berth.service.writes import RESTART

router = APIRouter(tags=["system"])

#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE = 15.0
#: Stored events read at a time when a stream resumes.
BACKLOG_PAGE = 1000


@router.get("/v1/whoami", response_model=WhoAmI, summary="Whom the token speaks for, and its role")
async def whoami(who: PrincipalDep) -> WhoAmI:
    return WhoAmI(user=who.user, role=who.role.value, account=who.account, expires_at=who.expires)


@router.get(
    "/v1/schedule",
    response_model=ScheduleOut,
    summary="The plan: running and planned jobs with their windows",
)
async def schedule(
    daemon: DaemonDep,
    _: PrincipalDep,
    page: PageDep,
    node_limit: Annotated[
        int | None,
        Query(
            ge=1,
            le=10_000,
            description="only the jobs on this many nodes (from ``node_offset``, by name, "
            "as /v1/cluster pages them), each window's ``nodes`` holding only those: a "
            "page of a large cluster's Gantt chart",
        ),
    ] = None,
    node_offset: Annotated[int, Query(ge=0, le=MAX_NUMBER, description="nodes skipped")] = 0,
) -> ScheduleOut:
    now = daemon.now()

    def where(engine: Engine, r: JobRecord, only: set[str] | None) -> dict[str, dict[str, int]]:
        if r.state is JobState.RUNNING:
            held = r.allocation
        else:
            lane = engine.planner.lanes.get(r.partition)
            held = (None if lane is None else lane.policy.planned_nodes(r.id)) or {}
        if only is None:
            return held
        return {name: amounts for name, amounts in held.items() if name in only}

    def window(r: JobRecord, start: int | None, nodes: dict[str, dict[str, int]]) -> Window:
        return Window(
            job_id=r.id,
            name=r.name,
            user=r.user,
            job_state=r.state.value,
            start=start,
            end=None if start is None else start + r.time_limit,
            guaranteed_start=r.guaranteed_start,
            deadline=r.deadline,
            resources=r.resources,
            nodes=nodes,
            partition=r.partition or DEFAULT_PARTITION,
        )

    def view(engine: Engine) -> ScheduleOut:
        only = None
        if node_limit is not None:  # (the nodes of a page of /v1/cluster)
            only = set(sorted(engine.cluster.nodes)[node_offset : node_offset + node_limit])
        predicted = engine.forecasts.predictions(now)[1]
        running = [
            window(r, r.start_time, held)
            for r in engine.running.values()
            if (held := where(engine, r, only)) or only is None
        ]
        order = sorted(
            engine.pending.values(),
            key=lambda r: (predicted.get(r.id) is None, predicted.get(r.id) or 0, r.id),
        )
        if only is None:
            planned = [
                window(r, predicted.get(r.id), where(engine, r, None)) for r in page.of(order)
            ]
        else:  # (only the jobs on those nodes are paged: each one's nodes asked once)
            on = [(r, held) for r in order if (held := where(engine, r, only))]
            order = [r for r, _ in on]
            planned = [window(r, predicted.get(r.id), held) for r, held in page.of(on)]
        return ScheduleOut(
            now=now,
            policy=engine.partitions.policy_name,
            running=running,
            planned=planned,
            planned_total=len(order),
            limit=page.limit,
            offset=page.offset,
        )

    return await daemon.coordinator.read(view)


@router.get(
    "/v1/cluster",
    response_model=ClusterOut,
    summary="Capacities, use, and a page of the nodes (by name) with their states",
)
async def cluster(daemon: DaemonDep, _: PrincipalDep, page: PageDep) -> ClusterOut:
    now = daemon.now()

    def view(engine: Engine) -> ClusterOut:
        nodes = sorted(engine.cluster.nodes.values(), key=lambda n: n.name)
        used: dict[str, int] = dict.fromkeys(engine.cluster.full_capacity(), 0)
        for node in nodes:
            for name, amount in node.used.items():
                used[name] = used.get(name, 0) + amount
        return ClusterOut(
            now=now,
            policy=engine.partitions.policy_name,
            capacity=engine.cluster.full_capacity(),
            schedulable=engine.cluster.schedulable_capacity(),
            used=used,
            nodes=[NodeOut.of(n) for n in page.of(nodes)],
            node_total=len(nodes),
            limit=page.limit,
            offset=page.offset,
            pending=len(engine.pending),
            running=len(engine.running),
        )

    return await daemon.coordinator.read(view)


@router.get(
    "/v1/events",
    summary="Server-sent events: job and node events as they are committed; a client "
    "that reconnects with Last-Event-ID gets what it missed, without a gap or a duplicate",
    response_class=StreamingResponse,
)
async def events(
    daemon: DaemonDep,
    who: PrincipalDep,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[
        int | None, Query(ge=0, le=MAX_NUMBER, description="resume after this event id")
    ] = None,
) -> StreamingResponse:
    resume = after
    if last_event_id is not None:
        if not last_event_id.strip().isdigit() or int(last_event_id) > MAX_NUMBER:
            raise RequestError(
                "invalid", "Last-Event-ID must be an event id (a whole number)", "Last-Event-ID"
            )
        resume = int(last_event_id)
    coordinator = daemon.coordinator
    queue = coordinator.events.subscribe()  # before reading the backlog: nothing falls between
    newest = coordinator.events.last_id  # what the queue starts after

    def shown(row: EventRow) -> bool:
        if row.event.kind.startswith("token."):  # who holds which token: operators only
            return who.operator
        return who.sees_everything or row.event.job_id is None or row.user == who.user

    def frame(row: EventRow) -> str:
        event = row.event
        return f"id: {row.id}\nevent: {event.kind}\ndata: {json.dumps(event.as_dict())}\n\n"

    async def stream() -> AsyncIterator[str]:
        sent = newest if resume is None else resume
        try:
            yield ": connected\n\n"
            while resume is not None:  # the backlog, a page at a time
                page = await coordinator.archive.events_after(sent, BACKLOG_PAGE)
                for row in page:
                    sent = row.id
                    if shown(row):
                        yield frame(row)
                if len(page) < BACKLOG_PAGE:
                    break
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), timeout=KEEPALIVE)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if item is None:
                    return
                if item.id <= sent:
                    continue  # already sent from the backlog
                sent = item.id
                if shown(item):
                    yield frame(item)
        finally:
            coordinator.events.unsubscribe(queue)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )


@router.get(
    "/v1/usage",
    summary="Usage per user or per account over a period (like sreport): jobs that ended in "
    "it, and each resource times the seconds it was held (cpu-seconds ...); users see "
    "their own jobs' only",
)
async def usage(
    daemon: DaemonDep,
    who: PrincipalDep,
    page: PageDep,
    since: Annotated[int, Query(ge=0, le=MAX_NUMBER, description="cluster time, inclusive")],
    until: Annotated[
        int | None, Query(ge=0, le=MAX_NUMBER, description="cluster time (default: now)")
    ] = None,
    by: Annotated[UsageBy, Query(description="total per user or per account")] = "user",
    account: AccountQuery = None,
) -> JSONResponse:
    end = daemon.now() + 1 if until is None else until
    if end <= since:
        raise RequestError("invalid", f"until ({end}) must be after since ({since})", "until")
    await daemon.coordinator.read(lambda _: None)  # after the batch in flight commits
    where = JobFilter(user=who.whose_jobs(None, account), account=account)
    totals = await daemon.coordinator.archive.usage(since, end, by, where)
    rows = [{by: name, **t} for name, t in sorted(totals.items())]
    body = {"since": since, "until": end, "by": by, f"{by}s": page.of(rows),
            f"{by}_total": len(rows), "limit": page.limit, "offset": page.offset}  # fmt: skip
    return JSONResponse(body)


@router.get("/healthz", summary="Liveness: 200 while the writer and the store work")
async def healthz(daemon: DaemonDep) -> JSONResponse:
    failed = daemon.coordinator.failed
    if failed is not None:
        # The store's error can quote SQL and values: logged, not shown.
        correlation = incident("health check: the store has failed", failed)
        body = {"status": "failed", "error": RESTART, "correlation_id": correlation}
        return JSONResponse(body, status_code=503)
    return JSONResponse({"status": "ok", "now": daemon.now()})


@router.get("/metrics", response_class=PlainTextResponse, summary="Prometheus metrics")
async def metrics(daemon: DaemonDep) -> PlainTextResponse:
    engine = daemon.engine
    stats = daemon.coordinator.stats
    lines: list[str] = []

    def metric(name: str, kind: str, help_text: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{labels} {value}" for labels, value in samples)

    capacity = engine.cluster.full_capacity()
    used: dict[str, int] = dict.fromkeys(capacity, 0)
    for node in engine.cluster.nodes.values():
        for name, amount in node.used.items():
            used[name] = used.get(name, 0) + amount
    metric("berth_queue_length", "gauge", "Pending jobs.", [("", len(engine.pending))])
    metric("berth_running_jobs", "gauge", "Running jobs.", [("", len(engine.running))])
    metric(
        "berth_resource_capacity",
        "gauge",
        "Capacity of the nodes not down.",
        [(f'{{resource="{n}"}}', a) for n, a in sorted(capacity.items())],
    )
    metric(
        "berth_resource_used",
        "gauge",
        "Resources held by running jobs.",
        [(f'{{resource="{n}"}}', a) for n, a in sorted(used.items())],
    )
    metric(
        "berth_admissions_total", "counter", "Jobs admitted.", [("", engine.counters["accepted"])]
    )
    metric(
        "berth_rejections_total",
        "counter",
        "Jobs rejected at admission.",
        [("", engine.counters["rejected"])],
    )
    ended = [s for s in JobState if s.value.lower() in engine.counters]
    metric(
        "berth_jobs_ended_total",
        "counter",
        "Jobs that ended, by final state.",
        [(f'{{state="{s.value}"}}', engine.counters[s.value.lower()]) for s in ended],
    )
    metric(
        "berth_jobs_measured_total",
        "counter",
        "Ended jobs whose usage their node measured (agents).",
        [("", engine.counters["measured_jobs"])],
    )
    metric(
        "berth_job_cpu_used_seconds_total",
        "counter",
        "CPU seconds the measured jobs used (their cgroups', or their processes').",
        [("", engine.counters["used_cpu_seconds"])],
    )
    metric(
        "berth_job_cpu_allocated_seconds_total",
        "counter",
        "Cpu-seconds the measured jobs held: used / allocated is the CPU efficiency.",
        [("", engine.counters["measured_cpus_seconds"])],
    )
    metric(
        "berth_scheduling_pass_seconds",
        "gauge",
        "Duration of the last batch's scheduling pass.",
        [("", stats.last_pass_seconds)],
    )
    metric(
        "berth_scheduling_pass_seconds_total",
        "counter",
        "Time spent in scheduling passes.",
        [("", stats.pass_seconds_total)],
    )
    metric(
        "berth_commit_seconds_total",
        "counter",
        "Time spent committing groups of batches.",
        [("", stats.commit_seconds_total)],
    )
    metric(
        "berth_batches_total",
        "counter",
        "Batches applied by the single writer.",
        [("", stats.batches)],
    )
    metric(
        "berth_commits_total",
        "counter",
        "Store transactions (one per group of batches committed together).",
        [("", stats.commits)],
    )
    metric("berth_commands_total", "counter", "Commands applied.", [("", stats.commands)])
    lags = engine.start_lags
    cumulative = list(accumulate(lags.counts))
    buckets: list[tuple[str, float]] = [
        (f'_bucket{{le="{b}"}}', c) for b, c in zip(LAG_BUCKETS, cumulative, strict=False)
    ]
    buckets += [('_bucket{le="+Inf"}', cumulative[-1]), ("_sum", lags.total),
                ("_count", cumulative[-1])]  # fmt: skip
    metric(
        "berth_start_lag_seconds",
        "histogram",
        "Cluster seconds from a job's planned start to its start.",
        buckets,
    )
    metric(
        "berth_start_lag_seconds_max", "gauge", "The largest start lag so far.", [("", lags.worst)]
    )
    if daemon.loop_lag is not None:
        late_turns, worst = daemon.loop_lag()
        metric(
            "berth_event_loop_late_turns_total",
            "counter",
            "Event loop turns that came over 50 ms late (a read waited that long).",
            [("", late_turns)],
        )
        metric(
            "berth_event_loop_lag_seconds_max",
            "gauge",
            "The longest the event loop went without a turn, beyond its 10-ms beat.",
            [("", worst)],
        )
    metric(
        "berth_guarantees_broken_total",
        "counter",
        "Jobs started from a plan later than their guaranteed start.",
        [("", engine.counters["guarantee_broken"])],
    )
    metric(
        "berth_events_total",
        "counter",
        "Events published, by kind.",
        [(f'{{kind="{k}"}}', v) for k, v in sorted(daemon.coordinator.events.by_kind.items())],
    )
    return PlainTextResponse("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")
