"""A node's share of a job run by another node, in real cgroups: held, adopted into,
frozen and thawed with the job, released with whatever was adopted. Skips without
cgroups an agent can write (root here, v1)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from berth.agent import adopt, cgroups
from berth.agent.proc import alive, start_ticks
from berth.agent.shares import Share, Shares

PROBE = cgroups.probe("shares-test")
pytestmark = pytest.mark.skipif(PROBE.layout is None, reason=f"no cgroups: {PROBE.reason}")


def _ticks(path: Path) -> int:
    return len(path.read_text().split()) if path.exists() else 0


def test_a_share_is_frozen_and_thawed_with_its_job_and_released_with_what_joined_it(
    tmp_path: Path,
) -> None:
    layout = PROBE.layout
    assert layout is not None
    key = "7.0"
    shares = Shares(tmp_path)
    limits = {"cores": [layout.cores[0]], "memory_bytes": 2**30, "pids_max": 64}
    shares.hold(key, Share(7, 0, "nobody", (), (layout.cores[0],),
                           layout.spec(key, cpu=False), limits))  # fmt: skip
    ticks = tmp_path / "ticks"
    ticker = subprocess.Popen(["sh", "-c", f"while :; do echo x >> {ticks}; sleep 0.02; done"])
    try:
        born = start_ticks(ticker.pid)
        assert adopt.main(["--workdir", str(tmp_path), "--user", "nobody",
                           "--pid", str(ticker.pid)]) == 0  # fmt: skip
        assert adopt.main(["--workdir", str(tmp_path), "--user", "nobody", "--job", "8",
                           "--pid", str(ticker.pid)]) == 1  # fmt: skip
        held = shares.held[key].cgroup
        assert held is not None
        cpuset = held["dirs"].get("cpuset") or held["dirs"]["unified"]
        assert str(ticker.pid) in Path(cpuset, "cgroup.procs").read_text().split()
        assert Shares(tmp_path).held[key].cores == (layout.cores[0],)  # kept on disk
        time.sleep(0.2)
        shares.suspend(key, True)
        frozen_at = _ticks(ticks)
        time.sleep(0.5)  # 25 ticks if it still ran
        assert _ticks(ticks) <= frozen_at + 1
        assert Shares(tmp_path).held[key].suspended
        shares.suspend(key, False)
        time.sleep(0.3)
        assert _ticks(ticks) > frozen_at + 3
        shares.release(key)
        assert ticker.wait(timeout=10) == -9
        assert not alive(ticker.pid, born)
        assert not any(os.path.exists(d) for d in held["dirs"].values())
        assert Shares(tmp_path).holding() == []
    finally:
        ticker.kill()
        ticker.wait()
        cgroups.release(layout)
