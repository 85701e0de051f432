"""Every node policy plans the same schedule on the C profile as on the Python one.

The C profile's answers are compared with the Python profile's one question at a time
in ``test_native_profile.py``; this replays whole random workloads through every
policy that plans on named nodes (FCFS, EASY, conservative, slack, QoPS, MSB, MRT, with
each selection) three times: on C profiles with the node search and booking in C, on
C profiles with them in Python, and on Python profiles (with the Python ones), with the
blocks of nodes both on and off, and asks for the same starts, guarantees and nodes:
neither the one place where the two profiles' answers may differ by design (when a
count may change next) nor the C search and booking may move a plan.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.policies.node_registry import make_node_policy
from berth.core.policies.node_schedule import NODE_POLICIES
from berth.core.profile import NATIVE
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from tests.profile_classes import python_profiles, python_search
from tests.property.test_node_blocks import _replay, blocky_workloads
from tests.property.test_node_planner import node_clusters, node_jobs

pytestmark = pytest.mark.skipif(
    not NATIVE, reason="the C profile is not built (tools/build_native.py) or BERTH_NATIVE=0"
)


#: The policies with a backfill selection rule (first fit, BL, BB).
SELECTING = ("conservative", "easy", "slack")


def _schedule(records: list[JobRecord]) -> list[tuple[object, ...]]:
    return [
        (r.id, r.start, r.end, r.guarantee, r.status, r.nodes, r.promised_completion)
        for r in records
    ]


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    policy=st.sampled_from(sorted(NODE_POLICIES)),
    rule=st.sampled_from(["ff", "bl", "bb"]),
)
def test_every_node_policy_plans_alike_on_both_profiles(
    data: st.DataObject, policy: str, rule: str
) -> None:
    nodes = data.draw(node_clusters())
    jobs = data.draw(node_jobs(nodes, 12))
    options = {"selection": rule} if policy in SELECTING else {}
    on_c = replay(jobs, make_node_policy(policy, nodes, None, **options))
    with python_search():
        searched_in_python = replay(jobs, make_node_policy(policy, nodes, None, **options))
    with python_profiles():
        on_python = replay(jobs, make_node_policy(policy, nodes, None, **options))
    assert _schedule(on_c) == _schedule(searched_in_python) == _schedule(on_python)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), policy=st.sampled_from(sorted(NODE_POLICIES)))
def test_blocks_of_nodes_plan_alike_on_both_profiles(data: st.DataObject, policy: str) -> None:
    nodes, jobs = data.draw(blocky_workloads())
    on_c = _replay(jobs, policy, nodes, blocks_from=1)
    with python_search():
        searched_in_python = _replay(jobs, policy, nodes, blocks_from=1)
    with python_profiles():
        on_python = _replay(jobs, policy, nodes, blocks_from=1)
    assert _schedule(on_c) == _schedule(searched_in_python) == _schedule(on_python)
