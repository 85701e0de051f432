"""``make run`` (``berth serve --agents --demo``), the first command a newcomer types: the
daemon, two local agents and six real commands, each ending as the table says; Ctrl-C
then stops the daemon and both agents and leaves no process and no cgroup behind, and
so does a daemon killed outright (its agents stop with it)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

from berth.agent.cgroups import bases_of
from tests.integration.conftest import free_port
from tests.support.waiting import wait_until


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _start_demo(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    log = tmp_path / "demo.log"
    command = [sys.executable, "-m", "berth.runtime.main", "serve", "--agents", "--demo",
               "--data-dir", str(tmp_path / "cluster"), "--port", str(free_port())]  # fmt: skip
    with log.open("w") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT), log


def _idle(tmp_path: Path) -> bool:
    """Whether both agents have acknowledged every job's end and given back every share
    (a share of the two-node job is let go at the agent's next sync after its end)."""
    agents = tmp_path / "cluster" / "agents"
    held = [*agents.glob("local*/shares/*.json"), *agents.glob("local*/jobs/*")]
    return not held


def _agents_of(tmp_path: Path) -> list[int]:
    found = subprocess.run(["pgrep", "-f", "--", f"--workdir {tmp_path / 'cluster'}"],
                           capture_output=True, text=True, check=False)  # fmt: skip
    return [int(pid) for pid in found.stdout.split()]


def test_the_demo_runs_real_commands_and_ctrl_c_leaves_nothing(tmp_path: Path) -> None:
    daemon, log = _start_demo(tmp_path)
    agents: list[int] = []
    try:
        wait_until(lambda: "Ctrl-C stops" in log.read_text(), 90, "the demo's last line")
        wait_until(lambda: _idle(tmp_path), 20, "the agents done with every job")
        text = log.read_text()
        table = {m.group(2): m.group(3) for m in re.finditer(r"^\s+(\d+) (\S+)\s+([A-Z]+) ",
                                                             text, re.MULTILINE)}  # fmt: skip
        assert table == {
            "hello-1": "COMPLETED", "hello-2": "COMPLETED", "hello-3": "COMPLETED",
            "two-nodes": "COMPLETED", "fails": "FAILED", "too-long": "TIMEOUT",
        }, text  # fmt: skip
        assert "one command, nodes local" in text  # (its output, shown in the table)
        # What submit printed for each: where a running one started, or its guarantee.
        submitted = re.findall(r"^  job \d+ \S+\s+(RUNNING|PENDING)\s+(.*)$", text, re.MULTILINE)
        assert len(submitted) == 6, text
        for state, words in submitted:
            assert words.startswith("started" if state == "RUNNING" else "guaranteed start")
        agents += _agents_of(tmp_path)
        assert len(agents) == 2
    finally:
        daemon.send_signal(signal.SIGINT)
        daemon.wait(timeout=30)
    wait_until(lambda: not any(_alive(pid) for pid in agents), 10, "both agents gone")
    assert bases_of("local1") == []  # (no cgroup left)
    assert bases_of("local2") == []
    assert "Traceback" not in log.read_text()


def test_the_demo_agents_stop_with_a_daemon_killed_outright(tmp_path: Path) -> None:
    daemon, log = _start_demo(tmp_path)
    try:
        wait_until(lambda: "Ctrl-C stops" in log.read_text(), 90, "the demo's last line")
        wait_until(lambda: _idle(tmp_path), 20, "the agents done with every job")
        agents = _agents_of(tmp_path)
        assert len(agents) == 2
    finally:
        daemon.kill()  # (SIGKILL: no shutdown of its own stops them)
        daemon.wait(timeout=30)
    wait_until(lambda: not any(_alive(pid) for pid in agents), 15, "both agents gone")
    logs = [
        (tmp_path / "cluster" / "agents" / f"{name}.log").read_text()
        for name in ("local1", "local2")
    ]
    assert all("has ended: stopping" in text for text in logs), logs
    assert bases_of("local1") == []  # (no cgroup left)
    assert bases_of("local2") == []
