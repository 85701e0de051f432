"""Batch scripts on real agents: ``berth submit job.sh args`` with ``#SBATCH`` lines
runs the script itself, with the shape, name, limits and environment its directives
ask for, as the job's account."""

from __future__ import annotations

import json
import subprocess

from tests.integration.agents.cluster import Cluster

SCRIPT = """#!/bin/bash
#SBATCH -J sim
#SBATCH -t 1
#SBATCH -N 1 --ntasks-per-node=2 -c 1 --mem=2G
#SBATCH -o sim-%j.out
echo "args: $1|$2|$#"
echo "name $BERTH_JOB_NAME cpus $BERTH_CPUS_ON_NODE nodes $BERTH_NUM_NODES as $(id -un)"
echo "bash ${BASH_VERSION:+yes}"
"""


def _berth(cluster: Cluster, *words: str) -> subprocess.CompletedProcess[str]:
    return cluster.cli(*words)


def test_a_script_with_sbatch_lines_runs_with_its_shape_and_environment(
    cluster: Cluster,
) -> None:
    cluster.add_agent("n1", "cpus=4,mem_gb=8")
    script = cluster.jobs_dir / "sim.sh"
    script.write_text(SCRIPT)
    submitted = _berth(cluster, "submit", "--json", "sim.sh", "a b", "c")
    assert submitted.returncode == 0, submitted.stderr
    job_id = json.loads(submitted.stdout)["job"]["job_id"]
    done = cluster.wait_state(job_id, "COMPLETED", "FAILED", seconds=30)
    assert done["job_state"] == "COMPLETED", done
    assert done["name"] == "sim"
    assert done["time_limit"] == 60  # -t 1: one minute, as in Slurm
    assert done["resources"] == {"cpus": 2, "mem_gb": 2}
    assert done["slots"] == {"count": 2, "per_slot": {"cpus": 1, "mem_gb": 1}, "nodes": 1,
                             "exclusive": False}  # fmt: skip
    assert done["batch_script"] is True
    assert done["argv"] == ["a b", "c"]
    output = (cluster.jobs_dir / f"sim-{job_id}.out").read_text().splitlines()
    assert output == ["args: a b|c|2", "name sim cpus 2 nodes 1 as nobody", "bash yes"]
    stored = cluster.call("GET", f"/v1/jobs/{job_id}/script")
    assert stored.status_code == 200
    assert stored.text == SCRIPT


def test_the_command_line_wins_over_the_scripts_directives(cluster: Cluster) -> None:
    cluster.add_agent("n1", "cpus=4,mem_gb=8")
    (cluster.jobs_dir / "quick.sh").write_text("#!/bin/sh\n#BERTH -t 30 -r cpus=1\necho $0\n")
    submitted = _berth(cluster, "submit", "--json", "-t", "1:00", "-J", "over", "quick.sh")
    assert submitted.returncode == 0, submitted.stderr
    job = json.loads(submitted.stdout)["job"]
    assert (job["name"], job["time_limit"], job["resources"]) == ("over", 60, {"cpus": 1})
    assert cluster.wait_state(job["job_id"], "COMPLETED", seconds=30)["argv"] == []


def test_bad_scripts_are_refused_before_anything_is_submitted(cluster: Cluster) -> None:
    (cluster.jobs_dir / "plain.sh").write_text("echo no interpreter line\n")
    refused = _berth(cluster, "submit", "-t", "60", "-r", "cpus=1", "plain.sh")
    assert refused.returncode != 0
    assert "must start with #!" in refused.stderr
    (cluster.jobs_dir / "mail.sh").write_text("#!/bin/sh\n#SBATCH --mail-type=END\ntrue\n")
    refused = _berth(cluster, "submit", "-t", "60", "-r", "cpus=1", "mail.sh")
    assert "line 2: #SBATCH directive --mail-type=END is not supported" in refused.stderr
    body = {"resources": {"cpus": 1}, "time_limit": 60}
    for extra, field in (
        ({"script": "echo hi"}, "script"),
        ({"script": "#!/bin/sh\ntrue", "command": "true"}, "script"),
        ({"argv": ["x"]}, "argv"),
    ):
        answer = cluster.call("POST", "/v1/jobs", json={**body, **extra})
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == field
    answer = cluster.call("POST", "/v1/jobs", json={**body, "script": "#!" + "x" * 70_000})
    assert answer.status_code == 422
    assert "65536" in answer.text
