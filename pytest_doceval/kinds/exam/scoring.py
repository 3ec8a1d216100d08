"""One (question, model, track) scored: the row's metrics, labels, details and answer view,
plus the built-in ``random`` system that gives every suite its floor.

A system is ``<model>-<track>`` (test id ``<question>[<model>-<track>]``); its row carries
``model``, ``track``, ``nation`` and ``task`` as labels, ``correct`` and ``parse_failure`` as
metrics, ``details["choices"]`` (the analyses need it for the chance rate) and the view
``answer``: the raw output, the parsed answer (or None), the rule that parsed it and why a parse
failed. The suite analyses (`pytest_doceval.kinds.exam.analyses`) read exactly these.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_doceval.kinds.exam.answers import ParsedAnswer, get_parser
from pytest_doceval.kinds.exam.questions import Question
from pytest_doceval.metrics.spec import SHARE, MetricSpec

RANDOM_MODEL = "random"
ANSWER_VIEW = "answer"

EXAM_METRICS: Mapping[str, MetricSpec] = {
    "correct": MetricSpec(
        "higher",
        bounds=SHARE,
        binary=True,
        description="1 when the parsed answer is the key; a parse failure counts as wrong",
    ),
    "parse_failure": MetricSpec(
        "lower",
        bounds=SHARE,
        binary=True,
        description="1 when no answer could be read from the model's output",
    ),
}


def system_name(model: str, track: str) -> str:
    """The id part of a test: ``qwen2-vl-7b-A``."""
    return f"{model}-{track}"


def exam_labels(question: Question, model: str, track: str) -> dict[str, str]:
    return {"model": model, "track": track, "nation": question.nation, "task": question.task}


@dataclass(frozen=True)
class ExamScore:
    """A question's key against what the parser read in the output."""

    question: str
    answer: int
    choices: int
    output: str
    parsed: ParsedAnswer

    @property
    def correct(self) -> bool:
        return self.parsed.answer == self.answer

    def metrics(self) -> dict[str, float]:
        return {"correct": float(self.correct), "parse_failure": float(self.parsed.failed)}

    def details(self) -> dict[str, Any]:
        return {
            "choices": self.choices,
            "answer": self.answer,
            "parsed": self.parsed.answer,
            "parser": self.parsed.parser,
            "rule": self.parsed.rule,
        }

    def views(self) -> dict[str, Any]:
        return {
            ANSWER_VIEW: {
                "raw": self.output,
                "parsed": self.parsed.answer,
                "rule": self.parsed.rule,
                "failure": self.parsed.failure,
                "parser": self.parsed.parser,
                "expected": self.answer,
            }
        }


def score_output(question: Question, output: str, parser: str) -> ExamScore:
    """Score a model's raw `output` for `question` with the answer parser named `parser`."""
    parsed = get_parser(parser)(output, question.choices, question.options)
    return ExamScore(question.id, question.answer, question.choices, output, parsed)


def random_answer(question_id: str, choices: int, seed: int = 0) -> int:
    """The ``random`` system's answer: uniform over 1..choices, a function of (seed, question)
    only, so it is the same in every process and shard, whatever order questions run in, and
    the same on every track (its deltas are exactly 0: a sanity line in the delta table)."""
    if choices < 1:
        raise ValueError(f"choices must be at least 1, got {choices}")
    digest = hashlib.sha256(f"doceval-random/{seed}/{question_id}".encode()).digest()
    # 64 bits modulo <= 5: the bias is below 1e-18.
    return int.from_bytes(digest[:8], "big") % choices + 1


def random_output(question: Question, seed: int = 0) -> str:
    """What the ``random`` system "says": its answer as a digit, which every parser reads."""
    return str(random_answer(question.id, question.choices, seed))
