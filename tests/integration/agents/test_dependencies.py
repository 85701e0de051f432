"""Dependencies on real agents: ``afterok`` runs after its predecessor succeeded and is
cancelled after it failed, ``afternotok`` the other way round, a batch script's
``#SBATCH --dependency`` line is honoured, and every dependent's guarantee is at or after
its predecessors' guaranteed ends; ``/start`` names the job it waits for."""

from __future__ import annotations

import json

from tests.integration.agents.cluster import Cluster


def _promised_end(job: dict[str, object]) -> int:
    start, limit = job["guaranteed_start"], job["time_limit"]
    assert isinstance(start, int)
    assert isinstance(limit, int)
    return start + limit


def test_afterok_runs_after_success_and_is_cancelled_after_failure(cluster: Cluster) -> None:
    cluster.add_agent("n1", "cpus=4,mem_gb=8")
    good = cluster.submit("sleep 2", time_limit=30)
    bad = cluster.submit("sleep 1; exit 3", time_limit=20)
    then = cluster.submit("echo then", time_limit=10, dependency=f"afterok:{good}")
    never = cluster.submit("echo never", time_limit=10, dependency=f"afterok:{bad}")
    instead = cluster.submit("echo instead", time_limit=10, dependency=f"afternotok:{bad}")
    both = cluster.submit("echo both", time_limit=10, dependency=f"afterany:{good}:{bad}")
    jobs = {i: cluster.job(i) for i in (good, bad, then, never, instead, both)}
    # Every dependent is promised no earlier than what it waits for is promised to end.
    assert jobs[then]["guaranteed_start"] >= _promised_end(jobs[good])
    assert jobs[instead]["guaranteed_start"] >= _promised_end(jobs[bad])
    assert jobs[both]["guaranteed_start"] >= max(
        _promised_end(jobs[good]), _promised_end(jobs[bad])
    )
    assert jobs[then]["job_state"] == "PENDING"
    waiting = cluster.call("GET", f"/v1/jobs/{then}/start").json()
    assert waiting["waits_for_job"] == good
    assert waiting["dependencies"][0]["kind"] == "afterok"

    assert cluster.wait_state(never, "CANCELLED")["state_reason"] == (
        f"its dependency afterok:{bad} can never be satisfied: job {bad} is failed"
    )
    for job_id, after in ((then, good), (instead, bad), (both, good)):
        done = cluster.wait_state(job_id, "COMPLETED", "FAILED", "CANCELLED", seconds=30)
        assert done["job_state"] == "COMPLETED", done
        assert done["start_time"] >= cluster.job(after)["end_time"]
    assert cluster.job(good)["job_state"] == "COMPLETED"


def test_a_scripts_sbatch_dependency_is_honoured(cluster: Cluster) -> None:
    cluster.add_agent("n1", "cpus=4,mem_gb=8")
    first = cluster.submit("sleep 1; echo first >> order.txt", time_limit=30)
    (cluster.jobs_dir / "second.sh").write_text(
        "#!/bin/sh\n"
        "#SBATCH -J second -t 1 -c 1 --mem=1G\n"
        f"#SBATCH --dependency=afterok:{first}\n"
        "echo second >> order.txt\n"
    )
    submitted = cluster.cli("submit", "--json", "second.sh")
    assert submitted.returncode == 0, submitted.stderr
    job = json.loads(submitted.stdout)["job"]
    assert job["dependency"] == f"afterok:{first}"
    done = cluster.wait_state(job["job_id"], "COMPLETED", "FAILED", seconds=30)
    assert done["job_state"] == "COMPLETED", done
    assert (cluster.jobs_dir / "order.txt").read_text() == "first\nsecond\n"
