"""Scoring one output into a row, and the built-in ``random`` system."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_doceval.kinds.exam.answers import ROBUST_V1, SEED_001
from pytest_doceval.kinds.exam.questions import Question
from pytest_doceval.kinds.exam.scoring import (
    ANSWER_VIEW,
    EXAM_METRICS,
    exam_labels,
    random_answer,
    random_output,
    score_output,
    system_name,
)
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import new_row


def make_question(qid: str = "kr-1", answer: int = 3, choices: int = 5) -> Question:
    return Question(qid, f"images/{qid}.png", answer, choices, "Korea", "civics", None, 1)


@pytest.mark.parametrize(
    ("parser", "output", "correct", "failure", "parsed", "rule"),
    [
        (SEED_001, "3", 1.0, 0.0, 3, "seed-001:[1-5]"),
        (SEED_001, "2", 0.0, 0.0, 2, "seed-001:[1-5]"),
        (SEED_001, "③", 0.0, 1.0, None, None),
        (ROBUST_V1, "③", 1.0, 0.0, 3, "whole:circled"),
        (ROBUST_V1, "정답은 3번", 1.0, 0.0, 3, "answer-line:digit"),
        (ROBUST_V1, "2 or 3", 0.0, 1.0, None, None),
    ],
)
def test_score_output(
    parser: str, output: str, correct: float, failure: float, parsed: int | None, rule: str | None
) -> None:
    score = score_output(make_question(), output, parser)
    assert score.metrics() == {"correct": correct, "parse_failure": failure}
    assert score.details() == {
        "choices": 5,
        "answer": 3,
        "parsed": parsed,
        "parser": parser,
        "rule": rule,
    }
    view = score.views()[ANSWER_VIEW]
    assert (view["raw"], view["parsed"], view["rule"], view["expected"]) == (
        output,
        parsed,
        rule,
        3,
    )
    assert (view["failure"] is None) == (parsed is not None)


def test_metric_specs_and_labels() -> None:
    assert set(EXAM_METRICS) == {"correct", "parse_failure"}
    assert EXAM_METRICS["correct"].direction == "higher" and EXAM_METRICS["correct"].binary
    assert EXAM_METRICS["parse_failure"].direction == "lower"
    assert EXAM_METRICS["parse_failure"].binary
    assert system_name("qwen2-vl-7b", "B1") == "qwen2-vl-7b-B1"
    q = make_question()
    assert exam_labels(q, "qwen", "A") == {
        "model": "qwen",
        "track": "A",
        "nation": "Korea",
        "task": "civics",
    }


def test_a_scored_row_is_builtin_types() -> None:
    q = make_question()
    score = score_output(q, "Final answer: ③", ROBUST_V1)
    row = CaseResult(
        score.metrics(),
        labels=exam_labels(q, "m", "A"),
        details=score.details(),
        views=score.views(),
    ).fill_row(new_row("exam", q.id, system_name("m", "A")))
    assert row["metrics"] == {"correct": 1.0, "parse_failure": 0.0}
    assert row["views"]["answer"]["rule"] == "final:circled"


@given(st.text(min_size=1, max_size=20), st.integers(min_value=1, max_value=5), st.integers())
@settings(max_examples=100, deadline=None)
def test_random_answer_is_deterministic(qid: str, choices: int, seed: int) -> None:
    first = random_answer(qid, choices, seed)
    assert 1 <= first <= choices
    assert random_answer(qid, choices, seed) == first


def test_random_answers_are_uniform_and_seeded() -> None:
    ids = [f"q{i:05d}" for i in range(5000)]
    for choices in (4, 5):
        counts = Counter(random_answer(q, choices) for q in ids)
        assert set(counts) == set(range(1, choices + 1))
        # Chi-square goodness of fit against the uniform distribution.
        assert sps.chisquare([counts[k] for k in range(1, choices + 1)]).pvalue > 0.001
    changed = sum(random_answer(q, 5, 0) != random_answer(q, 5, 1) for q in ids)
    assert 0.7 < changed / len(ids) < 0.9  # 4/5 of the answers differ under another seed
    with pytest.raises(ValueError):
        random_answer("q", 0)


def test_the_random_system_scores_near_chance() -> None:
    questions = [make_question(f"q{i}", answer=1 + i % 4, choices=4) for i in range(4000)]
    for parser in (SEED_001, ROBUST_V1):
        scores = [score_output(q, random_output(q), parser) for q in questions]
        accuracy = sum(s.correct for s in scores) / len(scores)
        assert sps.binomtest(round(accuracy * 4000), 4000, 0.25).pvalue > 0.001
        assert not any(s.parsed.failed for s in scores)
