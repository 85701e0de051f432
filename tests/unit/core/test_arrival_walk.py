"""The arrival-ordered list compression walks from slice to slice (:mod:`arrival_walk`)."""

from __future__ import annotations

from unittest import mock

from berth.core.policies import arrival_walk
from berth.core.policies.arrival_walk import ArrivalWalk


class Queue:
    """A queue as the node planner keeps it: entries by job id in arrival order, and
    each job's arrival number."""

    def __init__(self) -> None:
        self.entries: dict[int, str] = {}
        self.arrival: dict[int, int] = {}
        self.arrivals = 0

    def add(self, job_id: int) -> None:
        self.arrivals += 1
        self.entries[job_id] = f"entry {job_id}@{self.arrivals}"
        self.arrival[job_id] = self.arrivals

    def remove(self, job_id: int) -> None:
        del self.entries[job_id]
        del self.arrival[job_id]

    def live(self, walk: ArrivalWalk[str]) -> list[str]:
        """What a walker sees: the list's entries that are still queued."""
        listed = walk.current(self.entries, self.arrival, self.arrivals)
        return [e for e in listed if self.entries.get(int(e.split()[1].split("@")[0])) is e]


def test_new_jobs_are_appended_and_gone_ones_skipped_in_arrival_order() -> None:
    queue, walk = Queue(), ArrivalWalk[str]()
    for job_id in (5, 3, 9):
        queue.add(job_id)
    assert queue.live(walk) == ["entry 5@1", "entry 3@2", "entry 9@3"]
    queue.remove(3)
    queue.add(4)
    queue.add(3)  # queued again: a new arrival, at the end
    assert queue.live(walk) == ["entry 5@1", "entry 9@3", "entry 4@4", "entry 3@5"]
    assert walk.entries == ["entry 5@1", "entry 3@2", "entry 9@3", "entry 4@4", "entry 3@5"]
    # (the old entry of 3 is still listed, skipped)
    assert walk.index_of(queue.arrival[4]) == 3
    assert walk.index_of(queue.arrival[3]) == 4


def test_nothing_new_leaves_the_list_as_it_was() -> None:
    queue, walk = Queue(), ArrivalWalk[str]()
    queue.add(1)
    first = walk.current(queue.entries, queue.arrival, queue.arrivals)
    assert walk.current(queue.entries, queue.arrival, queue.arrivals) is first
    assert first == ["entry 1@1"]


def test_the_list_drops_jobs_gone_once_they_outnumber_the_queued_ones() -> None:
    queue, walk = Queue(), ArrivalWalk[str]()
    with mock.patch.object(arrival_walk, "_SLACK", 0):
        for job_id in range(10):
            queue.add(job_id)
        walk.current(queue.entries, queue.arrival, queue.arrivals)
        for job_id in range(6):
            queue.remove(job_id)
        assert queue.live(walk) == [f"entry {i}@{i + 1}" for i in range(6, 10)]
        assert walk.entries == [f"entry {i}@{i + 1}" for i in range(6, 10)]  # rebuilt:
        # 10 listed > 2 x 4 queued
        assert walk.numbers == [7, 8, 9, 10]
        assert walk.index_of(9) == 2
        queue.add(20)
        assert walk.entries == [f"entry {i}@{i + 1}" for i in range(6, 10)]
        assert queue.live(walk)[-1] == "entry 20@11"
