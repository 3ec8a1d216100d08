"""Scoring an exam suite from cached outputs: 10,000 (question, model, track) rows, statistics
included, must take under 60 s on 2 cores (the "Exam suites" issue, section 6).

A suite of 700 questions (400 with oracle text) is written to a temporary folder with its
PNGs; four models (three plus ``random``) answer on tracks A, B1 and C (8,400 rows) and on B2
where there is oracle text (1,600 rows): 10,000 rows. The cached outputs mix what models really
say: bare digits, circled digits, "정답: ③", letters, long chains of thought ending in a final
answer, refusals and two-answer hedges. Timed, in one process:

1. ``load_questions`` (JSON, validation, every image's PNG header);
2. parsing and scoring every output into a report row (``CaseResult.fill_row``);
3. the report section: ``analyse_suite`` with the generic aggregates and `EXAM_ANALYSES`
   (accuracy, breakdowns, deltas, ANOVA, pairwise, consistency, references) at 1,000
   bootstrap resamples.

    python benchmarks/bench_exam_scoring.py [--questions 700] [--parser robust-v1]
"""

from __future__ import annotations

import argparse
import json
import random
import struct
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

try:
    import pytest_doceval  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.exam.analyses import EXAM_ANALYSES
from pytest_doceval.kinds.exam.answers import PARSERS, ROBUST_V1
from pytest_doceval.kinds.exam.prompts import TRACK_SPECS, TRACKS
from pytest_doceval.kinds.exam.questions import Question, load_questions
from pytest_doceval.kinds.exam.scoring import (
    EXAM_METRICS,
    RANDOM_MODEL,
    exam_labels,
    random_output,
    score_output,
)
from pytest_doceval.report.analysis import analyse_suite
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import new_row

LIMIT_SECONDS = 60.0
NATIONS = ("Korea", "Japan", "India", "Brazil")
TASKS = ("civics", "maths", "geography", "law", "history")
MODELS = {"vlm-large": 0.7, "vlm-small": 0.45, "llm-text": 0.6}
CIRCLED = "①②③④⑤"


def tiny_png() -> bytes:
    """A valid 1x1 grey PNG (the loader reads headers only; no model is called)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x80"))
        + chunk(b"IEND", b"")
    )


PNG = tiny_png()


def write_suite(root: Path, questions: int, rng: random.Random) -> None:
    (root / "images").mkdir(parents=True)
    lines = []
    for q in range(questions):
        qid = f"q{q:05d}"
        (root / "images" / f"{qid}.png").write_bytes(PNG)
        choices = 4 + q % 2
        row: dict[str, Any] = {
            "id": qid,
            "image": f"images/{qid}.png",
            "answer": rng.randint(1, choices),
            "choices": choices,
            "nation": NATIONS[q % len(NATIONS)],
            "task": TASKS[(q // len(NATIONS)) % len(TASKS)],
        }
        if q % 7 < 4:  # 4 in 7 have a human transcription
            row["oracle_text"] = f"Question {q}\n① a\n② b\n③ c\n④ d"
        lines.append(json.dumps(row, ensure_ascii=False))
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def model_output(question: Question, skill: float, rng: random.Random) -> str:
    """What a model might have said, right with probability `skill`, in one of many styles."""
    answer = question.answer
    if rng.random() > skill:
        answer = rng.choice([k for k in range(1, question.choices + 1) if k != question.answer])
    style = rng.random()
    if style < 0.45:
        return str(answer)
    if style < 0.6:
        return CIRCLED[answer - 1]
    if style < 0.7:
        return f"정답: {CIRCLED[answer - 1]}"
    if style < 0.78:
        return f"The answer is ({'ABCDE'[answer - 1]})."
    if style < 0.93:
        reasoning = " ".join(
            f"Option {k} mentions the {1900 + 7 * k} reform, which does not fit."
            for k in range(1, question.choices + 1)
        )
        return f"Let me think step by step.\n{reasoning}\n\nFinal answer: {answer}"
    if style < 0.97:
        return "I cannot determine the answer from the image."
    return f"{answer} or {1 + answer % question.choices}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=int, default=700)
    parser.add_argument("--parser", default=ROBUST_V1, choices=sorted(PARSERS))
    args = parser.parse_args(argv)
    rng = random.Random(0)
    config = StatsConfig(resamples=1000, confidence=0.95, seed=0)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "exam"
        write_suite(root, args.questions, rng)
        # The cache: every (question, model, track) output, made before the clock starts.
        preview = load_questions(root)
        cached: dict[tuple[str, str, str], str] = {}
        for question in preview:
            for track in TRACKS:
                if not TRACK_SPECS[track].runs_on(question.has_oracle):
                    continue
                for model, skill in MODELS.items():
                    cached[question.id, model, track] = model_output(question, skill, rng)
                cached[question.id, RANDOM_MODEL, track] = random_output(question)

        start = time.perf_counter()
        questions = load_questions(root)
        loaded = time.perf_counter()
        rows = []
        for question in questions:
            for track in TRACKS:
                if not TRACK_SPECS[track].runs_on(question.has_oracle):
                    continue
                for model in [*MODELS, RANDOM_MODEL]:
                    score = score_output(question, cached[question.id, model, track], args.parser)
                    result = CaseResult(
                        score.metrics(),
                        labels=exam_labels(question, model, track),
                        details=score.details(),
                        views=score.views(),
                    )
                    row = result.fill_row(new_row(result.suite, result.case, result.system))
                    rows.append({**row, "outcome": "passed", "baseline": None})
        scored = time.perf_counter()
        meta = {
            "kind": "exam",
            "metrics": {name: spec.to_dict() for name, spec in EXAM_METRICS.items()},
            "human_pass_marks": {"Korea": 0.6},
        }
        section = analyse_suite(meta, rows, config, EXAM_ANALYSES)
        done = time.perf_counter()

    total = done - start
    failures = sum(r["metrics"]["parse_failure"] for r in rows)
    print(f"exam scoring, parser {args.parser}: {len(rows):,} rows, {len(questions)} questions")
    print(f"  load questions.jsonl + PNG headers  {loaded - start:7.2f} s")
    print(f"  parse + score + rows                {scored - loaded:7.2f} s")
    print(f"  statistics (aggregates + analyses)  {done - scored:7.2f} s")
    print(f"  total                               {total:7.2f} s  (limit {LIMIT_SECONDS:.0f} s)")
    print(f"  parse failures: {failures:.0f} ({failures / len(rows):.1%})")
    best = max(section["accuracy"], key=lambda e: e["accuracy"])
    print(
        f"  best system: {best['model']}-{best['track']} accuracy {best['accuracy']:.3f} "
        f"[{best['ci_low']:.3f}, {best['ci_high']:.3f}]; random floor "
        f"{section['references']['random']:.3f}"
    )
    return 0 if total < LIMIT_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
