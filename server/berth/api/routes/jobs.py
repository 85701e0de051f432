"""Job endpoints: submit, list, show, cancel, "when will it start", what-if."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from typing import Annotated, TypeVar

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import PlainTextResponse

from berth.api import lean, what_if_turns
from berth.api.deps import (
    MAX_NUMBER,
    Daemon,
    DaemonDep,
    JobId,
    PrincipalDep,
    daemon_of,
    person,
)
from berth.api.principals import Principal
from berth.api.schemas import (
    AccountQuery,
    HoldIn,
    JobEvents,
    JobHistory,
    JobList,
    JobOut,
    ListedJob,
    PartitionQuery,
    StartOut,
    StatesQuery,
    SubmitOut,
    WhatIfOut,
)
from berth.api.submit_schemas import JobSubmit
from berth.service.commands import (
    CancelArray,
    CancelJob,
    CancelMatching,
    HoldJob,
    ReleaseJob,
    SubmitArray,
    SubmitJob,
)
from berth.service.engine import Engine
from berth.service.handlers.arrays import parse_array
from berth.service.model import JobRecord, JobState, RequestError
from berth.service.partitions.specs import DEFAULT_PARTITION
from berth.service.planning.forecasts import FORECAST_SLICE
from berth.service.ports import JobFilter
from berth.service.queries import answers

T = TypeVar("T")

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


def visible(engine: Engine, who: Principal, job_id: int) -> JobRecord:
    """The job if the caller may see it; 404 otherwise (others' jobs are not revealed)."""
    record = engine.jobs.get(job_id)
    if record is None or not who.may_see(record.user, record.account):
        raise RequestError("not_found", f"no job {job_id}", "job_id")
    return record


async def submit(
    body: JobSubmit,
    daemon: DaemonDep,
    who: PrincipalDep,
    response: Response,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> SubmitOut:
    daemon.submits.take(who)
    request = body.request(who.user, idempotency_key)
    if body.array is not None:
        tasks, limit = parse_array(body.array)
        answer, created = await daemon.coordinator.call(
            SubmitArray(request, tasks, limit),
            lambda made: (SubmitOut.of_array(made[0]), made[1]),
        )
    else:
        answer, created = await daemon.coordinator.call(
            SubmitJob(request), lambda made: (SubmitOut.of(made[0]), made[1])
        )
    if not created:
        response.status_code = 200
    return answer


async def _handle_submit(request: Request) -> Response:
    """:func:`submit` with its arguments read by hand (see :mod:`berth.api.lean`)."""
    who = person(request)
    body = await lean.json_body(request, JobSubmit)
    key = lean.header(request, "idempotency-key", max_length=200)
    status = Response(status_code=201)
    answer = await submit(body, daemon_of(request), who, status, key)
    return Response(answer.model_dump_json(), status.status_code, media_type="application/json")


router.add_api_route(
    "",
    submit,
    methods=["POST"],
    status_code=201,
    response_model=SubmitOut,
    summary="Submit a job; the answer carries the admission decision and its guarantee",
    responses={200: {"description": "a retry with a known Idempotency-Key: the same job"}},
    route_class_override=lean.lean_route(_handle_submit),
)

#: Requests answered past the router (:class:`berth.api.lean.LeanPaths`).
LEAN_PATHS = {("POST", router.prefix): _handle_submit}


@router.post(
    "/what-if",
    response_model=WhatIfOut,
    summary="The decision a job would get, without submitting it",
)
async def what_if(body: JobSubmit, daemon: DaemonDep, who: PrincipalDep) -> WhatIfOut:
    request = body.request(who.user, None)
    now = daemon.now()
    answer = await daemon.coordinator.read(lambda e: answers.begin_what_if(e, request, now))
    if isinstance(answer, answers.WhatIfForecast):
        # Its forecast (EASY, FCFS) in slices, as the start query's: requests and the
        # writer go on between them (it runs on a copy, independent of the live state),
        # for a bounded time, a few what-ifs at a time.
        await what_if_turns.drive(
            answer, daemon.what_if_turns, answers.WHAT_IF_SECONDS, FORECAST_SLICE
        )
        answer = answer.answer
    return WhatIfOut.model_validate(answer)


@router.get("", response_model=JobList, summary="List jobs (users see their own)")
async def list_jobs(
    daemon: DaemonDep,
    who: PrincipalDep,
    state: StatesQuery = None,
    user: Annotated[str | None, Query(max_length=100)] = None,
    account: AccountQuery = None,
    partition: PartitionQuery = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_NUMBER)] = 0,
) -> JobList:
    user = who.whose_jobs(user, account)

    states = set(state or ())
    now = daemon.now()
    lane = _lane(partition)

    def page(engine: Engine) -> JobList:
        _check_partition(engine, partition)
        jobs = [
            record
            for record in _candidates(engine, states)
            if (not states or record.state in states)
            and (user is None or record.user == user)
            and (account is None or record.account == account)
            and (partition is None or record.partition == lane)
        ]
        shown = jobs[offset : offset + limit]
        waiting = [r.id for r in shown if r.state is JobState.PENDING]
        standing = engine.forecasts.queue_standing(waiting, now) if waiting else {}
        listed = [ListedJob.of(r) for r in shown]
        for job in listed:
            job.predicted_start, job.queued_before = standing.get(job.job_id, (None, None))
        return JobList(jobs=listed, total=len(jobs), limit=limit, offset=offset, now=now)

    return await daemon.coordinator.read(page)


def _lane(partition: str | None) -> str | None:
    """How jobs record ``partition``: the default one as ``None``."""
    return None if partition == DEFAULT_PARTITION else partition


def _filter(
    state: list[JobState] | None, user: str | None, account: str | None, partition: str | None
) -> JobFilter:
    """A route's filters as the store and the engine test them (partitions as jobs
    record them)."""
    return JobFilter(
        None if not state else frozenset(s.value for s in state),
        user,
        account,
        None if partition is None else frozenset({_lane(partition)}),
    )


def _check_partition(engine: Engine, partition: str | None) -> None:
    """404 naming the partitions there are, for one that is not."""
    if partition is None or partition == DEFAULT_PARTITION:
        return
    if partition not in engine.partitions.gang and partition not in engine.partitions.backfill:
        raise engine.partitions.missing_partition(partition, field="partition")


def _candidates(engine: Engine, states: set[JobState]) -> Iterable[JobRecord]:
    """The records a listing in ``states`` need look at: the waiting and running jobs
    the engine keeps apart when only those are asked for (a deep queue's listing then
    skips every finished job), else all it holds, in order of id."""
    if states and states <= {JobState.PENDING, JobState.RUNNING}:
        return chain(
            engine.pending.values() if JobState.PENDING in states else (),
            engine.running.values() if JobState.RUNNING in states else (),
        )
    return engine.jobs.values()


@router.get(
    "/history",
    response_model=JobHistory,
    summary="Stored jobs, newest first, any state (finished ones included): a page below "
    "``before``; the answer's ``next_before`` asks for the next page",
)
async def history(
    daemon: DaemonDep,
    who: PrincipalDep,
    state: StatesQuery = None,
    user: Annotated[str | None, Query(max_length=100)] = None,
    account: AccountQuery = None,
    partition: PartitionQuery = None,
    before: Annotated[
        int | None, Query(ge=1, le=MAX_NUMBER, description="jobs numbered below this")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JobHistory:
    user = who.whose_jobs(user, account)
    await daemon.coordinator.read(lambda _: None)  # after the batch in flight commits
    where = _filter(state, user, account, partition)
    jobs = await daemon.coordinator.archive.history(where, before, limit)
    return JobHistory(
        jobs=[JobOut.of(r) for r in jobs],
        next_before=jobs[-1].id if len(jobs) == limit else None,
    )


@router.get("/{job_id}", response_model=JobOut, summary="One job")
async def show(job_id: JobId, daemon: DaemonDep, who: PrincipalDep) -> JobOut:
    return await _looked_up(job_id, daemon, who, JobOut.of)


async def _looked_up(
    job_id: int, daemon: Daemon, who: Principal, view: Callable[[JobRecord], T]
) -> T:
    """``view`` of the job, taken from the engine (under the writer) or, for a job that
    finished long ago, from the store; 404 unless the caller may see it."""

    def held_now(engine: Engine) -> tuple[str, str | None, T] | None:
        record = engine.jobs.get(job_id)
        return None if record is None else (record.user, record.account, view(record))

    held = await daemon.coordinator.read(held_now)
    if held is None:  # finished long ago: from the store
        record = await daemon.coordinator.archive.stored_job(job_id)
        held = None if record is None else (record.user, record.account, view(record))
    if held is None or not who.may_see(held[0], held[1]):
        raise RequestError("not_found", f"no job {job_id}", "job_id")
    return held[2]


@router.get(
    "/{job_id}/script",
    response_class=PlainTextResponse,
    summary="A job's batch script, as submitted (404 for a job that runs a command)",
)
async def script(job_id: JobId, daemon: DaemonDep, who: PrincipalDep) -> PlainTextResponse:
    text = await _looked_up(job_id, daemon, who, lambda record: record.script)
    if text is None:
        raise RequestError("not_found", f"job {job_id} runs a command, not a script", "job_id")
    return PlainTextResponse(text, media_type="text/x-shellscript")


@router.get(
    "/{job_id}/events",
    response_model=JobEvents,
    summary="A job's history: its stored events, oldest first, a page after ``after``",
)
async def job_events(
    job_id: JobId,
    daemon: DaemonDep,
    who: PrincipalDep,
    after: Annotated[int, Query(ge=0, le=MAX_NUMBER, description="events numbered above this")] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> JobEvents:
    await show(job_id, daemon, who)  # 404 unless the caller may see the job
    rows = await daemon.coordinator.archive.events_after(after, limit, job_id)
    return JobEvents(
        job_id=job_id,
        events=[{"id": row.id, **row.event.as_dict()} for row in rows],
        next_after=rows[-1].id if len(rows) == limit else None,
    )


@router.delete(
    "",
    response_model=list[JobOut],
    summary="Cancel every job not ended that the filters select, like scancel -u / -t / "
    "-n / -A / -p (at least one filter; users: only their own jobs)",
)
async def cancel_matching(
    daemon: DaemonDep,
    who: PrincipalDep,
    state: StatesQuery = None,
    user: Annotated[str | None, Query(min_length=1, max_length=100)] = None,
    account: AccountQuery = None,
    name: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    partition: PartitionQuery = None,
) -> list[JobOut]:
    if not (state or user or account or name or partition):
        raise RequestError(
            "invalid",
            "cancelling by filter takes at least one of state, user, account, name and "
            "partition (a job's own: DELETE /v1/jobs/{job_id})",
            "user",
        )
    await daemon.coordinator.read(lambda engine: _check_partition(engine, partition))
    given = {"state": ",".join(s.value for s in state or ()), "user": user,
             "account": account, "name": name, "partition": partition}  # fmt: skip
    selected = " ".join(f"{key}={value}" for key, value in given.items() if value)
    user = who.whose_jobs(user, account)
    reason = f"cancelled by {who.user} (every job of {selected})"
    command = CancelMatching(_filter(state, user, account, partition), name, reason)
    return await daemon.coordinator.call(command, lambda jobs: [JobOut.of(j) for j in jobs],
                                         by=who.user)  # fmt: skip


@router.delete("/{job_id}", response_model=JobOut, summary="Cancel a job (a running job is killed)")
async def cancel(job_id: JobId, daemon: DaemonDep, who: PrincipalDep) -> JobOut:
    await daemon.coordinator.read(lambda e: visible(e, who, job_id))
    reason = f"cancelled by {who.user}"
    return await daemon.coordinator.call(CancelJob(job_id, reason), JobOut.of, by=who.user)


@router.delete(
    "/{array_id}/array",
    response_model=list[JobOut],
    summary="Cancel every task of a job array that has not ended (the array's id is its "
    "first task's job id)",
)
async def cancel_array(array_id: JobId, daemon: DaemonDep, who: PrincipalDep) -> list[JobOut]:
    await daemon.coordinator.read(lambda e: visible(e, who, array_id))
    reason = f"cancelled by {who.user} (the whole array {array_id})"
    return await daemon.coordinator.call(
        CancelArray(array_id, reason), lambda tasks: [JobOut.of(t) for t in tasks]
    )


@router.post(
    "/{job_id}/hold",
    response_model=JobOut,
    summary="Hold a pending job, like scontrol hold: it gives up its guarantee until released "
    "(by its user: a hold they may release; by an operator or coordinator: one only they may)",
)
async def hold(
    job_id: JobId, daemon: DaemonDep, who: PrincipalDep, body: HoldIn | None = None
) -> JobOut:
    own = await daemon.coordinator.read(lambda e: visible(e, who, job_id).user == who.user)
    reason = (body.reason if body is not None else None) or f"held by {who.user}"
    command = HoldJob(job_id, reason, "user" if own else "admin")
    return await daemon.coordinator.call(command, JobOut.of, by=who.user)


@router.post(
    "/{job_id}/release",
    response_model=JobOut,
    summary="Release a held job, like scontrol release: admitted again, at the back of the "
    "queue (its user releases only their own hold: 403 for an operator's)",
)
async def release(job_id: JobId, daemon: DaemonDep, who: PrincipalDep) -> JobOut:
    def administers(engine: Engine) -> bool:
        record = visible(engine, who, job_id)
        return who.operator or who.coordinates(record.account)

    admin = await daemon.coordinator.read(administers)
    return await daemon.coordinator.call(ReleaseJob(job_id, admin), JobOut.of, by=who.user)


@router.get(
    "/{job_id}/start",
    response_model=StartOut,
    summary="When the job will start: its guarantee, a prediction, and what blocks it",
)
async def start(job_id: JobId, daemon: DaemonDep, who: PrincipalDep) -> StartOut:
    now = daemon.now()

    def answer(engine: Engine) -> StartOut | None:
        if job_id not in engine.jobs:
            return None
        visible(engine, who, job_id)
        return StartOut.model_validate(answers.start_info(engine, job_id, now))

    held = await daemon.coordinator.read(answer)
    if held is not None:
        return held
    record = await daemon.coordinator.archive.stored_job(job_id)  # finished long ago
    if record is None or not who.may_see(record.user, record.account):
        raise RequestError("not_found", f"no job {job_id}", "job_id")
    return StartOut(
        job_id=job_id,
        job_state=record.state.value,
        guaranteed_start=record.guaranteed_start,
        guaranteed_end=record.guaranteed_end,
        predicted_start=record.start_time,
        start_time=record.start_time,
        based_on=f"the job is {record.state}",
        computed_at=now,
        blocked_by=None,
        gang=None,
    )
