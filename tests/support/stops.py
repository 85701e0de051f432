"""A ``stop()`` for sliced work that counts questions instead of reading a clock."""

from __future__ import annotations


class EveryFewQuestions:
    """Says stop at every ``size``-th call (the shell's clock, made deterministic): a
    compression or a pass asked with it is cut into slices of ``size`` questions."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked % self.size == 0
