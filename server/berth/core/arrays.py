"""Job arrays as Slurm writes them, and the limit on their running tasks as a plan.

``0-99``, ``1,3,5-9``, ``0-99:4``, each optionally ending in ``%N`` (at most N tasks
running at once). :func:`parse_array` reads that; :func:`throttle` turns the limit into
needs the planner already honours: the tasks run in N lanes, the i-th task after the
(i-N)-th has ended (a ``throttle`` need, :mod:`berth.core.dependencies`), so no plan
ever has more than N running and every
task's guarantee honours the limit (a lane waits for its own previous task, not for the
first of any, so a short task does not let another lane's next one start earlier).
Pure: no clock, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from berth.core.dependencies import THROTTLE, Need

#: The most tasks one array may have.
MAX_ARRAY_TASKS = 10_000
#: The largest task index.
MAX_TASK_INDEX = 4_000_000


def parse_array(spec: str) -> tuple[tuple[int, ...], int | None]:
    """The task indices of ``spec``, in order, each once, and its ``%N`` limit (``None``:
    none); ``ValueError`` saying what cannot be read or is too big."""
    text, _, limit_text = spec.strip().partition("%")
    limit = None
    if limit_text or spec.strip().endswith("%"):
        if not limit_text.strip().isdigit() or int(limit_text) < 1:
            raise ValueError(f"array {spec!r}: %N must be a whole number of tasks, at least 1")
        limit = int(limit_text)
    indices: set[int] = set()
    for part in text.split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part.strip())
        if match is None:
            raise ValueError(f"array {spec!r}: expected N, N-M or N-M:STEP, comma-separated")
        first = int(match.group(1))
        last = int(match.group(2) or first)
        step = int(match.group(3) or 1)
        if last < first or step < 1 or last > MAX_TASK_INDEX:
            raise ValueError(
                f"array {spec!r}: {part.strip()} must run upwards, by a step of at least 1, "
                f"to at most {MAX_TASK_INDEX}"
            )
        if len(indices) + (last - first) // step + 1 > MAX_ARRAY_TASKS:
            raise ValueError(f"array {spec!r}: more than {MAX_ARRAY_TASKS} tasks")
        indices.update(range(first, last + 1, step))
    return tuple(sorted(indices)), limit


def throttle(task_ids: Sequence[int], limit: int | None) -> dict[int, Need]:
    """Under a ``%N`` limit, each task's lane need by task id: task i waits for task
    i-N to end (the first N tasks, or every task without a limit, wait for none)."""
    if limit is None:
        return {}
    return {task_ids[i]: Need(THROTTLE, task_ids[i - limit]) for i in range(limit, len(task_ids))}
