"""Gang scheduling on real agents: two CPU-bound jobs on one node take turns.

A gang partition of one 2-cpu node with 2-s slots gets two jobs that each want both
cpus; each job samples its own CPU time every 20 ms until it has used 6 s. The samples show
each job running in stretches of one slot, using CPU throughout, while the other gains
none: SIGSTOP and SIGCONT through the agent and the job's shepherd, not a scheduler that
merely says so.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from tests.integration.agents.cluster import Cluster

SLOT = 2
BURN = """
import sys, time
out = open(sys.argv[1], "w", buffering=1)
while time.process_time() < 6.0:
    t = time.time()
    while time.time() - t < 0.02:
        pass
    out.write(f"{time.time()} {time.process_time()}\\n")
"""


def stretches(samples: list[tuple[float, float]]) -> list[tuple[float, float, float]]:
    """The job's runs between suspensions: ``(start, end, cpu seconds used)``; a gap of
    more than 0.2 s between samples taken every 20 ms is a suspension."""
    runs, begin = [], samples[0]
    for before, after in itertools.pairwise(samples):
        if after[0] - before[0] > 0.2:
            runs.append((begin[0], before[0], before[1] - begin[1]))
            begin = after
    runs.append((begin[0], samples[-1][0], samples[-1][1] - begin[1]))
    return runs


def read(path: Path) -> list[tuple[float, float]]:
    samples = []
    for line in path.read_text().splitlines():
        wall, cpu = line.split()
        samples.append((float(wall), float(cpu)))
    return samples


def test_two_cpu_bound_jobs_on_one_node_alternate_slot_by_slot(cluster: Cluster) -> None:
    cluster.add_agent("n1", "cpus=2,mem_gb=4")
    cluster.gang_partition("g", ["n1"], SLOT)
    script = cluster.jobs_dir / "burn.py"
    script.write_text(BURN)
    jobs = [
        cluster.submit(
            f"exec python3 {script} {cluster.jobs_dir}/cpu-$BERTH_JOB_ID.txt",
            time_limit=30,
            resources={"cpus": 2, "mem_gb": 1},
            partition="g",
        )
        for _ in range(2)
    ]
    for job in jobs:
        done = cluster.wait_state(job, "COMPLETED", "FAILED", "TIMEOUT", seconds=60)
        assert done["job_state"] == "COMPLETED", done
        assert done["suspended_seconds"] >= SLOT  # it waited at least one slot for the other
    samples = {job: read(cluster.jobs_dir / f"cpu-{job}.txt") for job in jobs}
    runs = {job: stretches(samples[job]) for job in jobs}
    for job, other in (jobs, jobs[::-1]):
        # Every run but the first and the last is one whole slot of CPU.
        for start, end, cpu in runs[job][1:-1]:
            assert abs((end - start) - SLOT) < 0.5, runs[job]
            assert cpu > 0.5 * (end - start), runs[job]
        # While it runs, the other job takes no CPU (a few ms at each switch aside).
        for start, end, _ in runs[job]:
            inside = [c for w, c in samples[other] if start + 0.1 < w < end - 0.1]
            assert len(inside) < 2 or inside[-1] - inside[0] < 0.05, (start, end, inside)
    compared = sum(len(r) - 2 for r in runs.values())
    assert compared >= 3  # whole slots measured: each job ran in turns, not in one go
