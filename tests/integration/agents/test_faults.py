"""Faults on either side with real processes: kill -9 of an agent or of the daemon, an
agent that stops talking, an agent cut off for good, and bad input from agents."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx

from berth.agent.proc import alive, start_ticks
from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import ALICE, OPERATOR
from tests.support.waiting import wait_until


class EventLog:
    """The operator's event stream, read in a thread: ``(kind, job id)`` pairs."""

    def __init__(self, cluster: Cluster) -> None:
        self._seen: list[tuple[str, int | None]] = []
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, args=(cluster,), daemon=True)
        self._thread.start()
        assert self._ready.wait(10)

    def _listen(self, cluster: Cluster) -> None:
        headers = {"Authorization": f"Bearer {OPERATOR}"}
        with httpx.stream("GET", f"{cluster.daemon.url}/v1/events", headers=headers,
                          timeout=httpx.Timeout(5.0, read=20.0)) as stream:  # fmt: skip
            kind = ""
            for line in stream.iter_lines():
                if self._stop.is_set():
                    return
                if line.startswith(": connected"):
                    self._ready.set()
                elif line.startswith("event: "):
                    kind = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    self._seen.append((kind, json.loads(line.removeprefix("data: ")).get("job_id")))

    def seen(self) -> list[tuple[str, int | None]]:
        return list(self._seen)

    def kinds(self) -> set[str]:
        return {kind for kind, _ in self._seen}

    def close(self) -> None:
        self._stop.set()


def _started(cluster: Cluster, job_id: int) -> list[int]:
    """Pids the job wrote at its start (one line per start: a second start shows)."""
    marker = cluster.jobs_dir / f"started-{job_id}"
    return [int(p) for p in marker.read_text().split()] if marker.exists() else []


def _job(cluster: Cluster, seconds: float, **body: Any) -> int:
    marker = cluster.jobs_dir / "started-$BERTH_JOB_ID"
    return cluster.submit(f"echo $$ >> {marker}; sleep {seconds}; echo done", **body)


def test_agent_kill_9_restart_adopts_its_jobs_and_reports_their_ends(cluster: Cluster) -> None:
    agent = cluster.add_agent("n1")
    short, long = _job(cluster, 3), _job(cluster, 60)
    wait_until(lambda: _started(cluster, short) and _started(cluster, long), what="jobs started")
    (pid,) = _started(cluster, long)
    ticks = start_ticks(pid)
    agent.kill()
    agent.start()
    assert cluster.wait_state(short, "COMPLETED", seconds=20)["exit_code"] == 0
    assert (cluster.jobs_dir / f"berth-{short}.out").read_text() == "done\n"
    assert cluster.job(long)["job_state"] == "RUNNING"
    assert alive(pid, ticks)  # adopted, not restarted
    assert _started(cluster, short) == _started(cluster, short)[:1]
    assert _started(cluster, long) == [pid]
    cluster.call("DELETE", f"/v1/jobs/{long}")
    wait_until(lambda: not alive(pid, ticks), what="cancelled after adoption")


def test_an_agent_restarted_with_more_resources_resizes_its_node_and_keeps_its_job(
    cluster: Cluster,
) -> None:
    """An operator gives a node's agent another configuration and restarts it: the
    registration notes the change and the daemon's watch resizes the node at once (in a
    replan off the event loop); the job running there is adopted, and a job only the
    larger node can hold then runs."""
    agent = cluster.add_agent("n1")  # cpus=2,mem_gb=4
    long = _job(cluster, 60)
    wait_until(lambda: _started(cluster, long), what="the job started")
    (pid,) = _started(cluster, long)
    ticks = start_ticks(pid)
    agent.kill()
    agent.resources = "cpus=6,mem_gb=12"
    agent.start()
    wait_until(lambda: _resources(cluster, "n1") == {"cpus": 6, "mem_gb": 12}, what="resized")
    assert cluster.job(long)["job_state"] == "RUNNING"
    assert alive(pid, ticks)
    wide = cluster.submit("true", resources={"cpus": 5, "mem_gb": 5})
    assert cluster.wait_state(wide, "COMPLETED", seconds=20)["exit_code"] == 0
    assert _started(cluster, long) == [pid]
    cluster.call("DELETE", f"/v1/jobs/{long}")
    wait_until(lambda: not alive(pid, ticks), what="cancelled")


def _resources(cluster: Cluster, name: str) -> dict[str, int] | None:
    nodes = cluster.call("GET", "/v1/cluster").json()["nodes"]
    return next((n["resources"] for n in nodes if n["name"] == name), None)


def test_daemon_kill_9_jobs_run_on_and_are_taken_back(cluster: Cluster) -> None:
    cluster.add_agent("n1")
    cluster.add_agent("n2")
    jobs = [_job(cluster, 4) for _ in range(3)]
    wait_until(lambda: all(_started(cluster, j) for j in jobs), what="jobs started")
    first = {j: _started(cluster, j) for j in jobs}
    cluster.daemon.kill()
    # The jobs keep running without the daemon.
    assert all(alive(p[0], start_ticks(p[0])) for p in first.values())
    cluster.restart_daemon()
    for job in jobs:
        assert cluster.wait_state(job, "COMPLETED", seconds=30)["exit_code"] == 0
    assert {j: _started(cluster, j) for j in jobs} == first  # nothing started twice
    assert {cluster.node_state("n1"), cluster.node_state("n2")} == {"up"}
    # And new work still flows.
    after = _job(cluster, 0.1)
    cluster.wait_state(after, "COMPLETED")


def test_a_silent_agent_s_node_goes_down_and_requeue_moves_its_job(cluster: Cluster) -> None:
    cluster.add_agent("n1", "cpus=1,mem_gb=4")
    cluster.add_agent("n2", "cpus=1,mem_gb=4")
    events = EventLog(cluster)
    moving = _job(cluster, 60, requeue=True, resources={"cpus": 1})
    staying = _job(cluster, 60, resources={"cpus": 1})
    wait_until(lambda: _started(cluster, moving) and _started(cluster, staying), what="started")
    (victim,) = cluster.job(moving)["nodes"]
    (other,) = cluster.job(staying)["nodes"]
    cluster.agents[victim].pause()  # stops talking; its jobs run on
    wait_until(lambda: cluster.node_state(victim) == "down", seconds=15, what="node down")
    requeued = cluster.job(moving)
    assert requeued["requeued"] == 1
    assert requeued["job_state"] == "PENDING"
    # Its new guarantee: when the job on the other node reaches its limit.
    staying_job = cluster.job(staying)
    assert requeued["guaranteed_start"] == staying_job["start_time"] + staying_job["time_limit"]
    wait_until(
        lambda: (
            {"node.down", "job.node_fail", "job.requeued", "job.guarantee_changed"}
            <= events.kinds()
        ),
        what="the failure announced on the event stream",
    )
    assert ("job.guarantee_changed", moving) in events.seen()
    # The other node frees up: the requeued job runs there, a second time.
    cluster.call("DELETE", f"/v1/jobs/{staying}")
    assert cluster.wait_state(moving, "RUNNING")["nodes"] == {other: {"cpus": 1}}
    wait_until(lambda: len(_started(cluster, moving)) == 2, what="second attempt started")
    # The silent agent talks again: its node comes back and its stale copy is cancelled.
    stale = _started(cluster, moving)[0]
    cluster.agents[victim].go_on()
    wait_until(lambda: cluster.node_state(victim) == "up", seconds=15, what="node back up")
    wait_until(lambda: start_ticks(stale) is None, seconds=15, what="stale copy cancelled")
    assert cluster.job(moving)["job_state"] == "RUNNING"
    events.close()


def test_an_agent_cut_off_past_the_fence_kills_its_jobs(cluster: Cluster) -> None:
    cluster.add_agent("n1")
    job = _job(cluster, 120)
    wait_until(lambda: _started(cluster, job), what="started")
    (pid,) = _started(cluster, job)
    ticks = start_ticks(pid)
    cluster.daemon.kill()  # and it never comes back
    assert alive(pid, ticks)
    wait_until(lambda: not alive(pid, ticks), seconds=20, what="fenced after 8 s")


def test_bad_input_from_agents_is_refused_and_changes_nothing(cluster: Cluster) -> None:
    cluster.add_agent("n1")
    token = cluster.node_token("n2")
    job = _job(cluster, 30)
    wait_until(lambda: _started(cluster, job), what="started")
    before = cluster.call("GET", "/v1/jobs", OPERATOR).json()
    url = f"{cluster.daemon.url}/v1/agents/sync"
    hello = {"name": "n2", "boot_id": "b", "resources": {"cpus": 2, "mem_gb": 4}, "jobs": []}

    def post(body: object, bearer: str | None, path: str = "/v1/agents/register") -> httpx.Response:
        headers = {"Content-Type": "application/json"}
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        data = body if isinstance(body, str) else json.dumps(body)
        return httpx.post(f"{cluster.daemon.url}{path}", content=data, headers=headers)

    assert post(hello, None).status_code == 401
    assert post(hello, "wrong").status_code == 401
    assert post(hello, ALICE).status_code == 403  # a user token
    assert post({**hello, "name": "n1"}, token).status_code == 403  # another node's name
    assert cluster.call("GET", "/v1/jobs", token).status_code == 403  # node tokens: agents only
    truncated = post(json.dumps(hello)[:-5], token)
    assert truncated.status_code == 422
    assert truncated.json()["error"]["code"] == "invalid"
    malformed = post({**hello, "resources": {"cpus": -1}}, token)
    assert malformed.status_code == 422
    assert malformed.json()["error"]["field"].startswith("resources")
    foreign = post({**hello, "jobs": [{"job_id": job, "state": "RUNNING"}]}, token)
    assert foreign.status_code == 409
    assert foreign.json()["error"]["unknown_jobs"] == [f"{job}.0"]
    unknown = post({**hello, "jobs": [{"job_id": 999, "state": "COMPLETED"}]}, token)
    assert unknown.status_code == 409
    assert post(hello, token, "/v1/agents/sync").status_code == 409  # not registered
    # A second agent claiming n1 with another boot id while n1's agent is alive.
    n1_token = cluster.node_token("n1")  # replaces n1's token: its agent now gets 401
    imposter = post({**hello, "name": "n1", "boot_id": "another-boot"}, n1_token)
    assert imposter.status_code == 409
    assert "another agent" in imposter.json()["error"]["message"]
    assert httpx.post(url, json=hello).status_code == 401
    after = cluster.call("GET", "/v1/jobs", OPERATOR).json()
    assert after["jobs"] == before["jobs"]  # (the page's `now` moves on)
    assert [n["name"] for n in cluster.call("GET", "/v1/cluster").json()["nodes"]] == ["n1"]
