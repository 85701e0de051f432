"""The policy a daemon starts with: checked even before any node exists, kept from the
database on later starts (and said so when the settings name another), and a stored
policy this version refuses is named as the database's."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from berth.core.policies.node_deadline import NodeDeadline
from berth.dispatch.emulated import EmulatedNodes
from berth.runtime.serve import stored_policy_note
from berth.runtime.settings import load_settings
from berth.service.coordinator import Coordinator
from berth.service.nodes.cluster import Cluster
from berth.service.planning.replan import build_policy
from berth.service.ports import Snapshot
from berth.service.restore import restore_engine
from berth.store.memory import MemoryStore
from tests.support.live import ManualClock, nodes


@pytest.mark.parametrize(
    ("policy", "options", "problem"),
    [
        ("qopz", {}, "unknown policy 'qopz'"),
        ("qops", {"k_factr": 3}, "does not take 'k_factr'"),
        ("easy", {"selection": "bx"}, "selection must be one of ff, bl, bb"),
        # (Settings files and the environment give strings: no TypeError from a comparison.)
        ("qops", {"k_factor": "x"}, "k_factor must be a whole number >= 0, got 'x'"),
        ("mrt", {"max_backtracks": True}, "max_backtracks must be a whole number >= 0"),
        ("msb", {"relaxation": "soon"}, "relaxation factor R must be a number, got 'soon'"),
        ("msb", {"relaxation": "nan"}, "relaxation factor R must be in (0.0, 1e+06], got 'nan'"),
        ("qops", {"relaxation": float("inf")}, "R must be in (0.0, 1e+06], got inf"),
        ("slack", {"slack_factor": float("inf")}, "slack_factor x awt (the largest initial"),
        ("slack", {"awt": "1e300"}, "must be at most 1e+12 s, got 3e+300"),
        ("slack", {"alpha_u": True}, "alpha_u must be a number, got True"),
        ("slack", {"alpha_f": [1]}, "alpha_f must be a number, got [1]"),
    ],
)
def test_a_cluster_with_no_node_yet_still_refuses_a_bad_policy(
    policy: str, options: dict[str, object], problem: str
) -> None:
    """A daemon on agents starts with no node: it used to keep any policy until the
    first agent registered (and store it, so that every later start failed)."""
    with pytest.raises(ValueError, match=re.escape(problem)):
        build_policy(Cluster([]), policy, options)
    assert build_policy(Cluster([]), "qops", {"k_factor": 3}).name == "none"  # (waits)


def test_numeric_options_given_as_strings_are_read_as_numbers() -> None:
    policy = build_policy(Cluster(nodes(2)), "qops", {"k_factor": "3", "relaxation": "2.5"})
    assert isinstance(policy, NodeDeadline)
    assert (policy.admission.k_factor, policy.rules.relaxation) == (3, 2.5)


def test_a_later_start_keeps_the_stored_policy_and_says_so(tmp_path: Path) -> None:
    store = MemoryStore()
    engine = restore_engine(store.load(), EmulatedNodes(), 0, nodes(2), "easy", {})

    async def first_life() -> None:
        coordinator = Coordinator(engine, store, ManualClock(0))
        await coordinator.start()  # (commits the fresh database's configuration)
        await coordinator.stop()

    asyncio.run(first_life())
    settings = load_settings(data_dir=tmp_path, policy="qops", policy_options={"k_factor": 2})
    again = restore_engine(store.load(), EmulatedNodes(), 0, [], "qops", {"k_factor": 2})
    stored = again.partitions.policy_name, again.partitions.policy_options
    assert stored == ("easy", {})
    assert stored_policy_note(settings, *stored) == (
        "policy: the database's easy is kept; the settings' qops {'k_factor': 2} applies to"
        " a fresh database only (change it with `berth partition set default --policy P`)"
    )
    same = load_settings(data_dir=tmp_path, policy="easy")
    assert stored_policy_note(same, *stored) is None


def test_a_stored_policy_this_version_refuses_is_named_as_the_databases() -> None:
    snapshot = Snapshot(nodes=list(nodes(2)), config={"policy": "qopz", "policy_options": {}})
    with pytest.raises(ValueError, match="the database's policy 'qopz': unknown policy"):
        restore_engine(snapshot, EmulatedNodes(), 0, [], "easy", {})
