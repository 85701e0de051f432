"""A daemon with node agents on this host, each with its own work dir and resources.

Jobs are submitted as ``nobody``: an agent running as root (as in CI) runs each job as
the submitter's local account, and ``nobody`` is one on every Linux host. Their files go
to a world-writable directory under /tmp (pytest's own is private to root).

Timeouts are short so faults show within seconds: a silent agent's node goes down after
3 s, a restarted daemon gives agents 10 s, an agent cut off for 8 s fences its jobs, and
a kill's grace period is 1 s. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from berth.agent.cgroups import bases_of
from berth.agent.confine import clear_tree
from tests.integration.conftest import OPERATOR, RUNNER, DaemonProcess
from tests.support.waiting import wait_until

FAST = ("--agents", "--agent-timeout", "3", "--agent-grace", "10", "--fence", "8",
        "--kill-grace", "1", "--sync-wait", "2")  # fmt: skip


class AgentProcess:
    """``berth agent`` in a subprocess."""

    #: How an agent is started (the lean ``berth-agent`` command takes the same flags).
    program: tuple[str, ...] = (sys.executable, "-m", "berth.runtime.main", "agent")

    def __init__(
        self,
        cluster: Cluster,
        name: str,
        resources: str,
        token: str,
        *extra: str,
        program: tuple[str, ...] | None = None,
    ) -> None:
        if program is not None:
            self.program = program
        self.cluster = cluster
        self.name = name
        self.resources = resources
        self.token = token
        self.extra = extra
        self.workdir = cluster.agents_root / name
        self.log = cluster.root / f"agent-{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        command = [*self.program,
                   "--url", self.cluster.agent_urls, f"--token={self.token}", "--name", self.name,
                   "--resources", self.resources, "--workdir", str(self.workdir),
                   *self.extra]  # fmt: skip
        with self.log.open("a") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def pause(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def go_on(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class Cluster:
    """One daemon (``serve --agents``) and its agents; or, with ``replicas``, several
    daemons (``--ha`` in ``extra``) the agents know all of, ``daemon`` the one called."""

    def __init__(self, root: Path, *extra: str, replicas: int = 1) -> None:
        self.root = root
        self.jobs_dir = Path(tempfile.mkdtemp(prefix="berth-jobs-", dir="/tmp"))
        self.jobs_dir.chmod(0o777)
        # The agents' work dirs: a job's account passes through them to run its batch
        # script (as through /var/lib/berth-agent on a node), so not under pytest's.
        self.agents_root = Path(tempfile.mkdtemp(prefix="berth-agents-", dir="/tmp"))
        self.agents_root.chmod(0o711)
        self.extra = (*FAST, *extra)
        self.daemons = [DaemonProcess(self._data_dir(i, replicas), *self.extra)
                        for i in range(replicas)]  # fmt: skip
        self.daemon = self.daemons[0]
        self.agents: dict[str, AgentProcess] = {}
        #: Cgroups of ended jobs found at close (their shepherds should have removed them).
        self.leaked_cgroups: list[str] = []
        self.http = httpx.Client(timeout=10.0)

    def _data_dir(self, index: int, replicas: int) -> Path:
        if replicas == 1:
            return self.root
        path = self.root / f"daemon{index}"
        path.mkdir()
        return path

    @property
    def agent_urls(self) -> str:
        """What agents are given: every daemon, comma-separated."""
        return ",".join(d.url for d in self.daemons)

    def call(self, method: str, path: str, token: str = RUNNER, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"}
        return self.http.request(method, f"{self.daemon.url}{path}", headers=headers, **kwargs)

    def node_token(self, name: str) -> str:
        answer = self.call("POST", "/v1/admin/node-tokens", OPERATOR, json={"name": name})
        assert answer.status_code == 201, answer.text
        token: str = answer.json()["token"]
        return token

    def add_agent(
        self,
        name: str,
        resources: str = "cpus=2,mem_gb=4",
        *extra: str,
        program: tuple[str, ...] | None = None,
    ) -> AgentProcess:
        """A new agent (``extra``: more ``berth agent`` flags; ``program``: another
        command than ``berth agent``) once it has registered."""
        agent = AgentProcess(self, name, resources, self.node_token(name), *extra, program=program)
        self.agents[name] = agent
        wait_until(lambda: self.node_state(name) == "up", what=f"{name} registered")
        return agent

    def gang_partition(self, name: str, nodes: list[str], slot_seconds: int) -> None:
        """A gang partition (Zhou's ``bc`` scheme) of ``nodes`` with slots this long."""
        options = {"scheme": "bc", "slot_seconds": slot_seconds}
        made = self.call(
            "POST",
            "/v1/admin/partitions",
            OPERATOR,
            json={"name": name, "nodes": nodes, "options": options},
        )
        assert made.status_code == 201, made.text

    def node_state(self, name: str) -> str | None:
        nodes = self.call("GET", "/v1/cluster").json()["nodes"]
        return next((n["state"] for n in nodes if n["name"] == name), None)

    def submit(self, command: str, time_limit: int = 60, **body: Any) -> int:
        if "slots" not in body:
            body.setdefault("resources", {"cpus": 1, "mem_gb": 1})
        body.setdefault("chdir", str(self.jobs_dir))
        answer = self.call("POST", "/v1/jobs", json={"command": command, "time_limit": time_limit,
                                                      **body})  # fmt: skip
        assert answer.status_code == 201, answer.text
        job_id: int = answer.json()["job"]["job_id"]
        return job_id

    def cli(self, *words: str, token: str = RUNNER) -> subprocess.CompletedProcess[str]:
        """``berth WORDS`` against this daemon, run in the jobs' directory (as sbatch
        runs in the job's working directory)."""
        return subprocess.run(
            [sys.executable, "-m", "berth.runtime.main", *words],
            capture_output=True,
            text=True,
            cwd=self.jobs_dir,
            env={**os.environ, "BERTH_URL": self.daemon.url, "BERTH_TOKEN": token},
            timeout=60,
        )

    def job(self, job_id: int) -> dict[str, Any]:
        job: dict[str, Any] = self.call("GET", f"/v1/jobs/{job_id}").json()
        return job

    def wait_state(self, job_id: int, *states: str, seconds: float = 20.0) -> dict[str, Any]:
        job: dict[str, Any] = wait_until(
            lambda: (j := self.job(job_id))["job_state"] in states and j,
            seconds,
            f"job {job_id} in {states} (now {self.job(job_id)['job_state']})",
        )
        return job

    def restart_daemon(self) -> None:
        self.daemon = self.daemons[0] = DaemonProcess(self.root, *self.extra, port=self.daemon.port)

    def close(self) -> None:
        for agent in self.agents.values():
            agent.stop()
        for daemon in self.daemons:
            if daemon.process.poll() is None:
                os.kill(daemon.process.pid, signal.SIGCONT)
            daemon.stop()
        self.http.close()
        # Every ended job's shepherd removed its cgroups; those of jobs still running
        # are theirs until they end (an agent stopping leaves its jobs running).
        for agent in self.agents.values():
            self.leaked_cgroups += _ended_jobs_cgroups(agent)
        # No job may outlive the test: cancel what is left through a fresh agent scan,
        # and remove the cgroups the agents made (what is left in them is killed).
        for agent in self.agents.values():
            _kill_leftovers(agent.workdir)
            clear_tree(bases_of(agent.name))
        shutil.rmtree(self.jobs_dir, ignore_errors=True)
        shutil.rmtree(self.agents_root, ignore_errors=True)


def _ended_jobs_cgroups(agent: AgentProcess) -> list[str]:
    """The job cgroups under ``agent``'s bases whose job is not running: its directory
    is gone (acknowledged) or holds its ``exit.json``, and no share of it is held."""
    found = []
    for base in bases_of(agent.name):
        for entry in sorted(Path(base).glob("job-*")):
            key = entry.name.removeprefix("job-")
            jobdir = agent.workdir / "jobs" / key
            if (agent.workdir / "shares" / f"{key}.json").exists():
                continue  # a share of a job run by another node, still held
            if not jobdir.is_dir() or (jobdir / "exit.json").exists():
                found.append(str(entry))
    return found


def _kill_leftovers(workdir: Path) -> None:
    from berth.agent.proc import alive, read_json

    for shepherd_file in (workdir / "jobs").glob("*/shepherd.json"):
        record = read_json(shepherd_file) or {}
        for pid_key, ticks_key in (("pid", "ticks"), ("shepherd_pid", "shepherd_ticks")):
            pid = record.get(pid_key)
            if pid is not None and alive(pid, record.get(ticks_key)):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)  # its group, if it leads one
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
