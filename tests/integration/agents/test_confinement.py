"""Jobs held to what they asked for, on real agents: cores, memory, freezing, usage.

These need cgroups an agent can write (root here, v1 ``cpuset``/``memory``/``freezer``/
``pids``; v2 with controllers elsewhere); without them they skip and say why. After
each test no cgroup of the test's agents is left: the ended jobs' shepherds removed
theirs (the shared fixture checks), and ``Cluster.close`` clears the rest.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

import pytest

from berth.agent import cgroups
from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import OPERATOR

CORES = len(os.sched_getaffinity(0))


def _confinement() -> str | None:
    """Why jobs cannot be confined here, or None."""
    probe = cgroups.probe("confinement-check")
    if probe.layout is None:
        return probe.reason
    cgroups.release(probe.layout)
    missing = {"cpuset", "memory"} - set(probe.layout.controllers)
    return f"no {', '.join(sorted(missing))} controller" if missing else None


WHY_NOT = _confinement()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"no cgroups: {WHY_NOT}")


def _burn(loops: int, seconds: int) -> str:
    """A command running ``loops`` busy loops for ``seconds``, after printing the cores
    its processes may run on."""
    spin = f"timeout {seconds} sh -c 'while :; do :; done'"
    return (
        "grep Cpus_allowed_list /proc/self/status; "
        f"for i in $(seq {loops}); do ({spin}) & done; wait"
    )


def test_a_job_is_held_to_its_cores_and_its_neighbour_gets_its_own(cluster: Cluster) -> None:
    """A cpus=1 job running three busy loops for 3 s uses at most 1.2 CPU-seconds per
    second, while the job beside it gets the cores it holds (2 where this host has 3
    cores or more; here the rest of the host's cores)."""
    if CORES < 2:
        pytest.skip("needs two cores")
    beside = min(2, CORES - 1)
    cluster.add_agent("n1", f"cpus={CORES},mem_gb=4")
    greedy = cluster.submit(_burn(3, 3), resources={"cpus": 1, "mem_gb": 1})
    neighbour = cluster.submit(_burn(beside, 3), resources={"cpus": beside, "mem_gb": 1})
    done = {job: cluster.wait_state(job, "COMPLETED", seconds=30) for job in (greedy, neighbour)}
    assert done[greedy]["start_time"] < done[neighbour]["end_time"]  # they ran side by side
    assert done[neighbour]["start_time"] < done[greedy]["end_time"]
    greedy_rate = done[greedy]["usage"]["cpu_seconds"] / 3.0
    neighbour_rate = done[neighbour]["usage"]["cpu_seconds"] / 3.0
    assert greedy_rate <= 1.2, done[greedy]["usage"]
    # Its cores are its own, the daemon's and the agent's few processes aside (they share
    # this machine's cores); unconfined, three greedy loops would leave it about half.
    assert neighbour_rate >= 0.7 * beside, done[neighbour]["usage"]
    cores = {
        job: (cluster.jobs_dir / f"berth-{job}.out").read_text().split()[-1]
        for job in (greedy, neighbour)
    }
    mine = set(cgroups.parse_cpu_list(cores[greedy]))
    theirs = set(cgroups.parse_cpu_list(cores[neighbour]))
    assert len(mine) == 1
    assert len(theirs) == beside
    assert not mine & theirs, cores  # no core shared


def test_a_job_over_its_memory_ends_out_of_memory_and_its_neighbour_completes(
    cluster: Cluster,
) -> None:
    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    hungry = cluster.submit(
        "exec /usr/bin/python3 -c 'block = bytearray(2 * 2**30); print(len(block))'",
        resources={"cpus": 1, "mem_gb": 1},
    )
    neighbour = cluster.submit("sleep 3; echo fine", resources={"cpus": 1, "mem_gb": 1})
    ended = cluster.wait_state(hungry, "OUT_OF_MEMORY", "COMPLETED", "FAILED", seconds=30)
    assert ended["job_state"] == "OUT_OF_MEMORY", ended
    assert "memory limit of 1 GiB" in ended["state_reason"]
    assert ended["usage"]["peak_memory_bytes"] <= 2**30
    fine = cluster.wait_state(neighbour, "COMPLETED", "FAILED", seconds=30)
    assert fine["job_state"] == "COMPLETED"
    assert (cluster.jobs_dir / f"berth-{neighbour}.out").read_text() == "fine\n"
    metrics = cluster.call("GET", "/metrics").text
    assert 'berth_jobs_ended_total{state="OUT_OF_MEMORY"} 1' in metrics


def test_a_suspended_job_is_frozen_whole_even_a_child_in_its_own_session(
    cluster: Cluster,
) -> None:
    """Gang scheduling suspends a job while the other job of its node runs; a child the
    job started in a session of its own (out of reach of a signal to the job's process
    group) does not run either while its job is suspended."""
    slot = 2
    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    cluster.gang_partition("g", ["n1"], slot)
    ticker = (
        "setsid sh -c 'while :; do date +%s.%N >> ticks-$BERTH_JOB_ID; sleep 0.05; done' & sleep 7"
    )
    jobs = [
        cluster.submit(ticker, time_limit=20, resources={"cpus": 2, "mem_gb": 1}, partition="g")
        for _ in range(2)
    ]
    for job in jobs:
        done = cluster.wait_state(job, "COMPLETED", "FAILED", "TIMEOUT", seconds=60)
        assert done["job_state"] == "COMPLETED", done
        assert done["suspended_seconds"] >= slot
    for job in jobs:
        ticks = [float(t) for t in (cluster.jobs_dir / f"ticks-{job}").read_text().split()]
        gaps = [after - before for before, after in itertools.pairwise(ticks)]
        # Suspended for at least one slot: the child wrote nothing for that long.
        assert max(gaps) >= slot - 0.5, gaps
    # The escaped children ended with their jobs: nothing writes any more.
    sizes = {job: (cluster.jobs_dir / f"ticks-{job}").stat().st_size for job in jobs}
    time.sleep(0.5)  # a child still alive would have written ten more lines by now
    assert sizes == {job: (cluster.jobs_dir / f"ticks-{job}").stat().st_size for job in jobs}


def test_show_and_usage_print_what_a_job_used(cluster: Cluster, tmp_path: Path) -> None:
    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    job = cluster.submit(_burn(1, 2), resources={"cpus": 1, "mem_gb": 1})
    cluster.wait_state(job, "COMPLETED", seconds=30)

    def berth(*words: str) -> str:
        done = cluster.cli(*words, token=OPERATOR)
        assert done.returncode == 0, done.stderr
        return done.stdout

    shown = berth("show", str(job))
    assert "cpu_used:" in shown
    assert "efficiency" in shown
    assert "memory_peak:" in shown
    usage = berth("usage")
    assert "USED-CPU-H" in usage
    assert "CPU-EFF" in usage
    agents = berth("admin", "agents", "--token", OPERATOR)
    assert "cgroup v" in agents


def test_a_job_whose_shepherd_died_is_cleared_with_its_cgroup(cluster: Cluster) -> None:
    """A shepherd killed with its agent: the restarted agent reports the job lost
    (NODE_FAIL), kills what is left in its cgroup, even a process in a session of its
    own (out of reach of its process group), and removes the cgroup."""
    from berth.agent.proc import alive, read_json, start_ticks
    from tests.support.waiting import wait_until

    agent = cluster.add_agent("n1", "cpus=2,mem_gb=4")
    pids = cluster.jobs_dir / "pids"
    job = cluster.submit(f"setsid sleep 120 & echo $! > {pids}; sleep 120")
    cluster.wait_state(job, "RUNNING")
    wait_until(lambda: pids.exists() and pids.read_text().strip(), what="the job started")
    escaped = int(pids.read_text())
    escaped_ticks = start_ticks(escaped)
    # The job may run (and write its pid) before its shepherd has recorded itself.
    record = agent.workdir / "jobs" / f"{job}.0" / "shepherd.json"
    shepherd = wait_until(lambda: read_json(record), what="the shepherd's record")
    agent.kill()
    os.kill(shepherd["shepherd_pid"], 9)
    wait_until(
        lambda: not alive(shepherd["shepherd_pid"], shepherd["shepherd_ticks"]),
        what="the shepherd gone",
    )
    assert alive(escaped, escaped_ticks)  # nobody has cleared the job yet
    job_cgroups = [Path(base, f"job-{job}.0") for base in cgroups.bases_of("n1")]
    assert any(path.is_dir() for path in job_cgroups)
    agent.start()
    ended = cluster.wait_state(job, "NODE_FAIL", seconds=30)
    assert "shepherd died" in ended["state_reason"]
    wait_until(lambda: not alive(escaped, escaped_ticks), what="the escaped process killed")
    assert not any(path.exists() for path in job_cgroups)


def _cgroup_of(pid: int, controller: str) -> str:
    """The cgroup ``pid`` is in for ``controller`` (v1), or its v2 cgroup."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _number, controllers, path = line.split(":", 2)
        if controller in controllers.split(",") or (controllers == "" and not _V1):
            return path
    return ""


_V1 = any(line.split(":", 2)[1] for line in Path("/proc/self/cgroup").read_text().splitlines())


def test_a_multi_node_job_is_confined_on_every_node_and_a_login_there_joins_it(
    cluster: Cluster,
) -> None:
    """The command runs on the first node; the second holds the job's share in a cgroup
    with its cores and memory. A login of the job's user on the second node, adopted
    into it (as PAM would), is held to its memory limit, and is killed when the job
    ends; a user with no job there is refused."""
    import subprocess
    import sys

    from berth.agent.proc import alive, read_json, start_ticks
    from tests.support.waiting import wait_until

    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    cluster.add_agent("n2", "cpus=2,mem_gb=4")
    job = cluster.submit(
        "sleep 60", slots={"count": 2, "per_slot": {"cpus": 2, "mem_gb": 1}}, time_limit=120
    )
    running = cluster.wait_state(job, "RUNNING")
    assert set(running["nodes"]) == {"n1", "n2"}, running
    _first, held_on = list(running["nodes"])  # the command runs on the first
    agent = cluster.agents[held_on]
    share_file = agent.workdir / "shares" / f"{job}.0.json"
    share = wait_until(lambda: read_json(share_file), what="the share held on the other node")
    assert len(share["cores"]) == 2
    dirs = share["cgroup"]["dirs"]
    memory_dir = Path(dirs.get("memory") or dirs["unified"])
    limit_file = "memory.limit_in_bytes" if "memory" in dirs else "memory.max"
    assert int((memory_dir / limit_file).read_text()) == 2**30  # its slot's 1 GiB

    def adopt(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "berth.agent.adopt", "--workdir", str(agent.workdir), *words],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip

    # A login that waits for a line, then takes 3 GiB: past the share's memory.
    login = subprocess.Popen(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3",
         "-c", "import sys; sys.stdin.readline(); block = bytearray(3 * 2**30); print(len(block))"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        refused = adopt("--user", "daemon", "--pid", str(login.pid))
        assert refused.returncode == 1, refused
        assert "no job of daemon runs on this node" in refused.stderr
        adopted = adopt("--user", "nobody", "--pid", str(login.pid))
        assert adopted.returncode == 0, adopted.stderr
        assert _cgroup_of(login.pid, "memory").endswith(f"/job-{job}.0"), _cgroup_of(
            login.pid, "memory"
        )
        assert login.stdin is not None
        login.stdin.write("go\n")
        login.stdin.flush()
        assert login.wait(timeout=30) == -9  # the out-of-memory killer, in the share only
    finally:
        login.kill()
        login.wait()
        if login.stdin is not None:
            login.stdin.close()
    assert cluster.job(job)["job_state"] == "RUNNING"  # the job itself goes on

    # A second login stays until the job ends, then goes with it, and so does the share.
    sleeper = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup",
                                "--clear-groups", "sleep", "300"])  # fmt: skip
    try:
        ticks = start_ticks(sleeper.pid)
        assert adopt("--user", "nobody", "--pid", str(sleeper.pid)).returncode == 0
        agent.kill()  # an agent restarted keeps holding the share, and what is in it
        registered = agent.log.read_text().count("registered with")
        agent.start()
        wait_until(  # it has cleared what it clears at start, and synced again
            lambda: agent.log.read_text().count("registered with") > registered,
            what="the agent registered again",
        )
        assert alive(sleeper.pid, ticks)
        assert share_file.exists()
        cancelled = cluster.call("DELETE", f"/v1/jobs/{job}", OPERATOR)
        assert cancelled.status_code == 200, cancelled.text
        cluster.wait_state(job, "CANCELLED")
        assert sleeper.wait(timeout=30) == -9
        assert not alive(sleeper.pid, ticks)
        wait_until(lambda: not share_file.exists(), what="the share released")
        assert not any(Path(d).exists() for d in dirs.values())
    finally:
        sleeper.kill()
        sleeper.wait()
    assert adopt("--user", "nobody", "--pid", str(os.getpid())).returncode == 1
