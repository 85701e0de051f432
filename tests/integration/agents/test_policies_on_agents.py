"""Every policy of the papers on real nodes: QoPS, MSB, MRT, slack and BL/BB selection,
each with two local agents running real commands. Deadline admission: an admitted job
runs on the nodes it was promised and completes by its deadline; one whose deadline
cannot be met beside them is refused at submit."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.integration.agents.cluster import Cluster
from tests.integration.conftest import OPERATOR


@pytest.mark.parametrize("policy", ["qops", "msb", "mrt"])
def test_admitted_deadlines_are_met_on_real_nodes(tmp_path: Path, policy: str) -> None:
    cluster = Cluster(tmp_path, "--policy", policy)
    try:
        cluster.add_agent("n1")
        cluster.add_agent("n2")
        now = int(time.time())
        wide = cluster.submit(
            "sleep 1; echo $BERTH_NODELIST > wide.txt",
            time_limit=6,
            slots={"count": 2, "per_slot": {"cpus": 2, "mem_gb": 1}},
            nodes={"count": 2},
            deadline=now + 60,
        )
        small = cluster.submit("echo small", time_limit=6, deadline=now + 40)
        answer = cluster.call(
            "POST",
            "/v1/jobs",
            json={
                "command": "true",
                "time_limit": 50,
                "slots": {"count": 2, "per_slot": {"cpus": 2, "mem_gb": 1}},
                "nodes": {"count": 2},
                "deadline": now + 52,
                "chdir": str(cluster.jobs_dir),
            },
        )
        assert answer.status_code == 201, answer.text
        assert answer.json()["accepted"] is False
        assert "cannot be met" in answer.json()["reason"], answer.json()
        for job_id, deadline in ((wide, now + 60), (small, now + 40)):
            done = cluster.wait_state(job_id, "COMPLETED", seconds=40)
            assert done["end_time"] <= deadline, done
            assert done["guaranteed_start"] <= deadline - 6
        spread = cluster.job(wide)
        assert sorted(spread["nodes"]) == ["n1", "n2"]
        assert (cluster.jobs_dir / "wide.txt").read_text().strip() == ",".join(spread["nodes"])
    finally:
        cluster.close()


@pytest.mark.parametrize(
    ("policy", "options"),
    [("slack", {}), ("easy", {"selection": "bb"}), ("conservative", {"selection": "bl"})],
)
def test_slack_and_balanced_selection_run_real_jobs(
    tmp_path: Path, policy: str, options: dict[str, str]
) -> None:
    """Slack and BL/BB place on the agents' nodes: jobs that share and fill the two
    nodes all run there and end; a promise (slack's bound, conservative's start) kept."""
    cluster = Cluster(tmp_path, "--policy", policy)
    try:
        cluster.add_agent("n1")
        cluster.add_agent("n2")
        if options:
            answer = cluster.call(
                "PUT", "/v1/admin/policy", OPERATOR, json={"policy": policy, "options": options}
            )
            assert answer.status_code == 200, answer.text
        wide = cluster.submit(
            "sleep 1",
            time_limit=5,
            slots={"count": 2, "per_slot": {"cpus": 2, "mem_gb": 1}},
            nodes={"count": 2},
        )
        small = [cluster.submit(f"echo {i}", time_limit=5) for i in range(3)]
        for job_id in (wide, *small):
            done = cluster.wait_state(job_id, "COMPLETED", seconds=40)
            assert set(done["nodes"]) <= {"n1", "n2"}
            promised = done["guaranteed_start"]
            if promised is not None:
                assert done["start_time"] <= promised, done
    finally:
        cluster.close()
