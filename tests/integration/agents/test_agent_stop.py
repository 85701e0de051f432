"""An agent told to stop while the daemon holds its sync stops at once: it does not wait
out the hold (``--sync-wait``, up to 300 s), and says nothing of an unreachable daemon."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.integration.agents.cluster import Cluster


def test_a_stop_interrupts_the_held_sync(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, "--sync-wait", "300")  # (the last --sync-wait counts)
    try:
        agent = cluster.add_agent("n1", "cpus=2,mem_gb=2")
        assert cluster.submit("true", time_limit=60) == 1
        cluster.wait_state(1, "COMPLETED")  # (the agent has synced since: now it waits)
        assert agent.process is not None
        agent.process.terminate()
        # A hold of 300 s: an agent still in it after 60 s was not interrupted.
        assert agent.process.wait(timeout=60) == 0
        log = agent.log.read_text()
        assert "daemon unreachable" not in log, log
    except subprocess.TimeoutExpired:
        raise AssertionError("the agent waited out the daemon's held sync") from None
    finally:
        cluster.close()
