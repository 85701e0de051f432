"""Hypothesis: the node planner's placements are real, on random node clusters and
node-shaped jobs, under fcfs, easy and conservative:

* no node is ever over-committed in any resource;
* no slot is split: each node holds a whole number of slots (or, exclusive, the node);
* a job that asks for N nodes gets N distinct nodes, and all its slots;
* conservative never starts a job after its guarantee; every admitted job runs;
* what the policy says is free now is what its running jobs leave.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.core.decisions import Start
from berth.core.model import Job
from berth.core.policies.node_registry import make_node_policy
from berth.core.policies.node_schedule import NODE_POLICIES
from berth.core.policies.nodes import NodeBackfill
from berth.core.shapes import Shape
from berth.emulate.records import JobRecord
from berth.emulate.replay import replay
from berth.emulate.workload import TraceJob

RESOURCES = ("cpus", "mem", "gpus")


@st.composite
def node_clusters(draw: st.DrawFn) -> dict[str, dict[str, int]]:
    count = draw(st.integers(1, 4))
    k = draw(st.integers(1, 3))
    return {
        f"n{i}": {name: draw(st.integers(1, 4)) for name in RESOURCES[:k]} for i in range(count)
    }


@st.composite
def node_jobs(draw: st.DrawFn, nodes: dict[str, dict[str, int]], most: int = 10) -> list[TraceJob]:
    names = sorted({name for amounts in nodes.values() for name in amounts})
    jobs = []
    for job_id in range(1, draw(st.integers(1, most)) + 1):
        per_slot = {name: draw(st.integers(0, 3)) for name in names}
        per_slot[names[0]] = max(per_slot[names[0]], 1)
        count = draw(st.integers(1, 4))
        shape = Shape(
            count=count,
            per_slot=per_slot,
            nodes=draw(st.one_of(st.none(), st.integers(1, count))),
            exclusive=draw(st.booleans()),
        )
        estimate = draw(st.integers(1, 8))
        job = Job(job_id, draw(st.integers(0, 10)), estimate, {}, shape=shape)
        jobs.append(TraceJob(job, draw(st.integers(1, 10))))
    return sorted(jobs, key=lambda t: (t.job.submit, t.job.id))


def check(records: list[JobRecord], jobs: list[TraceJob], nodes: dict[str, dict[str, int]],
          policy: str) -> None:  # fmt: skip
    shapes = {t.job.id: t.job.shape for t in jobs}
    ran = [r for r in records if r.status != "rejected"]
    for record in ran:
        assert record.start is not None, record
        assert record.end is not None, record
        assert record.nodes, record
        shape = shapes[record.id]
        assert shape is not None
        slots = 0
        for node, held in record.nodes.items():
            if shape.exclusive:
                assert held == {n: a for n, a in nodes[node].items() if a}, (record, node)
                fitting = min(nodes[node][n] // a for n, a in shape.per_slot.items() if a)
                slots += fitting
                continue
            per = {n: a for n, a in shape.per_slot.items() if a}
            ratio = {held.get(n, 0) // a for n, a in per.items()}
            assert len(ratio) == 1, (record, node)  # whole slots: same multiple everywhere
            k = ratio.pop()
            assert k >= 1, (record, node)
            assert held == {n: k * a for n, a in per.items()}, (record, node)
            slots += k
        assert slots >= shape.count
        if shape.nodes is not None:
            assert len(record.nodes) == shape.nodes, record
        if policy == "conservative":
            assert record.guarantee is not None
            assert record.start <= record.guarantee
    for moment in {r.start for r in ran if r.start is not None}:
        use: dict[tuple[str, str], int] = {}
        for r in ran:
            assert r.start is not None
            assert r.end is not None
            assert r.nodes is not None
            if r.start <= moment < r.end:
                for node, held in r.nodes.items():
                    for name, amount in held.items():
                        use[(node, name)] = use.get((node, name), 0) + amount
        for (node, name), amount in use.items():
            assert amount <= nodes[node][name], (moment, node, name, amount)


def checking_free(policy: NodeBackfill) -> NodeBackfill:
    """``policy``, asserting after each pass that what it says is free (kept as jobs
    start and end) is the nodes' capacity less what its running jobs hold."""
    schedule = policy.schedule

    def checked(now: int) -> list[Start]:
        started = schedule(now)
        held = sum(sum((e.held or {}).values()) for e in policy.running.values())
        assert policy.free == sum(policy.plan.capacities) - held
        return started

    policy.schedule = checked  # type: ignore[method-assign]
    return policy


@settings(max_examples=150, deadline=None)
@given(data=st.data(), policy=st.sampled_from(sorted(NODE_POLICIES)))
def test_placements_are_real(data: st.DataObject, policy: str) -> None:
    nodes = data.draw(node_clusters())
    jobs = data.draw(node_jobs(nodes))
    records = replay(jobs, checking_free(make_node_policy(policy, nodes)))
    check(records, jobs, nodes, policy)


@st.composite
def identical_clusters(draw: st.DrawFn) -> dict[str, dict[str, int]]:
    amounts = {name: draw(st.integers(1, 3)) for name in RESOURCES[: draw(st.integers(1, 2))]}
    return {f"n{i}": dict(amounts) for i in range(draw(st.integers(1, 5)))}


@st.composite
def whole_node_jobs(
    draw: st.DrawFn, nodes: dict[str, dict[str, int]], most: int = 12
) -> list[TraceJob]:
    """Mostly jobs that take whole nodes (exclusive, or slots that fill a node), now and
    then one that shares a node (which ends the counting)."""
    node = next(iter(nodes.values()))
    jobs = []
    for job_id in range(1, draw(st.integers(1, most)) + 1):
        kind = draw(st.sampled_from(["exclusive", "fill", "fill", "share"]))
        count = draw(st.integers(1, len(nodes)))
        if kind == "fill":
            shape = Shape(count, dict(node))
        elif kind == "exclusive":
            shape = Shape(count, dict.fromkeys(node, 1), exclusive=True)
        else:
            shape = Shape(1, dict.fromkeys(node, 1))
        estimate = draw(st.integers(1, 8))
        job = Job(job_id, draw(st.integers(0, 10)), estimate, {}, shape=shape)
        jobs.append(TraceJob(job, draw(st.integers(1, 10))))
    return sorted(jobs, key=lambda t: (t.job.submit, t.job.id))


@settings(max_examples=150, deadline=None)
@given(data=st.data(), policy=st.sampled_from(sorted(NODE_POLICIES)))
def test_counted_identical_nodes_place_for_real(data: st.DataObject, policy: str) -> None:
    """Identical nodes are planned by counting until a job shares a node: the
    placements named at start are as real as the named plan's."""
    nodes = data.draw(identical_clusters())
    jobs = data.draw(whole_node_jobs(nodes))
    records = replay(jobs, checking_free(make_node_policy(policy, nodes)))
    check(records, jobs, nodes, policy)


class WholePasses(NodeBackfill):
    """Compression without skipping anyone: every job asked in every pass."""

    def _compress(self, now: int, stop: Callable[[], bool] | None = None) -> bool:
        moved = True
        while moved:
            moved = False
            for entry in self.waiting.values():
                if entry.start is None:
                    continue
                first: int | None = now
                if entry.need is not None:
                    summed, total = entry.need
                    first = summed.earliest_start(total, entry.job.estimate, now, entry.start)
                if first is not None and self._move_earlier(entry, first):
                    moved = True
        return True  # (whole, never sliced)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), identical=st.booleans())
def test_compression_skips_only_jobs_that_could_not_move(
    data: st.DataObject, identical: bool
) -> None:
    """The room log lets compression skip jobs; the plan is the one whole passes give."""
    nodes = data.draw(identical_clusters() if identical else node_clusters())
    jobs = data.draw(whole_node_jobs(nodes, 40) if identical else node_jobs(nodes, 40))
    fast = replay(jobs, make_node_policy("conservative", nodes))
    slow = replay(jobs, WholePasses("conservative", nodes))
    assert [(r.id, r.start, r.guarantee, r.nodes) for r in fast] == [
        (r.id, r.start, r.guarantee, r.nodes) for r in slow
    ]


def test_a_slot_never_spans_nodes() -> None:
    """Two 4-cpu nodes with 2 cpus free each: a 4-cpu slot waits, though 4 are free."""
    nodes = {"a": {"cpus": 4}, "b": {"cpus": 4}}
    jobs = [
        TraceJob(Job(1, 0, 10, {}, shape=Shape(2, {"cpus": 1}, nodes=2)), 10),
        TraceJob(Job(2, 0, 10, {}, shape=Shape(2, {"cpus": 1}, nodes=2)), 10),
        TraceJob(Job(3, 1, 5, {}, shape=Shape(1, {"cpus": 4})), 5),
    ]
    records = {r.id: r for r in replay(jobs, make_node_policy("conservative", nodes))}
    assert records[1].nodes == {"a": {"cpus": 1}, "b": {"cpus": 1}}
    assert records[3].start == 10  # a pool of 8 cpus would have started it at 1


def test_a_shape_no_node_can_hold_is_refused_naming_the_field() -> None:
    nodes = {"a": {"cpus": 4, "gpus": 1}, "b": {"cpus": 4}}
    policy = make_node_policy("conservative", nodes)
    too_wide = policy.submit(Job(1, 0, 10, {}, shape=Shape(1, {"cpus": 5})), 0)
    too_many = policy.submit(Job(2, 0, 10, {}, shape=Shape(2, {"gpus": 1}, nodes=2)), 0)
    assert too_wide is not None
    assert "slots.per_slot" in getattr(too_wide, "reason", "")
    assert too_many is not None
    assert "nodes.count" in getattr(too_many, "reason", "")


@pytest.mark.parametrize(
    ("walk", "walks", "python"),
    [(None, None, False), (None, None, True), (1, None, True), (None, 0.0, True)],
)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_earliest_start_is_the_first_candidate_that_fits(
    walk: int | None, walks: float | None, python: bool, data: st.DataObject
) -> None:
    """The search that carries each node's answer from one candidate start to the next
    finds what trying every candidate (``after`` and each reservation end) in turn
    with :meth:`NodePlan.place` finds; also when each node's walk to a run of room long
    enough stops after ``walk`` steps (it answers a start no later, and is asked again),
    and when a node indexes its runs of room as soon as a walk passes a run too short
    (``walks`` 0: exact answers from the index). With the C profile where built, and
    with the Python one (``python``), whose walks the other cases steer."""
    from berth.core.profile import PythonProfile
    from tests.profile_classes import python_profiles
    from tests.unit.core.test_profile import runs_indexed_after

    if not python:
        _earliest_is_the_first_fit(data)
        return
    whole = PythonProfile._LONG_WALK_STEPS
    PythonProfile._LONG_WALK_STEPS = walk or whole
    try:
        with (
            python_profiles(),
            runs_indexed_after(PythonProfile._WALKS_BEFORE_RUNS if walks is None else walks),
        ):
            _earliest_is_the_first_fit(data)
    finally:
        PythonProfile._LONG_WALK_STEPS = whole


def _earliest_is_the_first_fit(data: st.DataObject) -> None:
    from berth.core.nodes import NodePlan
    from berth.core.resources import ResourceSpace

    nodes = data.draw(node_clusters())
    names = sorted({name for amounts in nodes.values() for name in amounts})
    space = ResourceSpace({n: max(a.get(n, 0) for a in nodes.values()) for n in names})
    plan = NodePlan(space, [space.pack(amounts) for amounts in nodes.values()], 0)

    def shapes() -> st.SearchStrategy[Shape]:
        return st.builds(
            Shape,
            count=st.integers(1, 4),
            per_slot=st.fixed_dictionaries({n: st.integers(0, 2) for n in names}).map(
                lambda d: {**d, names[0]: max(d[names[0]], 1)}
            ),
        )

    for _ in range(data.draw(st.integers(0, 8))):
        shape = data.draw(shapes())
        demand = space.pack(dict(shape.per_slot))
        duration = data.draw(st.integers(1, 6))
        found = plan.earliest(shape, demand, duration, data.draw(st.integers(0, 6)))
        if found is not None:
            start, placement = found
            plan.reserve(plan.held(placement, demand, False), start, duration)
    shape = data.draw(shapes())
    demand = space.pack(dict(shape.per_slot))
    duration = data.draw(st.integers(1, 8))
    after = data.draw(st.integers(0, 10))
    candidates = sorted({after, *(end for end in plan._ends if end > after)})
    expected = next(
        (
            (start, fitting)
            for start in candidates
            if (fitting := plan.place(shape, demand, start, duration)) is not None
        ),
        None,
    )
    assert plan.earliest(shape, demand, duration, after) == expected


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_summed_profiles_of_able_nodes_stay_the_sum_of_their_nodes(
    data: st.DataObject,
) -> None:
    """A slot only some nodes can hold is filtered by those nodes' summed profile, kept
    up to date by every reservation, release and forgetting after it was built: at every
    time from now on it holds what their own profiles hold together."""
    from berth.core.nodes import NodePlan
    from berth.core.profile_sets import summed
    from berth.core.resources import ResourceSpace

    nodes = data.draw(node_clusters())
    names = sorted({name for amounts in nodes.values() for name in amounts})
    space = ResourceSpace({n: max(a.get(n, 0) for a in nodes.values()) for n in names})
    plan = NodePlan(space, [space.pack(amounts) for amounts in nodes.values()], 0)
    held: list[tuple[dict[int, int], int, int]] = []
    now = 0
    for _ in range(data.draw(st.integers(1, 12))):
        step = data.draw(st.sampled_from(("reserve", "release", "forget")))
        if step == "release" and held:
            amounts, start, duration = held.pop(data.draw(st.integers(0, len(held) - 1)))
            left = start + duration - max(start, now)
            if left > 0:
                plan.release(amounts, max(start, now), left)
        elif step == "forget":
            now += data.draw(st.integers(0, 3))
            plan.forget_before(now)
        else:
            per_slot = {n: data.draw(st.integers(0, 2)) for n in names}
            per_slot[names[0]] = max(per_slot[names[0]], 1)
            shape = Shape(count=data.draw(st.integers(1, 3)), per_slot=per_slot)
            demand = space.pack(per_slot)
            duration = data.draw(st.integers(1, 6))
            found = plan.earliest(shape, demand, duration, now + data.draw(st.integers(0, 4)))
            if found is not None:
                amounts = plan.held(found[1], demand, False)
                plan.reserve(amounts, found[0], duration)
                held.append((amounts, found[0], duration))
    for able, kept in plan._groups.items():
        expected = summed([plan.profiles[i] for i in able])
        times = {t for t, _ in kept.steps() + expected.steps() if t >= now} | {now}
        assert all(kept.free_at(t) == expected.free_at(t) for t in times), able


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    policy=st.sampled_from(["easy", "conservative"]),
    rule=st.sampled_from(["bl", "bb"]),
)
def test_balanced_selection_places_for_real(data: st.DataObject, policy: str, rule: str) -> None:
    """BL and BB on nodes choose among real placements: nothing over-committed, whole
    slots, and conservative never starts a job after its guarantee."""
    nodes = data.draw(node_clusters())
    jobs = data.draw(node_jobs(nodes))
    records = replay(jobs, make_node_policy(policy, nodes, None, selection=rule))
    check(records, jobs, nodes, policy)


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    policy=st.sampled_from(["easy", "conservative"]),
    rule=st.sampled_from(["bl", "bb"]),
)
def test_balanced_selection_on_one_cpu_nodes_is_the_pools(
    data: st.DataObject, policy: str, rule: str
) -> None:
    """One-cpu nodes, jobs given as cpus: BL and BB start every job when the pool's do
    (exact estimates: conservative's compression passes differ only after early ends)."""
    import dataclasses

    from berth.core.policies import make_policy
    from berth.core.resources import ResourceSpace
    from tests.property.strategies import workloads

    cpus = data.draw(st.integers(1, 6))
    capacity = {"cpus": cpus}
    jobs = [
        TraceJob(dataclasses.replace(t.job), t.runtime if policy == "easy" else t.job.estimate)
        for t in data.draw(workloads(capacity, max_jobs=12, max_time=10))
    ]
    pool = replay(jobs, make_policy(policy, ResourceSpace(capacity), selection=rule))
    nodes = {f"n{i}": {"cpus": 1} for i in range(cpus)}
    on_nodes = replay(jobs, make_node_policy(policy, nodes, None, selection=rule))
    assert [(r.id, r.status, r.start) for r in on_nodes] == [
        (r.id, r.status, r.start) for r in pool
    ]


@settings(max_examples=100, deadline=None)
@given(data=st.data(), many=st.booleans())
def test_a_plan_of_running_jobs_is_searched_at_one_instant_as_over_windows(
    data: st.DataObject, many: bool
) -> None:
    """EASY's and FCFS's plans hold running jobs only when a start is searched, so free
    room only grows: counting slots at each candidate's first instant
    (``grows_only``) finds the start and placement the search over whole windows
    finds, on a few nodes and on enough for blocks; also when between two searches
    jobs end early, start and time goes on (what the plan knew of a node's slots
    from the search before holds only while the node has not changed)."""
    from berth.core.node_blocks import BLOCKS_FROM
    from berth.core.nodes import NodePlan
    from berth.core.resources import ResourceSpace

    space = ResourceSpace({"cpus": 4, "mem": 4})
    count = data.draw(st.integers(BLOCKS_FROM, BLOCKS_FROM + 20) if many else st.integers(1, 5))
    capacities = [
        space.pack({"cpus": data.draw(st.integers(1, 4)), "mem": data.draw(st.integers(1, 4))})
        for _ in range(count)
    ]
    plan = NodePlan(space, capacities, 0)
    now = data.draw(st.integers(0, 3))
    running: list[tuple[dict[int, int], int]] = []  # (held, end)

    def start_some() -> None:  # running jobs: from now on
        for _ in range(data.draw(st.integers(0, 3 * count))):
            node = data.draw(st.integers(0, count - 1))
            amounts = space.unpack(capacities[node])
            held = space.pack({n: data.draw(st.integers(0, a)) for n, a in amounts.items()})
            if held and plan.profiles[node].fits_during(held, now, 1 << 20):
                duration = data.draw(st.integers(1, 12))
                plan.reserve({node: held}, now, duration)
                running.append(({node: held}, now + duration))

    start_some()
    for _ in range(4):
        shape = Shape(
            count=data.draw(st.integers(1, 3 * count)),
            per_slot={"cpus": data.draw(st.integers(1, 2)), "mem": data.draw(st.integers(0, 2))},
            nodes=data.draw(st.one_of(st.none(), st.integers(1, 3))),
        )
        if shape.nodes is not None and shape.nodes > shape.count:
            continue
        demand = space.pack(dict(shape.per_slot))
        duration = data.draw(st.integers(1, 15))
        after = now + data.draw(st.integers(0, 6))
        plan.grows_only = False
        expected = plan.earliest(shape, demand, duration, after)
        plan.grows_only = True
        assert plan.earliest(shape, demand, duration, after) == expected
        assert plan.earliest(shape, demand, duration, after) == expected  # asked again
        now += data.draw(st.integers(0, 2))
        plan.forget_before(now)
        for held, end in list(running):  # some end (early, or at their end)
            if end <= now or data.draw(st.booleans()):
                running.remove((held, end))
                plan.release(held, now, end - now)
        start_some()
