"""The exam kind's paper tables (seed 001): accuracy per model and track with the seed's 95%
percentile bootstrap CI over questions (its ``bootstrap_ci``, recomputed from the rows; the
report's accuracy entries carry Wilson's) and the random-guess line, and the five track deltas
with their paired percentile bootstrap CI (the report's), McNemar p and the seed's reading."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_doceval.kinds.exam.table import answers_from_rows, by_system, correct_vector
from pytest_doceval.paper import (
    Cell,
    PaperTable,
    flag_note,
    flag_reasons,
    interval_note,
    number,
    seed_interval,
)


def _flagged(section: Mapping[str, Any], model: str, seen: dict[str, dict[str, None]]) -> bool:
    """Whether any row of `model` (its systems are ``model-track``) flags `correct`."""
    rows = [r for r in section.get("results") or [] if str(r.get("system", "")).startswith(model)]
    reasons = flag_reasons(rows, "correct")
    if reasons:
        seen.setdefault("correct", {}).update(dict.fromkeys(reasons))
    return bool(reasons)


def accuracy_table(section: Mapping[str, Any]) -> list[PaperTable]:
    entries = [e for e in section.get("accuracy") or [] if isinstance(e, Mapping)]
    if not entries:
        return []
    tracks = [t for t in section.get("tracks") or [] if any(e["track"] == t for e in entries)]
    models = list(dict.fromkeys(str(e["model"]) for e in entries))
    level = float(section.get("confidence", 0.95))
    table = PaperTable(
        f"Accuracy by model and track (mean [{level:.0%} CI] over questions)",
        ["Model", *[f"Track {t}" for t in tracks]],
    )
    seen: dict[str, dict[str, None]] = {}
    answers = by_system(answers_from_rows(section.get("results") or []))
    for model in models:
        flagged = _flagged(section, model, seen)
        cells = [Cell(model)]
        for t in tracks:
            asked = list(answers.get((model, t), {}).values())
            text = seed_interval(correct_vector(asked).tolist(), section)
            cells.append(Cell(text, flagged and bool(asked)))
        table.rows.append(cells)
    chance = (section.get("references") or {}).get("random_by_track") or {}
    if chance:
        table.rows.append([Cell("random guess"), *[Cell(number(chance.get(t))) for t in tracks]])
    table.notes = [
        "Tracks (seed 001, 4.4): A image only; B1 OCR text to the LLM; B2 oracle text to the "
        "LLM; C image and text. Random guess: the accuracy expected from guessing uniformly "
        "among each question's options. n/a: the model was not run on that track.",
        interval_note(section, "questions"),
        *flag_note({m: list(r) for m, r in seen.items()}),
    ]
    return [table]


def delta_table(section: Mapping[str, Any]) -> list[PaperTable]:
    entries = [e for e in section.get("deltas") or [] if isinstance(e, Mapping)]
    if not entries:
        return []
    level = float(section.get("confidence", 0.95))
    table = PaperTable(
        "Track deltas (paired over the questions both tracks asked)",
        ["Model", "Delta", "n", f"Δ [{level:.0%} CI]", "McNemar p", "Reading"],
        align="llrrrl",
    )
    readings: dict[str, str] = {}  # each delta's reading, once, in the notes: not every row
    for e in entries:
        delta = f"Δ({e.get('delta')})"
        if e.get("interpretation"):
            readings.setdefault(delta, str(e["interpretation"]))
        value = f"{e['value']:+.3f}" if isinstance(e.get("value"), float) else "n/a"
        table.rows.append(
            [
                Cell(str(e.get("model"))),
                Cell(delta),
                Cell(str(e.get("n"))),
                Cell(f"{value} [{number(e.get('ci_low'))}, {number(e.get('ci_high'))}]"),
                Cell(number(e.get("p_mcnemar"))),
                Cell("supported" if e.get("supported") is True else "not supported"),
            ]
        )
    table.notes = [
        f"Δ(X−Y) = accuracy on track X − accuracy on track Y. A reading is supported when Δ > 0 "
        f"and McNemar p < {1 - level:.2g}.",
        *[f"{delta}: {reading}." for delta, reading in readings.items()],
        interval_note(section, "the questions both tracks asked (paired)"),
    ]
    return [table]
