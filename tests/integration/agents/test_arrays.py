"""Job arrays on real agents: one submission, one job per task, each with its own
guarantee, environment and output, never more running than the array's ``%N``; the
waiting tasks folded in ``berth queue``; the whole array cancelled at once."""

from __future__ import annotations

from tests.integration.agents.cluster import Cluster


def _berth(cluster: Cluster, *words: str) -> str:
    done = cluster.cli(*words)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_array_runs_every_task_with_its_index_and_output(cluster: Cluster) -> None:
    """20 tasks with ``%4`` on a node with room for 8: never more than 4 at once (each
    task writes when it ran, by the node's clock), each its own output."""
    cluster.add_agent("n1", "cpus=8,mem_gb=16")
    body = {
        "command": "echo task $BERTH_ARRAY_TASK_ID of $BERTH_ARRAY_JOB_ID; "
        "date +%s.%N; sleep 1; date +%s.%N",
        "time_limit": 60,
        "resources": {"cpus": 1, "mem_gb": 1},
        "array": "0-19%4",
        "output": "sweep-%A_%a.out",
        "chdir": str(cluster.jobs_dir),
    }
    answer = cluster.call("POST", "/v1/jobs", json=body)
    assert answer.status_code == 201, answer.text
    submitted = answer.json()
    tasks = submitted["array_tasks"]
    array = submitted["job"]["job_id"]
    assert len(tasks) == 20
    assert tasks[0] == array
    jobs = [cluster.job(t) for t in tasks]
    assert [j["array_task_id"] for j in jobs] == list(range(20))
    assert all(j["guaranteed_start"] is not None for j in jobs)  # each its own promise
    assert sum(j["job_state"] == "RUNNING" for j in jobs) <= 4
    ran: list[tuple[float, float]] = []
    for index, task in enumerate(tasks):
        done = cluster.wait_state(task, "COMPLETED", "FAILED", seconds=60)
        assert done["job_state"] == "COMPLETED", done
        output = (cluster.jobs_dir / f"sweep-{array}_{index}.out").read_text().splitlines()
        assert output[0] == f"task {index} of {array}"
        ran.append((float(output[1]), float(output[2])))
    most = max(sum(1 for start, end in ran if start <= moment < end) for moment, _ in ran)
    assert most == 4  # the limit, reached (room for 8)


def test_waiting_tasks_fold_in_the_queue_and_the_array_cancels_whole(cluster: Cluster) -> None:
    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    array = cluster.submit("sleep 60", array="0-9", resources={"cpus": 1, "mem_gb": 1})
    cluster.wait_state(array, "RUNNING")
    queue = _berth(cluster, "queue")
    assert f"{array}_0 " in queue  # a running task: a line of its own
    assert f"{array}_[2-9]" in queue  # the waiting ones: one line
    assert "array" in _berth(cluster, "cancel", "--array", str(array))
    states = {cluster.job(array + index)["job_state"] for index in range(10)}
    assert states == {"CANCELLED"}
    refused = cluster.call("POST", "/v1/jobs", json={"command": "true", "time_limit": 60,
                                                      "resources": {"cpus": 1},
                                                      "array": "0-9%0"})  # fmt: skip
    assert refused.status_code == 422
    assert refused.json()["error"]["field"] == "array"
