"""Deadline admission algorithms (Islam, Balaji, Sadayappan & Panda 2003) on a board.

Each function rearranges a :class:`~berth.core.policies.boards.Board` holding every
admitted waiting job so that ``new`` and all of them meet their deadlines, and returns
``None`` with the board in that state, or the first :class:`Broken` deadline that made
it give up (the caller then undoes the board). The same code plans on the pool and on
named nodes; only the board differs.

* :func:`qops` (section 3, Figure 3): insertion points 0, N/2, 3N/4, ... N, in that
  order; at point ``p`` the jobs from ``p`` on and the new one are re-placed in EDF or
  LLF order, a deadline violation pulling the late job forward up to ``k_factor``
  times. The first feasible point wins.
* :func:`msb` (section 2.2.1, Figure 1): for each position from N down to 0, the new job
  at its earliest start and the jobs from the position on re-placed in their current
  order; the cheapest feasible option wins (delay x size summed; ties: fewer moved).
* :func:`mrt` (section 2.2.2, Figure 2): every job re-placed by depth-first search in
  heuristic order, each step strongly feasible, at most ``max_backtracks`` backtracks.

Resolutions of the paper's ambiguities are in ``docs/semantics.md``. Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from berth.core.policies.boards import Board
from berth.core.policies.deadline_rules import Broken, Deadlines, Queued
from berth.core.policies.option_values import whole

#: Default bound on deadline violations repaired per insertion point (the paper's
#: K-factor; it gives no value).
DEFAULT_K_FACTOR = 5

#: Default backtrack limit of MRT (the paper gives no value).
DEFAULT_MAX_BACKTRACKS = 10

AnyBoard = Board[Any, Any]


def insertion_points(n: int) -> list[int]:
    """Positions 0, n/2, 3n/4, 7n/8, ... (each below n), then n: about log2(n) + 2."""
    points = [0]
    step = n // 2
    while step > 0:
        position = n - step
        if position > points[-1]:
            points.append(position)
        step //= 2
    if n > points[-1]:
        points.append(n)
    return points


def _start(entry: Queued) -> int:
    assert entry.start is not None, "every admitted waiting job is reserved"
    return entry.start


class Queue:
    """The admitted waiting jobs as an algorithm reads them: ``jobs`` in any order, and
    :meth:`by_start` in order of reserved start (then arrival), sorted on first use.
    QoPS's insertion point 0, where most of its decisions end, places every job again
    in its heuristic's order and needs no other (sorting 1,000 jobs by start, with the
    key's calls, was about 5 % of the samples of a decision on the node planner)."""

    __slots__ = ("_by_start", "_key", "jobs")

    def __init__(self, jobs: Iterable[Queued], key: Callable[[Queued], Any]) -> None:
        self.jobs: Sequence[Queued] = list(jobs)
        self._key = key  # (the order by start: reserved start, then arrival)
        self._by_start: list[Queued] | None = None

    def __len__(self) -> int:
        return len(self.jobs)

    def by_start(self) -> Sequence[Queued]:
        """The jobs by reserved start, then arrival."""
        if self._by_start is None:
            self._by_start = sorted(self.jobs, key=self._key)
        return self._by_start


def qops(
    board: AnyBoard,
    rules: Deadlines,
    queue: Queue,
    new: Queued,
    now: int,
    k_factor: int,
    rebuilt: Rebuilt | None = None,
) -> Broken | None:
    """QoPS admission of ``new`` beside ``queue``. With ``rebuilt`` (see
    :class:`Rebuilt`), insertion point 0 keeps the known part of its rebuild where it
    is, and ``rebuilt`` says afterwards what is known of this one."""
    first_failure: Broken | None = None
    base = board.mark()
    for position in insertion_points(len(queue)):
        # Point 0 moves every job; the order they are in does not matter (re-placed in
        # the heuristic's order, ties by id), nor which comes first (the earliest start).
        moved = queue.jobs if position == 0 else queue.by_start()[position:]
        outcome = try_insertion(
            board, rules, moved, new, now, k_factor, rebuilt if position == 0 else None
        )
        if outcome is None:
            if position > 0 and rebuilt is not None:
                rebuilt.known = []  # a later point's placements are no rebuild from 0
            return None
        board.undo(base)
        first_failure = first_failure or outcome
    return first_failure


class Rebuilt:
    """What is known of insertion point 0's rebuild, from one decision to the next.

    ``known``: waiting jobs, by id, in the order the last rebuild placed them, whose
    reservations on the board are what that rebuild gave them: each one's earliest
    start from ``now``, placed in this order on the board with every waiting job taken
    out. Its keeper vouches that the board has not changed since (same instant, same
    running jobs, no reservation taken or made). The next rebuild places its jobs in
    the heuristic's order on the same board: as long as that order begins with the
    same jobs, each would be placed exactly where it is, so they are left there
    (neither taken out nor searched for again). A decision on the node planner with
    1,000 waiting jobs placed a fifth of them again where they were."""

    __slots__ = ("known",)

    def __init__(self, known: list[int] | None = None) -> None:
        self.known = [] if known is None else known


def try_insertion(
    board: AnyBoard,
    rules: Deadlines,
    moved: Sequence[Queued],
    new: Queued,
    now: int,
    k_factor: int,
    rebuilt: Rebuilt | None = None,
) -> Broken | None:
    """One option of Figure 3: ``moved`` (the jobs from the insertion point on, in any
    order) and the new job re-placed. When a job ``Jc`` placed at ``T`` misses its
    deadline, every job this option placed in ``[min((ts + T) / 2, T), T]`` is taken
    out again and ``Jc`` goes first (``ts``: the insertion point's slot, the earliest
    start of ``moved``). With ``rebuilt`` (insertion point 0 only), the jobs it knows at
    the head of the order stay where they are, and it learns this option's own
    (:class:`Rebuilt`)."""
    slot = min(map(_start, moved)) if moved else now
    key = rules.order_key()
    pending = sorted([new, *moved], key=key)
    kept = _known_head(pending, rebuilt.known) if rebuilt is not None else 0
    placed = {e.job.id: board.starts[e.job.id] for e in pending[:kept]}  # (staying)
    del pending[:kept]
    board.take_each([entry for entry in moved if entry.job.id not in placed])
    # The jobs placed as a rebuild places them: in order, none taken back since.
    in_order = list(placed) if rebuilt is not None else []
    violations = 0
    while pending:
        # Placed in turn up to the first one late (or all of them).
        starts = board.place_each(pending, now, rules.of)
        run, pending = pending[: len(starts)], pending[len(starts) :]
        placed.update((e.job.id, start) for e, start in zip(run, starts, strict=True))
        if rebuilt is not None and violations == 0:
            in_order += [e.job.id for e in run]
        entry, start = run[-1], starts[-1]
        broken = rules.late(entry, start)
        if broken is None:
            continue  # (every job placed)
        violations += 1
        if violations > k_factor:
            return broken
        lower = min((slot + start) // 2, start)
        back = [
            job_id
            for job_id, at in placed.items()
            if lower <= at <= start and job_id != entry.job.id
        ]
        # (By id only here: most decisions miss no deadline and never build it.)
        entries = {e.job.id: e for e in [new, *moved]}
        taken = {*back, entry.job.id}
        cut = next((i for i, job_id in enumerate(in_order) if job_id in taken), len(in_order))
        del in_order[cut:]
        for job_id in [*back, entry.job.id]:
            del placed[job_id]
        board.take_each(entries[job_id] for job_id in [*back, entry.job.id])
        pending = [entry, *sorted([*pending, *(entries[j] for j in back)], key=key)]
    if rebuilt is not None:
        rebuilt.known = in_order
    return None


def _known_head(pending: Sequence[Queued], known: Sequence[int]) -> int:
    """How many of ``pending``'s first jobs are ``known``'s first, in the same order."""
    count = 0
    for entry, job_id in zip(pending, known, strict=False):
        if entry.job.id != job_id:
            break
        count += 1
    return count


def msb(board: AnyBoard, rules: Deadlines, queue: Queue, new: Queued, now: int) -> Broken | None:
    """MSB admission of ``new`` beside ``queue``."""
    order = queue.by_start()
    base = board.mark()
    best: tuple[float, int] | None = None
    first_failure: Broken | None = None
    for position in range(len(order), -1, -1):
        if position < len(order):
            board.take(order[position])
        mark = board.mark()
        outcome = _msb_option(board, rules, order[position:], new, now)
        board.undo(mark)
        if isinstance(outcome, Broken):
            first_failure = first_failure or outcome
        elif best is None or outcome < best[0]:
            best = (outcome, position)
    board.undo(base)
    if best is None:
        assert first_failure is not None
        return first_failure
    for entry in reversed(order[best[1] :]):
        board.take(entry)
    chosen = _msb_option(board, rules, order[best[1] :], new, now)
    assert not isinstance(chosen, Broken), "the same option on the same board"
    return None


def _msb_option(
    board: AnyBoard, rules: Deadlines, moved: Sequence[Queued], new: Queued, now: int
) -> float | Broken:
    """The new job at its earliest start, then ``moved`` re-placed in order: the price
    (delay x size, summed), or the first deadline missed."""
    start = board.place(new, now)
    broken = rules.late(new, start)
    if broken is not None:
        return broken
    price = (start - now) * board.size(new)
    for entry in moved:
        moved_to = board.place(entry, now)
        broken = rules.late(entry, moved_to)
        if broken is not None:
            return broken
        price += (moved_to - _start(entry)) * board.size(entry)
    return price


def mrt(
    board: AnyBoard,
    rules: Deadlines,
    queue: Queue,
    new: Queued,
    now: int,
    max_backtracks: int,
) -> Broken | None:
    """MRT admission: every job re-placed by a strongly feasible depth-first search (in
    the heuristic's order: ``queue``'s own does not matter)."""
    waiting = queue.jobs
    remaining = sorted([*waiting, new], key=rules.order_key())
    # Earliest-start lower bounds: a partial schedule only fills up as it grows, so a
    # job's earliest start never moves earlier; scans resume from the last one.
    bounds = {e.job.id: now for e in remaining}
    for entry in waiting:
        board.take(entry)
    steps: list[tuple[int, list[Queued], dict[int, int], int]] = []
    candidate = 0
    backtracks = 0
    failure: Broken | None = None
    while remaining:
        extended = False
        while candidate < len(remaining):
            entry = remaining[candidate]
            mark = board.mark()
            start = board.place(entry, bounds[entry.job.id])
            rest = remaining[:candidate] + remaining[candidate + 1 :]
            trial_bounds = dict(bounds)
            broken = rules.late(entry, start)
            if broken is None:
                broken = _strongly_feasible(board, rules, rest, trial_bounds)
            if broken is None:
                steps.append((mark, remaining, bounds, candidate))
                remaining, bounds = rest, trial_bounds
                candidate = 0
                extended = True
                break
            board.undo(mark)
            failure = failure or broken
            backtracks += 1
            if backtracks > max_backtracks:
                return failure
            candidate += 1
        if extended:
            continue
        if not steps:
            assert failure is not None
            return failure
        mark, remaining, bounds, tried = steps.pop()
        board.undo(mark)
        candidate = tried + 1
    return None


def _strongly_feasible(
    board: AnyBoard, rules: Deadlines, rest: Sequence[Queued], bounds: dict[int, int]
) -> Broken | None:
    """Whether each job of ``rest``, placed alone next, meets its deadline."""
    for other in rest:
        job_id = other.job.id
        start = board.earliest(other, bounds[job_id])
        bounds[job_id] = start
        broken = rules.late(other, start)
        if broken is not None:
            return broken
    return None


#: The options each algorithm takes beyond the heuristic and relaxation.
OPTIONS = {"qops": ("k_factor",), "msb": (), "mrt": ("max_backtracks",)}


class Admission:
    """One of the algorithms with its options, checked once: ``admission(board, ...)``."""

    __slots__ = ("k_factor", "max_backtracks", "name")

    def __init__(
        self,
        name: str,
        k_factor: int = DEFAULT_K_FACTOR,
        max_backtracks: int = DEFAULT_MAX_BACKTRACKS,
    ) -> None:
        if name not in OPTIONS:
            raise ValueError(f"deadline admission must be one of {', '.join(OPTIONS)}")
        self.name = name
        self.k_factor = whole("k_factor", k_factor)
        self.max_backtracks = whole("max_backtracks", max_backtracks)

    def __call__(
        self,
        board: AnyBoard,
        rules: Deadlines,
        queue: Queue,
        new: Queued,
        now: int,
        rebuilt: Rebuilt | None = None,
    ) -> Broken | None:
        """Rearrange ``board`` (``queue``: the admitted waiting jobs) to admit ``new``;
        ``None`` when admitted, else why not. ``rebuilt``: see :func:`qops` (the other
        algorithms leave it empty)."""
        if self.name == "qops":
            return qops(board, rules, queue, new, now, self.k_factor, rebuilt)
        if rebuilt is not None:
            rebuilt.known = []
        if self.name == "msb":
            return msb(board, rules, queue, new, now)
        return mrt(board, rules, queue, new, now, self.max_backtracks)
