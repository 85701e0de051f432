"""The deploy files, checked statically: there is no container engine here (the
``docker`` client has no daemon and no compose plugin), so the compose file is parsed
and its commands run through Berth's own argument parser, the Dockerfile is read for
its stages, user, health check and copied paths, and the systemd units (the daemon, the
node agent, the login node's authd) are verified with ``systemd-analyze verify`` where
it exists."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from berth.runtime.main import build_parser

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"


def test_the_compose_file_runs_two_ha_daemons_and_three_agents_on_postgresql() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "berth-1", "berth-2", "agent-1", "agent-2", "agent-3"}
    assert services["postgres"]["healthcheck"]["test"][1] == "pg_isready"
    parser = build_parser()
    daemons = []
    for name in ("berth-1", "berth-2"):
        args = parser.parse_args(services[name]["command"])
        assert args.command == "serve"
        assert args.ha
        assert args.backend == "agents"
        assert args.database_url.startswith("postgresql://berth:")
        assert args.database_url.endswith("@postgres/berth")
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert services[name]["build"]["dockerfile"] == "deploy/Dockerfile"
        daemons.append(f"http://{name}:8080")
    tokens = services["berth-1"]["environment"]["BERTH_TOKENS"]
    for index in (1, 2, 3):
        agent = services[f"agent-{index}"]
        args = parser.parse_args(agent["command"])
        assert args.command == "agent"
        assert args.url.split(",") == daemons  # both daemons: it follows a failover
        token = agent["environment"]["BERTH_AGENT_TOKEN"]
        assert f"{token}:{args.name}:node" in tokens
    example = (DEPLOY / "compose.env.example").read_text()
    used = set(re.findall(r"\$\{(\w+)\}", (DEPLOY / "compose.yaml").read_text()))
    assert used <= set(re.findall(r"^(\w+)=", example, re.MULTILINE))


def test_the_dockerfile_builds_in_two_stages_and_runs_unprivileged() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert len(re.findall(r"^FROM ", text, re.MULTILINE)) == 2
    users = re.findall(r"^USER (\S+)", text, re.MULTILINE)
    assert users
    assert users[-1] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*\n.*healthz", text, re.MULTILINE)
    for source in re.findall(r"^COPY (?!--from)(\S+)", text, re.MULTILINE):
        assert (ROOT / source).exists(), source
    entry = re.search(r'^ENTRYPOINT \["(\w+)"\]', text, re.MULTILINE)
    assert entry is not None
    assert entry.group(1) == "berth"


@pytest.mark.parametrize("unit", ["berth.service", "berth-agent.service", "berth-authd.service"])
def test_the_systemd_units_verify(unit: str, tmp_path: Path) -> None:
    text = (DEPLOY / unit).read_text()
    exec_start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    program, *argv = exec_start.removeprefix("ExecStart=").split()
    if program.endswith("/berth-agent"):
        argv = ["agent", *argv]  # the lean agent's command takes `berth agent`'s flags
    args = build_parser().parse_args(argv)
    assert args.command in ("serve", "agent", "authd")
    assert "Restart=always" in text.splitlines()
    if unit != "berth-agent.service":  # the agent needs root's reach for its jobs' cgroups
        for option in ("NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes"):
            assert option in text.splitlines()
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here")
    bin_dir = Path(shutil.which("berth") or ROOT / ".venv" / "bin" / "berth").parent
    local = tmp_path / unit
    local.write_text(text.replace("/opt/berth/venv/bin", str(bin_dir)))
    checked = subprocess.run([analyze, "verify", str(local)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
