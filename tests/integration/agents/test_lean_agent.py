"""The lean agent: ``pip install ./agent`` gives a ``berth-agent`` that installs, imports
and runs jobs with the standard library only.

The wheel is built from this checkout (hatchling, no build isolation: offline) and
installed into a bare venv that has no FastAPI, SQLAlchemy, psycopg, pydantic or httpx;
that agent then registers with a real daemon and runs a real job.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.integration.agents.cluster import Cluster

REPOSITORY = Path(__file__).resolve().parents[3]
SERVER_STACK = ("fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "psycopg",
                "pydantic", "httpx", "apscheduler", "tqdm")  # fmt: skip


@pytest.fixture(scope="module")
def lean_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with nothing but the ``berth-agent`` wheel of this checkout."""
    root = tmp_path_factory.mktemp("lean")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(root / "wheels"), str(REPOSITORY / "agent")],
        check=True, timeout=300,
    )  # fmt: skip
    venv.create(root / "venv", with_pip=False)
    python = root / "venv" / "bin" / "python"
    wheel = next((root / "wheels").glob("berth_agent-*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheel)],
        check=True, timeout=300,
    )  # fmt: skip
    return python


def test_the_lean_agent_has_none_of_the_servers_packages(lean_python: Path) -> None:
    probe = (
        "import importlib.util, sys\n"
        "import berth.agent.agent, berth.agent.cli, berth.agent.shepherd, berth.agent.launcher\n"
        f"stack = {SERVER_STACK!r}\n"
        "print([m for m in stack if importlib.util.find_spec(m) is not None])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in stack))\n"
    )
    done = subprocess.run(
        [str(lean_python), "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    installed, loaded = done.stdout.splitlines()
    assert installed == "[]"  # not even installable-by-accident: absent
    assert loaded == "[]"
    helped = subprocess.run(
        [str(lean_python.parent / "berth-agent"), "--help"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert "--no-cgroups" in helped.stdout
    adopting = subprocess.run(
        [str(lean_python.parent / "berth-adopt"), "--help"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert "PAM_USER" in adopting.stdout


def test_the_lean_agent_runs_a_job_for_the_daemon(cluster: Cluster, lean_python: Path) -> None:
    cluster.add_agent(
        "lean1", "cpus=2,mem_gb=4", program=(str(lean_python.parent / "berth-agent"),)
    )
    job = cluster.submit("echo from the lean agent", resources={"cpus": 1, "mem_gb": 1})
    done = cluster.wait_state(job, "COMPLETED", "FAILED", seconds=30)
    assert done["job_state"] == "COMPLETED", done
    assert done["nodes"] == {"lean1": {"cpus": 1, "mem_gb": 1}}
    assert (cluster.jobs_dir / f"berth-{job}.out").read_text() == "from the lean agent\n"
    assert done["usage"]["cpu_seconds"] >= 0
