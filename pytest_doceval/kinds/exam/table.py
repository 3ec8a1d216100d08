"""The exam rows the analyses read, as one flat table.

Measured rows only (``passed``/``failed``): an errored or skipped test asked nothing, so it is
neither right nor wrong (a parse failure *is* measured: it scored 0). A row needs the labels
``model``, ``track``, ``nation``, ``task`` and the metric ``correct``; ``parse_failure`` and
``details["choices"]`` are read when present. Rows missing a label are not exam rows and are
left out rather than guessed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pytest_doceval.kinds.exam.prompts import TRACKS
from pytest_doceval.rows import is_measured

LABELS = ("model", "track", "nation", "task")


@dataclass(frozen=True)
class Answer:
    """One measured (question, model, track)."""

    question: str
    model: str
    track: str
    nation: str
    task: str
    correct: float
    parse_failure: float
    choices: int | None


def track_order(track: str) -> tuple[int, str]:
    """Seed order (A, B1, B2, C) first, then any other track by name."""
    return (TRACKS.index(track), "") if track in TRACKS else (len(TRACKS), track)


def answers_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Answer]:
    """The exam answers among `rows`, sorted by (question, model, track): every analysis sees
    one order whatever order the rows came in (xdist, merged shards), so floating-point sums
    and the seeded bootstraps do not depend on it."""
    out: list[Answer] = []
    for row in rows:
        if not is_measured(row):
            continue
        labels = row.get("labels") or {}
        metrics = row.get("metrics") or {}
        if any(not labels.get(k) for k in LABELS) or metrics.get("correct") is None:
            continue
        choices = (row.get("details") or {}).get("choices")
        failure = metrics.get("parse_failure")
        out.append(
            Answer(
                question=str(row["case"]),
                model=str(labels["model"]),
                track=str(labels["track"]),
                nation=str(labels["nation"]),
                task=str(labels["task"]),
                correct=float(metrics["correct"]),
                parse_failure=0.0 if failure is None else float(failure),
                choices=int(choices) if isinstance(choices, int | float) and choices else None,
            )
        )
    out.sort(key=lambda a: (a.question, a.model, a.track))
    return out


def by_system(answers: Iterable[Answer]) -> dict[tuple[str, str], dict[str, Answer]]:
    """{(model, track): {question: answer}}, systems in (model, seed track) order."""
    grouped: dict[tuple[str, str], dict[str, Answer]] = {}
    for a in answers:
        grouped.setdefault((a.model, a.track), {})[a.question] = a
    ordered = sorted(grouped, key=lambda mt: (mt[0], track_order(mt[1])))
    return {key: dict(sorted(grouped[key].items())) for key in ordered}


def tracks_of(answers: Iterable[Answer]) -> list[str]:
    return sorted({a.track for a in answers}, key=track_order)


def correct_vector(answers: Sequence[Answer]) -> NDArray[np.float64]:
    return np.fromiter((a.correct for a in answers), dtype=np.float64, count=len(answers))


def chance_rate(answers: Iterable[Answer]) -> float | None:
    """The random baseline: mean of 1/choices over the distinct questions (seed 001, 4.6:
    25% for four choices, 20% for five), None when no row says how many choices it had."""
    per_question = {a.question: a.choices for a in answers if a.choices}
    if not per_question:
        return None
    return math.fsum(1.0 / c for c in per_question.values()) / len(per_question)


def paired(
    first: Mapping[str, Answer], second: Mapping[str, Answer]
) -> tuple[list[str], NDArray[np.float64], NDArray[np.float64]]:
    """The questions both systems answered (sorted) and their correct vectors."""
    common = sorted(set(first) & set(second))
    x = np.array([first[q].correct for q in common], dtype=np.float64)
    y = np.array([second[q].correct for q in common], dtype=np.float64)
    return common, x, y
