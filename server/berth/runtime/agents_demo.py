"""``berth serve --agents --demo`` (``make run``): two local agents run real commands.

Once the daemon is up, the demo issues two node tokens, starts ``berth agent`` twice on
this host (each with its own work dir and 2 cpus), submits a few real commands that end
in each way a job can (completed, failed, timed out, one spread over both nodes), waits
for them, and prints their end states and output files. The agents are stopped when the
daemon stops. Under root the agents run the jobs as ``nobody`` (``--run-as``): a job
never runs as root, and the demo's user has no local account.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: The demo's nodes and what each offers.
NODES = {"local1": "cpus=2,mem_gb=2", "local2": "cpus=2,mem_gb=2"}

JOBS: list[tuple[str, str, int, dict[str, Any]]] = [
    ("hello-1", 'hostname; echo "job $BERTH_JOB_ID on $BERTH_NODENAME as $(id -un)"; sleep 3',
     30, {}),
    ("hello-2", 'echo "job $BERTH_JOB_ID on $BERTH_NODENAME"; sleep 3', 30, {}),
    ("hello-3", 'echo "job $BERTH_JOB_ID on $BERTH_NODENAME"; sleep 3', 30, {}),
    ("two-nodes", 'echo "one command, nodes $BERTH_NODELIST ($BERTH_NUM_NODES)"', 30,
     {"slots": {"count": 2, "per_slot": {"cpus": 1, "mem_gb": 1}}, "nodes": {"count": 2}}),
    ("fails", 'echo "something went wrong" >&2; exit 2', 30, {}),
    ("too-long", "echo started; sleep 60", 3, {}),
]  # fmt: skip


def start_agents(url: str, operator: str, data_dir: Path) -> list[subprocess.Popen[bytes]]:
    """Issue a token per demo node and start its agent; the agent processes."""
    from berth_client import BerthClient

    processes = []
    with BerthClient(url, operator) as client:
        for name, resources in NODES.items():
            workdir = data_dir / "agents" / name
            workdir.mkdir(parents=True, exist_ok=True)
            token_file = workdir.parent / f"{name}.token"
            token_file.touch(mode=0o600)
            token_file.write_text(client.node_token(name)["token"])
            command = [sys.executable, "-m", "berth.runtime.main", "agent", "--url", url,
                       "--token-file", str(token_file), "--name", name,
                       "--resources", resources, "--workdir", str(workdir),
                       "--exit-with-parent"]  # fmt: skip
            if os.geteuid() == 0:
                command += ["--run-as", "nobody"]
            with open(workdir.parent / f"{name}.log", "ab") as log:
                processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
    return processes


def stop_agents(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _jobs_dir(data_dir: Path) -> tuple[Path, bool]:
    """Where the demo jobs run and write: one the job's account can write to; and
    whether it is a temporary folder outside the data directory (for root's demo)."""
    if os.geteuid() == 0:  # the jobs run as nobody, who may not reach the data directory
        where = Path(tempfile.mkdtemp(prefix="berth-demo-", dir="/tmp"))
        where.chmod(0o777)
        return where, True
    where = (data_dir / "demo-jobs").resolve()
    where.mkdir(parents=True, exist_ok=True)
    return where, False


def run_demo(url: str, operator: str, user: str, data_dir: Path) -> list[str]:
    """Submit the demo jobs, wait for their ends; the lines to print."""
    from berth_client import BerthClient
    from berth_client.cli_support import start_words

    out: list[str] = []
    with BerthClient(url, operator) as admin:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            states = {n["name"]: n["state"] for n in admin.cluster()["nodes"]}
            if all(states.get(name) == "up" for name in NODES):
                break
            time.sleep(0.2)
        else:
            return [f"the demo agents did not register within 30 s (logs in {data_dir}/agents)"]
    where, temporary = _jobs_dir(data_dir)
    note = " (a temporary folder, removed once their output is shown)" if temporary else ""
    print(f"\nDemo: two agents (local1, local2) run real commands in {where}{note}", flush=True)
    ids: dict[int, str] = {}
    with BerthClient(url, user) as client:
        now = client.cluster()["now"]
        for name, command, limit, extra in JOBS:
            resources = None if "slots" in extra else {"cpus": 1, "mem_gb": 1}
            answer = client.submit(
                resources, limit, name=name, command=command, chdir=str(where), **extra
            )
            job = answer["job"]
            ids[job["job_id"]] = name
            print(
                f"  job {job['job_id']} {name:10} {job['job_state']:8} {start_words(job, now)}",
                flush=True,
            )
        final = (
            "COMPLETED",
            "FAILED",
            "TIMEOUT",
            "CANCELLED",
            "NODE_FAIL",
            "REJECTED",
            "OUT_OF_MEMORY",
        )
        deadline = time.monotonic() + 60
        jobs: dict[int, dict[str, Any]] = {}
        while time.monotonic() < deadline:
            jobs = {i: client.job(i) for i in ids}
            if all(j["job_state"] in final for j in jobs.values()):
                break
            time.sleep(0.3)
    out.append(f"\n{'JOBID':>5} {'NAME':10} {'STATE':10} {'EXIT':>4} {'NODES':14} OUTPUT")
    for job_id, job in jobs.items():
        exit_text = "" if job["exit_code"] is None else str(job["exit_code"])
        output = where / f"berth-{job_id}.out"
        errors = where / f"berth-{job_id}.err"
        text = output.read_text().strip() if output.exists() else ""
        if errors.exists() and errors.read_text().strip():
            text += f" [stderr: {errors.read_text().strip()}]"
        out.append(
            f"{job_id:>5} {ids[job_id]:10} {job['job_state']:10} {exit_text:>4} "
            f"{','.join(job['nodes'])[:14]:14} {text.replace(chr(10), ' | ')[:80]}"
        )
    if temporary and all(j["job_state"] in final for j in jobs.values()):
        shutil.rmtree(where, ignore_errors=True)  # shown above; nothing left in /tmp
    return out
