"""Agents follow a failover: two ``berth serve --ha --agents`` daemons on a real
PostgreSQL, and agents that know both. ``kill -9`` of the leader: the standby takes
over, the agents find it (the dead one refuses them, the standby redirects until it
leads), the job running on them is adopted, not started again, and its end, reported
to the new leader, is kept; jobs submitted after run on the same agents."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import OPERATOR
from tests.integration.test_ha import role, roles
from tests.support.waiting import wait_until

LEASE = 2.0


@pytest.fixture
def ha_cluster(tmp_path: Path, pg_database: str) -> Iterator[Cluster]:
    made = Cluster(tmp_path, "--ha", "--database-url", pg_database, "--lease-seconds",
                   str(LEASE), replicas=2)  # fmt: skip
    try:
        wait_until(lambda: roles(made.daemons) == ["leader", "standby"], 30, "a leader")
        made.daemon = next(d for d in made.daemons if role(d) == "leader")
        yield made
    finally:
        made.close()


def heard_lately(cluster: Cluster) -> set[str]:
    """The agents the called daemon heard from in the last two seconds."""
    agents = cluster.call("GET", "/v1/agents", OPERATOR).json()["agents"]
    return {a["name"] for a in agents if (a["seconds_since_heard"] or 99) < 2}


def test_agents_follow_the_new_leader_and_their_running_job_is_adopted(
    ha_cluster: Cluster,
) -> None:
    cluster = ha_cluster
    for name in ("n1", "n2"):
        cluster.add_agent(name)
    starts = cluster.jobs_dir / "starts"  # each run of a job's command adds its id
    long = cluster.submit(f'echo "$BERTH_JOB_ID" >> {starts}; sleep 6')
    running = cluster.wait_state(long, "RUNNING")
    wait_until(lambda: starts.exists() and starts.read_text().split() == [str(long)])
    old = cluster.daemon
    new = next(d for d in cluster.daemons if d is not old)
    old.kill()
    wait_until(lambda: role(new) == "leader", 20, "the standby to lead")
    cluster.daemon = new
    wait_until(lambda: heard_lately(cluster) == {"n1", "n2"}, 20, "both agents at the new leader")
    job = cluster.job(long)
    assert job["job_state"] == "RUNNING", job  # adopted where it runs
    assert job["nodes"] == running["nodes"]
    after = cluster.submit(f'echo "$BERTH_JOB_ID" >> {starts}')
    assert cluster.wait_state(after, "COMPLETED", "FAILED", seconds=30)["exit_code"] == 0
    ended = cluster.wait_state(long, "COMPLETED", "FAILED", "NODE_FAIL", seconds=30)
    assert ended["job_state"] == "COMPLETED", ended
    assert ended["start_time"] == running["start_time"]
    assert sorted(starts.read_text().split()) == sorted([str(long), str(after)])  # once each
