"""A slice counted in questions: so many calls say go on, then every call says stop."""

from __future__ import annotations

import pytest

from berth.core.question_budget import QuestionBudget


def test_a_budget_says_stop_after_its_questions() -> None:
    stop = QuestionBudget(2)
    assert [stop() for _ in range(5)] == [False, False, True, True, True]


def test_a_budget_under_one_question_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1 question, got 0"):
        QuestionBudget(0)
