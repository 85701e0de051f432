"""Dask workers as Berth jobs: ``BerthCluster``, a dask-jobqueue cluster.

``BerthCluster(url=..., cores=4, memory="16GiB", walltime="01:00:00")`` starts a Dask
scheduler here; ``cluster.scale(jobs=4)`` submits four Berth jobs, each a batch script
that runs one ``dask worker`` pointed at it, and ``cluster.adapt()`` lets the scheduler
ask for more or fewer. Closing the cluster cancels every job it submitted. A subclass of
dask-jobqueue's ``JobQueueCluster``, because it already does what a cluster of batch
jobs needs (the worker script, scaling by jobs, adaptivity, the jobs' life cycle); only
how a job is submitted and cancelled is Berth's, and that goes through Berth's API
(``BerthClient``) rather than a command line, so a refusal is an exception that names
the field and the limit. Install with ``pip install 'berth[dask]'``.

Options besides dask-jobqueue's own (``cores``, ``memory``, ``processes``, ``walltime``,
``python``, ``job_script_prologue``, ``worker_extra_args``, ...): ``url`` and ``token``
of the daemon (default ``BERTH_URL``, ``BERTH_TOKEN`` or the login node's authd),
``partition``, ``account`` and ``chdir`` (the workers' working directory on the
nodes). Each worker job asks for ``cpus=cores`` and ``mem_gb`` = ``memory`` rounded
up to whole GiB.
"""

from __future__ import annotations

import asyncio
import math
import os
from typing import Any

import dask
from dask_jobqueue.core import Job, JobQueueCluster
from distributed.deploy.spec import ProcessInterface

from berth_client.batch import parse_time
from berth_client.client import BerthClient

#: A worker job in one of these states may still bring a worker up.
LIVE = frozenset({"PENDING", "HELD", "RUNNING"})

#: dask-jobqueue's settings for ``config_name = "berth"`` (a site may override them in
#: its Dask configuration, under ``jobqueue.berth``).
DEFAULTS: dict[str, Any] = {
    "name": "dask-worker",
    "cores": None,
    "memory": None,
    "processes": None,
    "python": None,
    "interface": None,
    "death-timeout": 60,
    "local-directory": None,
    "shared-temp-directory": None,
    "extra": None,
    "worker-command": "distributed.cli.dask_worker",
    "worker-extra-args": [],
    "shebang": "#!/usr/bin/env bash",
    "walltime": "00:30:00",
    "env-extra": None,
    "job-script-prologue": [],
    "job-extra": None,
    "job-extra-directives": [],
    "job-directives-skip": [],
    "log-directory": None,
    "scheduler-options": {},
    "url": None,
    "token": None,
    "partition": None,
    "account": None,
    "chdir": None,
}
dask.config.update_defaults({"jobqueue": {"berth": DEFAULTS}})


class BerthJob(Job):
    """One Dask worker job on Berth."""

    config_name = "berth"

    def __init__(
        self,
        scheduler: str | None = None,
        name: str | None = None,
        url: str | None = None,
        token: str | None = None,
        walltime: str | None = None,
        partition: str | None = None,
        account: str | None = None,
        chdir: str | None = None,
        config_name: str | None = None,
        **base_class_kwargs: Any,
    ) -> None:
        super().__init__(  # type: ignore[no-untyped-call]
            scheduler=scheduler, name=name, config_name=config_name, **base_class_kwargs
        )

        def setting(key: str, value: Any) -> Any:
            return value if value is not None else dask.config.get(f"jobqueue.berth.{key}")

        self.url = setting("url", url) or os.environ.get("BERTH_URL", "http://127.0.0.1:8080")
        self.token = setting("token", token) or os.environ.get("BERTH_TOKEN")
        self.time_limit = parse_time(str(setting("walltime", walltime)), bare="minutes")
        self.partition = setting("partition", partition)
        self.account = setting("account", account)
        self.chdir = setting("chdir", chdir)
        memory = self.worker_memory
        assert memory is not None, "Job.__init__ refuses a job without memory"
        self.resources = {
            "cpus": int(self.worker_cores),
            "mem_gb": max(1, math.ceil(memory / 2**30)),
        }
        amounts = ",".join(f"{n}={a}" for n, a in self.resources.items())
        header = [f"#BERTH -J {self.job_name}", f"#BERTH -r {amounts}",
                  f"#BERTH -t {self.time_limit}"]  # fmt: skip
        if self.partition:
            header.append(f"#BERTH -p {self.partition}")
        if self.account:
            header.append(f"#BERTH -A {self.account}")
        if self.log_directory is not None:
            header.append(f"#BERTH -o {self.log_directory}/{self.job_name}-%j.out")
            header.append(f"#BERTH -e {self.log_directory}/{self.job_name}-%j.err")
        header += [f"#BERTH {line}" for line in self.job_extra_directives]
        skip = self.job_directives_skip
        self.job_header = "\n".join(h for h in header if not any(s in h for s in skip))

    def _client(self) -> BerthClient:
        return BerthClient(self.url, self.token)

    def submit(self) -> str:
        """Submit this worker's script (what ``job_script()`` shows) as a Berth job."""
        with self._client() as client:
            answer = client.submit(
                self.resources,
                self.time_limit,
                name=self.job_name,
                script=self.job_script(),  # type: ignore[no-untyped-call]
                argv=[],
                chdir=self.chdir,
                partition=self.partition,
                account=self.account,
                output=None if self.log_directory is None
                else f"{self.log_directory}/{self.job_name}-%j.out",
                error=None if self.log_directory is None
                else f"{self.log_directory}/{self.job_name}-%j.err",
            )  # fmt: skip
        if not answer["accepted"]:
            raise RuntimeError(f"Berth refused the worker job: {answer['reason']}")
        return str(answer["job"]["job_id"])

    def cancel(self) -> None:
        """Cancel this worker's job, if it has not ended."""
        if self.job_id is None:
            return
        from berth_client.errors import BerthError

        with self._client() as client:
            try:
                client.cancel(int(self.job_id))
            except BerthError as error:
                if error.code != "conflict":  # it has already ended
                    raise

    async def start(self) -> None:
        self.job_id = await asyncio.to_thread(self.submit)
        await ProcessInterface.start(self)  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        """Cancel the job, then mark this worker closed as ``ProcessInterface.close``
        does: the cluster's close asserts that every worker it made is closed, and
        dask-jobqueue's ``Job.close`` leaves that to the garbage collector (a worker still
        referenced somewhere failed the close with ``AssertionError: Status.running``)."""
        await asyncio.to_thread(self.cancel)
        await ProcessInterface.close(self)  # type: ignore[no-untyped-call]


class BerthCluster(JobQueueCluster):
    """A Dask cluster whose workers are Berth jobs (see the module's description)."""

    job_cls = BerthJob

    def __init__(self, scheduler_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """As ``JobQueueCluster``, but the scheduler's HTTP endpoint goes on a free port
        unless ``scheduler_options`` (or ``jobqueue.berth.scheduler-options``) names one
        (``None`` there too: the scheduler serves HTTP even without a dashboard): Dask's
        default, 8787, is often held by another cluster on a login node."""
        if scheduler_options is None:
            scheduler_options = dask.config.get("jobqueue.berth.scheduler-options", {})
        options = dict(scheduler_options or {})
        if options.get("dashboard_address") is None:
            options["dashboard_address"] = ":0"
        super().__init__(scheduler_options=options, **kwargs)

    def ended_without_workers(self) -> str | None:
        """Why this cluster will never have a worker, when every job it submitted has
        ended and none of their workers is connected (a computation waiting on it would
        wait for ever): each job's end, with Berth's reason; otherwise ``None``."""
        if self.scheduler_info.get("workers"):
            return None
        jobs = [w for w in self.workers.values() if isinstance(w, BerthJob) and w.job_id]
        if not jobs:
            return None
        from berth_client.errors import BerthError

        ends = []
        try:
            with jobs[0]._client() as client:
                records = [client.job(int(str(job.job_id))) for job in jobs]
        except (BerthError, OSError):
            return None  # (the daemon cannot say now: asked again at the next stall)
        for job, record in zip(jobs, records, strict=True):
            if record["job_state"] in LIVE:
                return None
            reason = record.get("state_reason") or ""
            ends.append(
                f"job {job.job_id} {record['job_state']}" + (f" ({reason})" if reason else "")
            )
        return f"every Dask worker job ended without a worker: {'; '.join(ends)}"
