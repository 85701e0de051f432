"""Node agents end to end: a real daemon, real agents, real processes over loopback."""

from __future__ import annotations

from berth.agent.proc import alive, start_ticks
from tests.integration.agents.cluster import Cluster
from tests.support.waiting import wait_until


def test_jobs_run_and_end_in_every_way(cluster: Cluster) -> None:
    cluster.add_agent("n1")
    cluster.add_agent("n2")
    root = cluster.jobs_dir
    ok = cluster.submit(
        "echo $BERTH_JOB_ID $BERTH_JOB_NAME $BERTH_NODELIST $BERTH_NUM_NODES $BERTH_CPUS_ON_NODE; "
        "pwd; echo oops >&2",
        name="hello",
    )
    failed = cluster.submit("exit 3")
    killed = cluster.submit("kill -9 $$")
    overran = cluster.submit("trap '' TERM; sleep 30", time_limit=2)
    wide = cluster.submit(
        "echo $BERTH_NODELIST $BERTH_NUM_NODES > wide.txt",
        slots={"count": 2, "per_slot": {"cpus": 2, "mem_gb": 1}},
        nodes={"count": 2},
        output="wide-%j.out",
    )
    done = cluster.wait_state(ok, "COMPLETED")
    node = next(iter(done["nodes"]))
    assert (root / f"berth-{ok}.out").read_text() == f"{ok} hello {node} 1 1\n{root}\n"
    assert (root / f"berth-{ok}.err").read_text() == "oops\n"
    assert done["exit_code"] == 0
    bad = cluster.wait_state(failed, "FAILED")
    assert bad["exit_code"] == 3
    assert bad["state_reason"] == "exited with status 3"
    signalled = cluster.wait_state(killed, "FAILED")
    assert signalled["exit_signal"] == 9
    assert signalled["exit_code"] is None
    timed_out = cluster.wait_state(overran, "TIMEOUT", seconds=30)
    assert timed_out["end_time"] - timed_out["start_time"] <= 4
    spread = cluster.wait_state(wide, "COMPLETED")
    assert sorted(spread["nodes"]) == ["n1", "n2"]
    assert (root / "wide.txt").read_text() == f"{','.join(spread['nodes'])} 2\n"
    assert (root / f"wide-{wide}.out").exists()


def test_cancel_kills_every_process_of_the_job(cluster: Cluster) -> None:
    cluster.add_agent("n1")
    pids = cluster.jobs_dir / "pids"
    job = cluster.submit(
        f"trap '' TERM; (trap '' TERM; sleep 120) & echo $! >> {pids}; "
        f"setsid sh -c 'echo $$ >> {pids}; exec sleep 120' & echo $$ >> {pids}; sleep 120"
    )
    wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 3, what="job forked")
    started = {int(p): start_ticks(int(p)) for p in pids.read_text().split()}
    answer = cluster.call("DELETE", f"/v1/jobs/{job}")
    assert answer.json()["job_state"] == "CANCELLED"
    wait_until(
        lambda: not any(alive(pid, ticks) for pid, ticks in started.items()),
        seconds=10,
        what="every process of the cancelled job gone",
    )
