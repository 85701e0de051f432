"""A PSI/J executor for Berth: ``JobExecutor.get_instance('berth', url='http://head:8080')``.

PSI/J (the ExaWorks portable job API) finds it through the ``psij-descriptors``
namespace package (``clients/psij-descriptors/berth_descriptor.py``). A ``JobSpec``
becomes a Berth batch job:

* the executable and its arguments run through the PSI/J launcher the spec names
  (``single``, ``multiple``, ``mpirun``): PSI/J's own launcher scripts, deployed in the
  executor's ``work_directory`` (as PSI/J's batch executors do: a directory the nodes
  share with the submitting host), which apply ``stdin_path``, ``stdout_path``,
  ``stderr_path``, ``pre_launch`` and ``post_launch``;
* ``environment`` is exported by the job's script; ``directory`` is the job's working
  directory (default: the submitting process's, as ``berth submit`` and sbatch do);
* ``ResourceSpecV1``: ``process_count`` slots of ``cpu_cores_per_process`` cpus (and
  ``gpu_cores_per_process`` gpus, ``memory`` shared out per slot in whole GiB), on
  exactly ``node_count`` nodes if given, whole nodes if ``exclusive_node_use``;
* ``JobAttributes``: ``duration`` is the time limit, ``queue_name`` the partition,
  ``account`` the account; custom attributes ``berth.deadline``, ``berth.priority``,
  ``berth.dependency`` and ``berth.requeue`` are passed as Berth's own.

States come from Berth's event stream (``GET /v1/events``, resumed with
``Last-Event-ID`` after a dropped connection), not from polling: ``job.accepted`` is
QUEUED, ``job.started`` ACTIVE, ``job.completed`` COMPLETED, ``job.cancelled`` CANCELED,
and every other end FAILED, with the exit code and Berth's reason. A job Berth refuses
raises ``SubmitException`` with the refusal. The token comes from the executor's config
(``BerthExecutorConfig(token=...)``) or ``BERTH_TOKEN``, else from the login node's
``berth authd`` (:mod:`berth_client.login`); the URL from ``url`` or
``BERTH_URL``. Install with ``pip install 'berth[psij]'``.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import shlex
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from psij import (
    InvalidJobException,
    Job,
    JobExecutor,
    JobExecutorConfig,
    JobState,
    JobStatus,
    ResourceSpecV1,
    SubmitException,
)
from psij.launchers.script_based_launcher import ScriptBasedLauncher

from berth_client.client import BerthClient
from berth_client.errors import BerthError
from berth_client.login import login_token

logger = logging.getLogger(__name__)

#: The PSI/J state each Berth event moves a job to.
STATES = {
    "job.accepted": JobState.QUEUED,
    "job.started": JobState.ACTIVE,
    "job.completed": JobState.COMPLETED,
    "job.cancelled": JobState.CANCELED,
    "job.failed": JobState.FAILED,
    "job.killed": JobState.FAILED,
    "job.out_of_memory": JobState.FAILED,
    "job.node_fail": JobState.FAILED,
    "job.rejected": JobState.FAILED,
}
#: Berth's final job states as PSI/J's.
FINAL = {
    "COMPLETED": JobState.COMPLETED,
    "CANCELLED": JobState.CANCELED,
    "FAILED": JobState.FAILED,
    "TIMEOUT": JobState.FAILED,
    "OUT_OF_MEMORY": JobState.FAILED,
    "NODE_FAIL": JobState.FAILED,
    "REJECTED": JobState.FAILED,
}
#: Jobs asked for per page by :meth:`BerthJobExecutor.list` (the API's most).
PAGE = 1000
#: Redirects from standbys followed at once before the stream waits and tries again.
MAX_REDIRECTS = 3
#: Custom attributes passed on as Berth's own fields.
CUSTOM = ("deadline", "priority", "dependency", "requeue")


class BerthExecutorConfig(JobExecutorConfig):
    """PSI/J's executor configuration, and the token for Berth's API."""

    def __init__(self, token: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.token = token


class BerthJobExecutor(JobExecutor):
    """Submits PSI/J jobs to a Berth daemon and follows them on its event stream."""

    def __init__(self, url: str | None = None, config: JobExecutorConfig | None = None) -> None:
        self.berth_url = url or os.environ.get("BERTH_URL", "http://127.0.0.1:8080")
        super().__init__(url=self.berth_url, config=config or BerthExecutorConfig())
        self.token = getattr(self.config, "token", None) or os.environ.get("BERTH_TOKEN")
        #: Native id -> the PSI/J jobs that follow it (attach may add more than one).
        self._jobs: dict[str, list[Job]] = {}
        self._lock = threading.Lock()
        self._connected = threading.Event()
        self._watcher: threading.Thread | None = None
        self._last_event: int | None = None

    # ------------------------------------------------------------------ the PSI/J API
    def submit(self, job: Job) -> None:
        """See :meth:`psij.JobExecutor.submit`."""
        spec = self._check_job(job)
        if not spec.executable:
            raise InvalidJobException("the job has no executable")
        body = self.job_body(job)
        self._watch()
        try:
            with self._client() as client:
                answer = client.submit(**body)
        except BerthError as error:
            raise SubmitException(f"Berth refused the job: {error}") from None
        except OSError as error:
            raise SubmitException(f"cannot reach Berth at {self.berth_url}: {error}") from None
        if not answer["accepted"]:
            raise SubmitException(f"Berth rejected the job: {answer['reason']}")
        self._follow(job, str(answer["job"]["job_id"]))

    def cancel(self, job: Job) -> None:
        """See :meth:`psij.JobExecutor.cancel`; a job that already ended is left as is."""
        if job.native_id is None:
            raise SubmitException("the job was not submitted")
        with self._client() as client:
            try:
                client.cancel(int(job.native_id))
            except BerthError as error:
                if error.code != "conflict":
                    raise

    def list(self) -> list[str]:
        """The ids of this user's jobs that have not ended (waiting, held or running)."""
        ids: list[str] = []
        with self._client() as client:
            for state in ("PENDING", "HELD", "RUNNING"):
                offset = 0
                while True:
                    page = client.jobs(state=state, limit=PAGE, offset=offset)["jobs"]
                    ids.extend(str(j["job_id"]) for j in page)
                    offset += len(page)
                    if len(page) < PAGE:
                        break
        return ids

    def attach(self, job: Job, native_id: str) -> None:
        """Follow the Berth job ``native_id`` as ``job`` (which must be NEW)."""
        if job.status.state != JobState.NEW:
            raise InvalidJobException("only a NEW job can be attached")
        job.executor = self
        self._watch()
        self._follow(job, str(native_id))

    # ------------------------------------------------------------------ the mapping
    def job_body(self, job: Job) -> dict[str, Any]:
        """The ``BerthClient.submit`` arguments for ``job``."""
        spec = job.spec
        assert spec is not None
        attributes = spec.attributes
        launcher = self._get_launcher(spec.launcher or "single")
        if not isinstance(launcher, ScriptBasedLauncher):
            raise InvalidJobException(f"launcher {spec.launcher!r} is not supported on Berth")
        command = launcher.get_launch_command(job)
        exports = [
            f"export {name}={shlex.quote(str(value))}"
            for name, value in (spec.environment or {}).items()
        ]
        script = "\n".join(["#!/bin/bash", *exports, "exec " + shlex.join(command), ""])
        work = Path(self.config.work_directory)
        directory = Path(spec.directory) if spec.directory else Path.cwd()
        body: dict[str, Any] = {
            "resources": None,
            "time_limit": max(1, math.ceil(attributes.duration.total_seconds())),
            "name": (spec.name or f"psij-{job.id}")[:200],
            "script": script,
            "argv": [],
            "chdir": str(directory.resolve()),
            "output": str(work / "berth-%j.out"),
            "error": str(work / "berth-%j.err"),
            "partition": attributes.queue_name,
            "account": attributes.account,
            **_slots(spec.resources),
        }
        custom = attributes.custom_attributes or {}
        for name in CUSTOM:
            if f"berth.{name}" in custom:
                body[name] = custom[f"berth.{name}"]
        return body

    # ------------------------------------------------------------------ following jobs
    def _client(self) -> BerthClient:
        return BerthClient(self.berth_url, self.token)

    def _follow(self, job: Job, native_id: str) -> None:
        """Follow ``job`` as Berth's ``native_id``; what happened before is read once
        (events that came before this line found no job to move)."""
        job._native_id = native_id
        with self._lock:
            self._jobs.setdefault(native_id, []).append(job)
        try:
            with self._client() as client:
                record = client.job(int(native_id))
        except BerthError as error:
            raise InvalidJobException(f"no Berth job {native_id}: {error}") from None
        self._catch_up(job, record)

    def _catch_up(self, job: Job, record: dict[str, Any]) -> None:
        state = record["job_state"]
        if state in FINAL:
            self._finish(job, record)
        elif state == "RUNNING":
            self._set_job_status(job, JobStatus(JobState.ACTIVE, time=time.time()))
        else:
            self._set_job_status(job, JobStatus(JobState.QUEUED, time=time.time()))

    def _finish(self, job: Job, record: dict[str, Any]) -> None:
        """The job's final status, with its exit code and Berth's reason."""
        with self._lock:
            following = self._jobs.get(str(record["job_id"]), [])
            if job in following:
                following.remove(job)
            if not following:
                self._jobs.pop(str(record["job_id"]), None)
        state = FINAL[record["job_state"]]
        exit_code = record.get("exit_code")
        if state is JobState.FAILED and exit_code in (None, 0):
            signal = record.get("exit_signal")
            exit_code = 128 + signal if signal else None
        status = JobStatus(
            state,
            time=time.time(),
            message=None if state is JobState.COMPLETED else record.get("state_reason"),
            exit_code=exit_code if state is not JobState.CANCELED else None,
            metadata={"berth_state": record["job_state"]},
        )
        self._set_job_status(job, status)

    def _on_event(self, kind: str, event: dict[str, Any]) -> None:
        job_id = event.get("job_id")
        with self._lock:
            jobs = list(self._jobs.get(str(job_id), ()))
        state = STATES.get(kind)
        if not jobs or state is None:
            return
        if state.final:
            with self._client() as client:
                record = client.job(int(str(job_id)))
            for job in jobs:
                self._finish(job, record)
        else:
            for job in jobs:
                self._set_job_status(job, JobStatus(state, time=time.time()))

    def _watch(self) -> None:
        """Start following the event stream, once; wait until it is connected (a job
        submitted after that misses none of its events)."""
        with self._lock:
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._stream, name="berth-psij-events", daemon=True
                )
                self._watcher.start()
        self._connected.wait(timeout=30)

    def _stream(self) -> None:
        """Read ``/v1/events`` while jobs are followed, reconnecting with the last
        event's id (Berth then sends what was missed, without a gap); with no job left
        to follow, a dropped stream ends the thread (the next submit starts another).
        With several daemons (``url='http://head1:8080,http://head2:8080'``, high
        availability) a standby's redirect is followed to the leader, and a daemon that
        does not answer is left for the next one in the list."""
        daemons = [u.strip() for u in self.berth_url.split(",") if u.strip()]
        at, target, redirects = 0, daemons[0], 0
        while True:
            parts = urlsplit(target)
            kind = (
                http.client.HTTPSConnection
                if parts.scheme == "https"
                else http.client.HTTPConnection
            )
            connection = kind(parts.hostname or "127.0.0.1", parts.port, timeout=120)
            try:
                headers = {"Accept": "text/event-stream"}
                token = self.token or login_token()  # none set: the login node's authd
                if token:
                    headers["Authorization"] = f"Bearer {token}"
                if self._last_event is not None:
                    headers["Last-Event-ID"] = str(self._last_event)
                connection.request("GET", parts.path.rstrip("/") + "/v1/events", headers=headers)
                answer = connection.getresponse()
                location = answer.getheader("Location")
                if answer.status == 200:
                    redirects = 0
                    self._connected.set()
                    self._read(answer)
                elif answer.status in (307, 308) and location:
                    target = location.split("/v1/events", 1)[0]  # the leader
                    redirects += 1
                    if redirects <= MAX_REDIRECTS:
                        continue  # at once (a chain of standbys waits in between)
                else:
                    logger.warning("Berth's event stream at %s answered %s", target, answer.status)
                    at, target = _next_daemon(daemons, at)
            except (OSError, http.client.HTTPException) as error:
                logger.info("Berth's event stream at %s dropped (%s)", target, error)
                at, target = _next_daemon(daemons, at)
            finally:
                connection.close()
            with self._lock:
                # Ended once no job is left to follow, after it had connected (before,
                # the submission waiting for it has not added its job yet).
                if not self._jobs and self._connected.is_set():
                    self._watcher = None
                    self._connected.clear()
                    return
            time.sleep(0.5)

    def _read(self, answer: http.client.HTTPResponse) -> None:
        """Apply each event of an open stream, until it ends."""
        kind = data = None
        for raw in answer:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith(":"):
                continue
            if not line:
                if kind is not None and data is not None:
                    self._dispatch(kind, data)
                kind = data = None
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "id" and value.isdigit():
                self._last_event = int(value)
            elif field == "event":
                kind = value
            elif field == "data":
                data = value

    def _dispatch(self, kind: str, data: str) -> None:
        try:
            self._on_event(kind, json.loads(data))
        except Exception:  # a bad event must not stop the stream
            logger.exception("cannot apply Berth event %s", kind)


def _slots(resources: object) -> dict[str, Any]:
    """``slots`` and ``nodes`` for a PSI/J resource spec (one cpu without one)."""
    if resources is None:
        return {"slots": {"count": 1, "per_slot": {"cpus": 1}}}
    if not isinstance(resources, ResourceSpecV1):
        version = getattr(resources, "version", "?")
        raise InvalidJobException(f"resource spec version {version} is not supported")
    count = resources.computed_process_count
    per_slot = {"cpus": resources.cpu_cores_per_process or 1}
    if resources.gpu_cores_per_process:
        per_slot["gpus"] = resources.gpu_cores_per_process
    if resources.memory:
        per_slot["mem_gb"] = max(1, math.ceil(resources.memory / count / 2**30))
    out: dict[str, Any] = {"slots": {"count": count, "per_slot": per_slot}}
    if resources.node_count is not None or resources.exclusive_node_use:
        out["nodes"] = {"count": resources.node_count, "exclusive": resources.exclusive_node_use}
    return out


def _next_daemon(daemons: list[str], at: int) -> tuple[int, str]:
    """The daemon after ``at`` in the list (round and round), and its URL."""
    at = (at + 1) % len(daemons)
    return at, daemons[at]
