"""A slice of planning work counted in questions, for a shell without a clock.

The daemon bounds its slices of plan improvement (compression after early ends, BL/BB
moves) by wall time: its ``stop()`` says when a slice's milliseconds are spent. The
emulator has no wall time to spend and must stay deterministic, so when it drives
improvements in slices it gives each instant a number of questions instead: a
:class:`QuestionBudget` is a ``stop()`` that says "stop" once it has been asked more
times than its budget. The planner asks ``stop()`` before each job it asks again and at
each step of a long search, so the count follows the work closely and the same replay
always stops at the same places. Pure: no clock, no I/O.
"""

from __future__ import annotations


class QuestionBudget:
    """``stop()`` for one slice: ``False`` for the first ``questions`` calls, then
    ``True`` (the slice is over; the planner goes on from there in the next one)."""

    __slots__ = ("left",)

    def __init__(self, questions: int) -> None:
        if questions < 1:
            raise ValueError(f"a slice needs at least 1 question, got {questions}")
        self.left = questions

    def __call__(self) -> bool:
        self.left -= 1
        return self.left < 0
