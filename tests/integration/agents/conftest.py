"""The agents' tests share one fixture: a fresh daemon with agents, closed after, and
no cgroup of its agents left behind (where the agents could make them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.agent.cgroups import bases_of
from tests.integration.agents.cluster import Cluster


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    made = Cluster(tmp_path)
    try:
        yield made
    finally:
        made.close()
        assert made.leaked_cgroups == [], "ended jobs' cgroups left behind"
        for name in made.agents:
            assert bases_of(name) == [], f"cgroups of agent {name} left behind"
