"""The rules of :mod:`berth.core.start_floors`, each at its edge, on one node of 4 cpus:
a bound holds only for jobs needing no fewer slots for no shorter a time, asked from no
earlier; room given back cuts it to the starts whose windows end by then; a move
earlier (compression) gives room back too."""

from __future__ import annotations

from berth.core.nodes import NodePlan
from berth.core.resources import ResourceSpace
from berth.core.shapes import Shape
from berth.core.start_floors import PENDING_LIMIT, StartFloors

SPACE = ResourceSpace({"cpus": 4})
KIND = (SPACE.pack({"cpus": 1}), None, False)


def plan() -> NodePlan:
    return NodePlan(SPACE, [SPACE.pack({"cpus": 4})], 0)


def book(plan: NodePlan, count: int, duration: int, after: int = 0) -> tuple[int, dict[int, int]]:
    """Search ``count`` 1-cpu slots for ``duration`` and reserve them: (start, held)."""
    shape = Shape(count=count, per_slot={"cpus": 1})
    demand = SPACE.pack(shape.per_slot)
    found = plan.earliest(shape, demand, duration, after)
    assert found is not None
    held = plan.held(found[1], demand, False)
    plan.reserve(held, found[0], duration)
    return found[0], held


def test_a_bound_holds_for_larger_longer_later_questions_only() -> None:
    floors = StartFloors()
    floors.found(KIND, 2, 10, 5, 40)
    assert floors.floor(KIND, 2, 10, 5) == (5, 5, 40)
    assert floors.floor(KIND, 3, 11, 6) == (6, 6, 40)
    assert floors.floor(KIND, 1, 10, 5) == (5, 5, 5)  # fewer slots
    assert floors.floor(KIND, 2, 9, 5) == (5, 5, 5)  # shorter
    assert floors.floor(KIND, 2, 10, 4) == (4, 4, 4)  # asked from earlier
    assert floors.floor((KIND[0], 2, False), 2, 10, 5) == (5, 5, 5)  # another kind


def test_room_given_back_opens_a_hole_of_the_windows_that_meet_it() -> None:
    floors = StartFloors()
    floors.found(KIND, 1, 10, 0, 40)
    floors.given_back(30, 35)
    # A start at 20 has its window [20, 30) end where the room comes back: still ruled
    # out; from 21 to 34 a window meets [30, 35); from 35 to 39 none does.
    assert floors.floor(KIND, 1, 10, 0) == (21, 35, 40)
    assert floors.floor(KIND, 1, 10, 25) == (25, 35, 40)  # the hole cut to the question
    assert floors.floor(KIND, 1, 10, 36) == (36, 36, 40)
    floors.given_back(12, 13)
    assert floors.floor(KIND, 1, 10, 0) == (3, 35, 40)  # one hole spans both
    floors.given_back(10, 50)  # the hole reaches the bound's end: the bound is cut
    assert floors.floor(KIND, 1, 10, 0) == (1, 1, 1)
    floors.given_back(5, 6)  # the bound says nothing any more: dropped
    assert floors.floor(KIND, 1, 10, 0) == (0, 0, 0)


def test_windows_given_back_apart_open_their_holes_as_if_read_one_by_one() -> None:
    floors = StartFloors()
    floors.found(KIND, 1, 10, 0, 40)
    floors.given_back(30, 35)
    floors.given_back(60, 65)  # beyond the bound: it opens nothing
    floors.given_back(33, 36)  # merged with the first
    assert floors.floor(KIND, 1, 10, 0) == (21, 36, 40)


def test_too_many_windows_become_one_span_a_weaker_but_true_bound() -> None:
    floors = StartFloors()
    floors.found(KIND, 1, 10, 0, 100)
    floors.given_back(200, 201)  # beyond the bound: alone, it opens nothing
    for since in range(2, 2 + 3 * PENDING_LIMIT, 3):  # [2, 3), [5, 6), ... apart
        floors.given_back(since, since + 1)
    # Read one by one, the hole would be [0, 24); spanned with [200, 201), it reaches
    # the bound's end, and the bound says nothing any more.
    assert floors.floor(KIND, 1, 10, 0) == (0, 0, 0)


def test_a_bound_from_a_longer_job_does_not_hide_a_short_gap() -> None:
    nodes = plan()
    book(nodes, 2, 10)  # [0, 10) on 2 cpus
    book(nodes, 4, 1)  # [10, 11) on all 4
    assert book(nodes, 2, 20)[0] == 11  # 2 cpus free before 10, but not for 20
    assert book(nodes, 2, 5)[0] == 0  # ... and for 5 they are


def test_a_bound_from_a_later_question_does_not_hide_an_earlier_start() -> None:
    nodes = plan()
    book(nodes, 4, 10, after=5)  # [5, 15)
    assert book(nodes, 4, 10, after=6)[0] == 15  # bound: from 6, not before 15
    assert book(nodes, 4, 5, after=0)[0] == 0  # [0, 5) was free all along


def test_a_job_withdrawn_gives_its_window_back_to_the_next_search() -> None:
    nodes = plan()
    book(nodes, 4, 10)  # [0, 10)
    second = book(nodes, 4, 10)  # [10, 20)
    assert book(nodes, 4, 10)[0] == 20  # bound 20 for 4 x 10
    nodes.release(second[1], 10, 10)  # the job at [10, 20) withdrawn
    assert book(nodes, 4, 10)[0] == 10


def test_a_move_earlier_gives_its_window_back_to_the_next_search() -> None:
    nodes = plan()
    running = book(nodes, 4, 10)  # [0, 10)
    waiting = book(nodes, 3, 10)  # [10, 20)
    nodes.release(running[1], 5, 5)  # it ends at 5, not 10
    assert book(nodes, 2, 10, after=5)[0] == 20  # bound 20 for 2 x 10 from 5
    shape = Shape(count=3, per_slot={"cpus": 1})
    demand = SPACE.pack(shape.per_slot)
    moved = nodes.earlier(shape, demand, 10, 5, waiting[0], waiting[1])
    assert moved is not None
    assert moved[0] == 5  # [5, 15): [15, 20) is free again
    nodes.reserve(nodes.held(moved[1], demand, False), 5, 10)
    # 4 cpus free over [15, 20), 2 over [20, 30): 2 x 10 fits at 15 now.
    assert book(nodes, 2, 10, after=5)[0] == 15


def test_a_search_asks_the_hole_then_goes_on_from_the_bound() -> None:
    nodes = plan()
    running = book(nodes, 4, 10)  # [0, 10)
    withdrawn = book(nodes, 4, 10)  # [10, 20)
    assert book(nodes, 4, 10)[0] == 20  # [20, 30)
    assert book(nodes, 4, 10)[0] == 30  # bound 30 for 4 x 10 from 0
    nodes.release(withdrawn[1], 10, 10)  # hole [1, 20) in that bound
    assert book(nodes, 4, 10)[0] == 10  # found in the hole
    nodes.release(running[1], 5, 5)  # ends at 5: the hole now spans [0, 20)
    assert book(nodes, 4, 5, after=5)[0] == 5
    assert book(nodes, 4, 10, after=5)[0] == 40  # not in the hole: from the bound on
