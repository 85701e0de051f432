"""An array being submitted in parts: which tasks it has, how many are in, and how it is
kept in the store so that a restart finishes it.

A large array (``--array 0-9999``) is admitted a part a batch, each part committed
before the next, so that reads are answered between parts instead of waiting for the
whole (10,000 tasks on 4,096 nodes held every read 2.6-3.4 s). A part ends once it has
taken :data:`PART_SECONDS` or holds :data:`TASKS_PER_BATCH` tasks. The array's job
numbers are set aside when it starts (task ``i`` is job ``array id + i``, whatever is
submitted meanwhile), and what is left of it is stored with each part (the
configuration's ``arrays_in_parts``): a daemon that stops between parts admits the rest
when it starts again, with the request its first task holds. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from berth.core.dependencies import Need
from berth.service.model import JobRecord, JobRequest
from berth.service.rows import job_from_row

#: Wall time a part of an array may take to admit its tasks. Its rows are committed
#: before the next part, and reads are answered in between. 10,000 one-cpu tasks on
#: 4,096 emulated nodes (``benchmarks/bench_arrays.py --nodes 4096 --reads``): in one
#: batch reads waited up to 2.7 s and the array took 2.6 s; in parts of 0.02 s reads
#: waited 0.08 s at the median, 0.13-0.19 s at most, the array 2.7-3.8 s (a noisy
#: machine); parts of 0.05 s: reads up to 0.31 s, the array 3.0 s.
PART_SECONDS = 0.02
#: Tasks an array admits in one part at most (a bound beside the time; tests set it).
TASKS_PER_BATCH = 1024


@dataclass(slots=True)
class ArrayFill:
    """An array whose tasks are going in: its id (its first task's job number), its task
    indices, its limit on running tasks (``%N``), how many are in, and its request (kept
    as its first task's stored row: the first task may end, and be let go, before the
    last is in)."""

    array_id: int
    tasks: tuple[int, ...]
    limit: int | None
    first_row: dict[str, Any]
    done: int = 0
    #: Each task's needs, worked out when the array started (not stored: worked out
    #: again by a restart, from the same request).
    needs: list[list[Need]] = field(default_factory=list, compare=False)
    #: The tasks admitted so far, for the answer (not stored; a task that has ended may
    #: be let go from the engine's memory before the last is in).
    records: list[JobRecord] = field(default_factory=list, compare=False)
    #: The request itself, once known (read from ``first_row`` once after a restart).
    asked: JobRequest | None = field(default=None, compare=False)

    def request(self) -> JobRequest:
        """The array's request, as its first task was made from it."""
        if self.asked is None:
            self.asked = job_from_row(self.first_row).as_request()
        return self.asked

    def next_part(self) -> range:
        """The places in ``tasks`` of the next part's tasks."""
        return range(self.done, min(self.done + TASKS_PER_BATCH, len(self.tasks)))

    @property
    def whole(self) -> bool:
        return self.done >= len(self.tasks)

    def as_dict(self) -> dict[str, object]:
        """What the store keeps (the indices as runs: ``0-9999`` is one)."""
        return {
            "array_id": self.array_id,
            "tasks": runs_of(self.tasks),
            "limit": self.limit,
            "done": self.done,
            "first": self.first_row,
        }

    @classmethod
    def from_dict(cls, row: dict[str, object]) -> ArrayFill:
        runs, first = row["tasks"], row["first"]
        limit, array_id, done = row.get("limit"), row["array_id"], row["done"]
        assert isinstance(runs, list)
        assert isinstance(array_id, int)
        assert isinstance(done, int)
        assert limit is None or isinstance(limit, int)
        assert isinstance(first, dict)
        return cls(array_id, tasks_of(runs), limit, first, done)


def runs_of(tasks: tuple[int, ...]) -> list[list[int]]:
    """``tasks`` (ascending) as ``[first, count, step]`` runs."""
    runs: list[list[int]] = []
    for index in tasks:
        if runs:
            first, count, step = runs[-1]
            if count == 1:
                runs[-1] = [first, 2, index - first]
                continue
            if index == first + count * step:
                runs[-1][1] += 1
                continue
        runs.append([index, 1, 1])
    return runs


def tasks_of(runs: list[list[int]]) -> tuple[int, ...]:
    """The indices of :func:`runs_of`'s runs."""
    return tuple(first + i * step for first, count, step in runs for i in range(count))
