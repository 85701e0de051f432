"""Jobs that wait for other jobs, in the engine: Slurm's ``--dependency`` and array limits.

A submission's ``dependency`` (``afterok:12:13,afterany:14,singleton``) is resolved to
needs on jobs the engine knows (an array's id names all its tasks, ``A_T`` one task;
``singleton``: every earlier job of the user with the same name that has not ended) and
refused (422 naming the id) for an unknown job, another user's, or the job itself. An
array's ``%N`` becomes ``throttle`` needs between its tasks. The needs live in the
engine's :class:`~berth.core.waits.Waits`; what they mean for the plan is settled there,
and looked up here: what a job waits for, the earliest start its predecessors'
promises allow, why it waits. A dependent is planned from its predecessors' promised
ends (their guarantees; once running, their time limits), moved up when those come
earlier, planned again when one is lost (a node failure, a hold), and cancelled (or
held, with ``kill_on_invalid_dep`` off) when a need can never be satisfied: the
lifecycle applies those steps (:mod:`berth.service.jobs.settling`). A part of
:class:`~berth.service.engine.Engine`; no I/O.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from berth.core.arrays import throttle
from berth.core.dependencies import Bound, Need, format_needs, parse_dependency, parse_needs
from berth.core.waits import Waits
from berth.service.jobs.book import JobBook
from berth.service.model import JobRecord, JobRequest, JobState, RequestError, moment
from berth.service.partitions.registry import Partitions
from berth.service.planning.planner import Planner


def begin_wait(begin: int) -> str:
    """Why a job waits outside the plan until its begin time, for a person (easy, fcfs)."""
    return f"waits for its begin time ({moment(begin)})"


class Dependencies:
    """Needs between the jobs of ``book``, resolved at submission; whether a job's
    partition plans ahead comes from ``partitions`` and the ``planner``."""

    def __init__(self, book: JobBook, partitions: Partitions, planner: Planner) -> None:
        self.book = book
        self.jobs = book.jobs
        self.partitions = partitions
        self.planner = planner
        #: Who waits for whom (:mod:`berth.core.waits`).
        self.waits = Waits()
        #: (begin time, job) of the jobs held outside the plan until their begin time.
        self._begins: list[tuple[int, int]] = []

    # ------------------------------------------------------------------ submission
    def needs_of(
        self, request: JobRequest, first_id: int, count: int = 1
    ) -> tuple[list[Need], bool]:
        """The needs ``request.dependency`` names for jobs ``first_id`` on (``count`` of
        them: an array's tasks), and whether it asks for ``singleton``; 422 naming the
        job id that cannot be waited for."""
        if request.dependency is None:
            return [], False
        try:
            pairs, singleton = parse_dependency(request.dependency)
        except ValueError as error:
            raise RequestError("invalid", f"dependency: {error}", "dependency") from None
        needs: list[Need] = []
        for kind, reference in pairs:
            ids = self._referenced(reference, request.user, first_id, count)
            needs.extend(Need(kind, job_id) for job_id in ids)
        return list(dict.fromkeys(needs)), singleton

    def _referenced(self, reference: str, user: str, first_id: int, count: int) -> list[int]:
        """The job ids a dependency's reference names (``N``, an array's ``N``, ``A_T``)."""
        array_text, _, task_text = reference.partition("_")
        job_id = int(array_text)
        if first_id <= job_id < first_id + count:
            raise RequestError(
                "invalid",
                f"dependency on job {job_id}: that is this submission, and a job cannot wait "
                "for itself (a cycle)",
                "dependency",
                {"job_id": job_id},
            )
        if task_text:
            ids = [r.id for r in self.book.array_tasks(job_id) if r.array_task_id == int(task_text)]
            named = f"task {task_text} of array {job_id}"
        else:
            record = self.jobs.get(job_id)
            is_array = record is not None and record.array_job_id == job_id
            ids = [r.id for r in self.book.array_tasks(job_id)] if is_array else [job_id]
            named = f"job {job_id}"
        records = [self.jobs[i] for i in ids if i in self.jobs]
        if not records:
            raise RequestError(
                "invalid",
                f"dependency on {named}: no such job (or it ended long ago)",
                "dependency",
                {"job_id": job_id},
            )
        if any(r.user != user for r in records):
            raise RequestError(
                "invalid",
                f"dependency on {named}: it belongs to another user",
                "dependency",
                {"job_id": job_id},
            )
        return [r.id for r in records]

    def singleton_needs(self, record: JobRecord) -> list[Need]:
        """``singleton``: after every earlier job of the user with the same name that
        has not ended."""
        return [
            Need("afterany", other.id)
            for other in self.jobs.values()
            if other.id < record.id
            and not other.final
            and other.user == record.user
            and other.name == record.name
        ]

    def array_needs(
        self,
        request: JobRequest,
        tasks: Sequence[int],
        limit: int | None,
        first_id: int | None = None,
    ) -> list[list[Need]]:
        """Each task's needs: the array's dependency, and its lane under ``%N``
        (``singleton`` on an array: a lane of one, after the earlier jobs of its name);
        the tasks are jobs ``first_id`` on (by default the next job numbers)."""
        if first_id is None:
            first_id = self.book.next_id
        needs, singleton = self.needs_of(request, first_id, len(tasks))
        ids = list(range(first_id, first_id + len(tasks)))
        if singleton:
            probe = JobRecord.from_request(first_id, request, 0)
            needs = [*needs, *self.singleton_needs(probe)]
            limit = 1 if limit is None else min(limit, 1)
        lanes = throttle(ids, limit)
        return [[*needs, lanes[i]] if i in lanes else list(needs) for i in ids]

    def wait_for(self, record: JobRecord, needs: Sequence[Need]) -> None:
        """A new job waits for ``needs`` (settled at the next pass)."""
        if not needs:
            return
        self.waits.add(record.id, needs, self.outcome)
        record.needs = format_needs(needs)

    # ------------------------------------------------------------------ admission
    def held_back(self, record: JobRecord) -> Bound | None:
        """Whether a queued job must wait outside the plan (what holds it), else set the
        earliest start its predecessors' promises allow."""
        bound = self.waits.admit(record.id, self.promised, self.plans_ahead(record.id))
        record.not_before = None if bound is not None else self.waits.not_before(record.id)
        return bound

    def held_to_begin(self, record: JobRecord, now: int) -> Bound | None:
        """A job whose begin time is still ahead, in a partition that does not plan every
        job ahead (easy, fcfs: nothing in their plan would keep it from starting
        earlier), waits outside the plan until then (gated, as a job whose predecessors
        have no promise yet), and joins the queue at that time; else ``None``."""
        begin = record.begin_time
        if begin is None or begin <= now or self.plans_ahead(record.id):
            return None
        bound = self.waits.gated[record.id] = Bound(begin)
        heapq.heappush(self._begins, (begin, record.id))
        return bound

    def next_begin(self) -> int | None:
        """The soonest begin time of a job held until it (the engine wakes up then)."""
        begins = self._begins
        while begins and not self._held_to(*begins[0]):
            heapq.heappop(begins)  # it left the queue, or was planned, since
        return begins[0][0] if begins else None

    def begun(self, now: int) -> list[int]:
        """The jobs held until a begin time that ``now`` has reached, in that order."""
        due = []
        while (soonest := self.next_begin()) is not None and soonest <= now:
            due.append(heapq.heappop(self._begins)[1])
        return due

    def plannable_begins(self, partition: str | None) -> list[int]:
        """The jobs of ``partition`` held until their begin time that its policy can now
        plan ahead (a switch from easy or fcfs): they are planned at once."""
        return [
            job_id
            for begin, job_id in sorted(self._begins)
            if self._held_to(begin, job_id)
            and self.jobs[job_id].partition == partition
            and self.plans_ahead(job_id)
        ]

    def _held_to(self, begin: int, job_id: int) -> bool:
        bound = self.waits.gated.get(job_id)
        return bound is not None and bound.by is None and bound.time == begin

    def waiting_reason(self, bound: Bound) -> str:
        """Why a job waits outside the plan, for a person."""
        need = bound.by
        if need is None:
            assert bound.time is not None
            return begin_wait(bound.time)
        other = self.jobs.get(need.job_id)
        kind = "its array's limit" if need.kind == "throttle" else need.kind
        if other is None:
            return f"waits for job {need.job_id} ({kind})"
        if other.state is JobState.HELD:
            why = "which is held"
        elif not self.plans_ahead(record_id=other.id) and other.state is JobState.PENDING:
            why = "which has no guaranteed start yet"
        else:
            why = f"which is {other.state.value.lower()}"
        return f"waits for job {need.job_id} ({kind}), {why}"

    # ------------------------------------------------------------------ what jobs did
    def outcome(self, job_id: int) -> tuple[bool, bool, bool]:
        record = self.jobs.get(job_id)
        if record is None:  # let go from memory: it ended long ago, and was settled then
            return True, True, True
        ended = record.final and not to_requeue(record)
        return record.start_time is not None, ended, record.state is JobState.COMPLETED

    def promised(self, need: Need) -> int | None:
        """The predecessor's promised start (``after``) or end: its guarantee while it
        waits, its time limit once it runs (none in a gang partition: it is suspended
        at times), its real end once it ended."""
        record = self.jobs.get(need.job_id)
        if record is None or to_requeue(record):
            return None  # (queued again after a node failure: its new guarantee will tell)
        if need.kind == "after":
            return record.start_time if record.start_time is not None else record.guaranteed_start
        if record.final:
            return record.end_time
        if record.state is JobState.RUNNING:
            return None if self.partitions.gang_of(record) is not None else record.limit_at
        if record.state is JobState.PENDING:
            if record.guaranteed_end is not None:
                return record.guaranteed_end
            if record.guaranteed_start is not None:
                return record.guaranteed_start + record.time_limit
        return None

    def plans_ahead(self, record_id: int) -> bool:
        record = self.jobs.get(record_id)
        if record is None or self.partitions.gang_of(record) is not None:
            return False
        lane = self.planner.lanes.get(record.partition)
        return lane is not None and lane.policy.reserves_every_job

    # ------------------------------------------------------------------ restart
    def rebuild(self) -> None:
        """After a restart: who waits for whom, from each waiting job's needs."""
        for record in sorted(self.jobs.values(), key=lambda r: r.id):
            if not record.final and record.needs:
                self.waits.add(record.id, parse_needs(record.needs), self.outcome)


def to_requeue(record: JobRecord) -> bool:
    """Lost with a node and about to be queued again (it has not ended for good)."""
    return record.state is JobState.NODE_FAIL and record.requeue


def dependency_answer(deps: Dependencies, record: JobRecord) -> dict[str, object]:
    """What a waiting job still waits for, for ``GET /v1/jobs/{id}/start``: each need
    with its predecessor's state and promised start or end, and the predecessor whose
    promise sets the job's earliest start (``waits_for_job``)."""
    needs = []
    for need in deps.waits.graph.needs(record.id):
        other = deps.jobs.get(need.job_id)
        needs.append(
            {
                "job_id": need.job_id,
                "kind": need.kind,
                "job_state": None if other is None else other.state.value,
                "promised": deps.promised(need),
            }
        )
    bound = deps.waits.graph.bound(record.id, deps.promised)
    return {
        "dependencies": needs,
        "waits_for_job": None if bound.by is None else bound.by.job_id,
        "not_before": bound.time if bound.known else None,
    }
