"""Runs of placements and give-backs on a :class:`~berth.core.nodes.NodePlan`, in one C call.

Deadline admission takes every waiting job after its insertion point off the plan and
places them again one by one, in deadline order: about 800 jobs a decision with 1,000
waiting on 256 nodes. Each placement went through a dozen Python calls around the three
C functions that do the work (the node search, a placement's amounts per node, their
booking): a quarter of a decision. :func:`place_run` and :func:`release_run` call those
functions in a loop in C (``_profile_runs.h``), and keep the plan as
:meth:`~berth.core.nodes.NodePlan.reserve` and :meth:`~berth.core.nodes.NodePlan.release`
do. They apply to the plans the C loop describes fully (:func:`runs_apply`); the board
takes the method-by-method path for the rest, which is the reference
(``tests/property/test_board_runs.py`` compares them). A friend of the plan, as the search
is. Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from berth.core import node_search
from berth.core import profile as _profiles
from berth.core.nodes import NodePlan

if TYPE_CHECKING:
    from berth.core.shapes import Shape

#: The C loops; ``None``: none (not built, or a test comparing the two paths).
PLACE_RUN = _profiles.PLACE_RUN
RELEASE_RUN = _profiles.RELEASE_RUN

#: A job of a run: (demand, total, count, nodes, duration, after, deadline, able nodes,
#: their blocks, their summed profile), as the C loop reads it.
RunJob = tuple[int, int, int, int, int, int, int, list[int], Any, Any]

#: What a run reads of the plan for a slot: the able nodes, their blocks (or ``None``),
#: their summed profile.
SlotParts = tuple[list[int], Any, Any]

#: What a run placed of a job: its start, placement and amounts per node; ``None``: no
#: start holds it.
Placed = tuple[int, dict[int, int], dict[int, int]] | None


def runs_apply(plan: object) -> bool:
    """Whether the C loops keep ``plan`` exactly as its methods would: a plan naming its
    nodes, of C profiles, sharing none with a fork, keeping no summed profile of a set of
    nodes (they would be booked too) and no slots known at an instant (they would be
    forgotten), and searched over windows (not a plan whose room only grows)."""
    return (
        PLACE_RUN is not None
        and type(plan) is NodePlan
        and not plan._sharing
        and not plan._instants
        and not plan._groups
        and not plan.grows_only
        and isinstance(plan.aggregate, _profiles.NativeProfile)
    )


def run_job(
    plan: NodePlan,
    shape: Shape,
    demand: int,
    duration: int,
    after: int,
    deadline: int,
    known: dict[int, SlotParts] | None = None,
) -> RunJob | None:
    """A job of a run (its slots share nodes), or ``None`` when the run cannot take it: it
    takes whole nodes, or only a set of nodes can hold its slot (a summed profile of
    its own). ``known``: what was read of the plan per slot, kept by a caller whose plan
    keeps its nodes meanwhile (a QoPS decision asks for ~800 jobs of a few slots)."""
    if shape.exclusive:
        return None
    parts = None if known is None else known.get(demand)
    if parts is None:
        able = plan._able(demand)
        blocks = plan._blocks
        of_able = None if blocks is None else blocks.of_able(demand, able)
        parts = (able, of_able, plan._room(demand))
        if known is not None:
            known[demand] = parts
    able, of_able, summed = parts
    if summed is not plan.aggregate:
        return None
    total = demand * shape.count
    return (
        demand,
        total,
        shape.count,
        shape.nodes or 0,
        duration,
        after,
        deadline,
        able,
        of_able,
        summed,
    )


def place_run(plan: NodePlan, jobs: list[RunJob]) -> list[Placed]:
    """Each job placed in turn at its earliest start and reserved there, until one that
    completes after its deadline (placed too) or one that no start holds (``None``):
    per job placed, its start, placement and amounts per node."""
    assert PLACE_RUN is not None
    # (BLOCK_STEPS read when called: the tests set it)
    placed: list[Placed] = PLACE_RUN(*_booked(plan), node_search.BLOCK_STEPS, jobs)
    plan.changes += len(placed)
    return placed


def release_run(plan: NodePlan, windows: Sequence[tuple[dict[int, int], int, int]]) -> None:
    """Give back what each ``(held, start, end)`` holds (``start < end``), as
    :meth:`NodePlan.release` does."""
    assert RELEASE_RUN is not None
    floors = plan._floors
    for _, start, end in windows:
        floors.given_back(start, end)
    RELEASE_RUN(*_booked(plan), list(windows))
    plan.changes += len(windows)


def _booked(plan: NodePlan) -> tuple[object, ...]:
    """What a booking changes, as the C loops take it: the node profiles, the ends, the
    aggregate, the blocks' profiles and each node's block (``None`` without blocks)."""
    blocks = plan._blocks
    return (
        plan.profiles,
        plan._ends,
        plan.aggregate,
        None if blocks is None else blocks.profiles,
        None if blocks is None else blocks.block_of,
    )
