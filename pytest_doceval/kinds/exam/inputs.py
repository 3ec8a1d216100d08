"""What the exam kind reads from a suite folder: the ``[suite]`` and ``[systems.*]`` tables, the
questions (a bad row breaks only its question) and saved outputs.

**Questions.** `pytest_doceval.exam.questions.load_questions` refuses a whole file with one
error listing every problem as ``<file>:<line>...: <cause>`` (at most 20 at a time). The exam
kind wants the other questions to run, so `load_question_set` blanks the lines the loader blames
in a copy (blank lines are skipped and keep the numbering) and loads the rest, until nothing is
left to blame; each blamed line becomes a `Broken` question whose tests error with the loader's
words. A blamed line's question is its id when one can be read, else ``line-<N>``; a duplicate
id breaks the question of that id. A file the loader cannot read at all (missing, not UTF-8,
empty) still fails the suite. The copy is loaded without image checks (its folder has no
images): an image problem past the first 20 problems surfaces when its question's tests read it.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_doceval.config import SuiteSpec
from pytest_doceval.errors import CaseInputError, SuiteConfigError
from pytest_doceval.files import LineProblem, problems_error, read_jsonl
from pytest_doceval.kinds.exam.answers import get_parser
from pytest_doceval.kinds.exam.prompts import TRACKS
from pytest_doceval.kinds.exam.questions import QUESTIONS, Question, load_questions
from pytest_doceval.kinds.exam.scoring import RANDOM_MODEL

# The [suite] keys of the exam kind (`ExamSuite.suite_keys`: the base checks them at load).
KEYS = frozenset(
    {"kind", "models", "tracks", "answer_parser", "ocr", "ocr_max_tokens", "human_pass_marks"}
)
# [systems.<model>] keys: key -> (type, minimum, maximum).
SETTINGS: Mapping[str, tuple[type, float, float]] = {
    "temperature": (float, 0.0, 2.0),
    "max_tokens": (int, 1, 1e9),
    "top_p": (float, 0.0, 1.0),
}
RAPIDOCR = "rapidocr"
DEFAULT_PARSER = "seed-001"
DEFAULT_OCR_MAX_TOKENS = 2048
_USABLE_ID = re.compile(r"[^\s\[\]]+")  # a test id's case part: no spaces, no brackets


@dataclass(frozen=True)
class ExamConfig:
    """An exam suite's choices, checked."""

    models: list[str]
    tracks: list[str]
    parser: str = DEFAULT_PARSER
    ocr: str = RAPIDOCR
    ocr_max_tokens: int = DEFAULT_OCR_MAX_TOKENS
    pass_marks: dict[str, float] = field(default_factory=dict)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)  # generation per model
    model_tracks: dict[str, list[str]] = field(default_factory=dict)  # [systems.<m>] tracks

    def tracks_of(self, model: str) -> list[str]:
        """The tracks `model` runs: the suite's, or its own subset (a text-only model: B1, B2)."""
        return self.model_tracks.get(model, self.tracks)

    def pairs(self) -> list[tuple[str, str]]:
        """Every (model, track) the suite runs, in the order suite.toml lists them."""
        return [(m, t) for m in self.models for t in self.tracks_of(m)]


def read_config(spec: SuiteSpec) -> ExamConfig:
    """The exam keys of `spec`; a `SuiteConfigError` naming the file and the key otherwise."""
    table, file = spec.table, spec.file
    models = _names(table.get("models"), "[suite] models", file)
    tracks = _names(table.get("tracks"), "[suite] tracks", file)
    for track in tracks:
        if track not in TRACKS:
            raise SuiteConfigError(f"{file}: unknown track {track!r} (tracks: A, B1, B2, C)")
    parser = table.get("answer_parser", DEFAULT_PARSER)
    try:
        get_parser(str(parser))
    except ValueError as exc:
        raise SuiteConfigError(f"{file}: {exc}") from None
    ocr = table.get("ocr", RAPIDOCR)
    if not isinstance(ocr, str) or not ocr:
        raise SuiteConfigError(f'{file}: ocr must be "rapidocr" or the name of a model')
    max_tokens = table.get("ocr_max_tokens", DEFAULT_OCR_MAX_TOKENS)
    settings: dict[str, dict[str, Any]] = {}
    model_tracks: dict[str, list[str]] = {}
    for model, given in spec.system_settings.items():
        if model not in models:
            raise SuiteConfigError(f"{file}: [systems.{model}] configures a model not in models")
        allowed = {"seed" if model == RANDOM_MODEL else k for k in SETTINGS} | {"tracks"}
        unknown = sorted(set(given) - allowed)
        if unknown:
            raise SuiteConfigError(
                f"{file}: [systems.{model}]: unknown key(s) {', '.join(unknown)} "
                f"(allowed: {', '.join(sorted(allowed))})"
            )
        if "tracks" in given:
            own = _names(given["tracks"], f"[systems.{model}] tracks", file)
            if not set(own) <= set(tracks):
                raise SuiteConfigError(
                    f"{file}: [systems.{model}] tracks must be some of the suite's tracks "
                    f"({', '.join(tracks)}), not {', '.join(own)}"
                )
            model_tracks[model] = [t for t in tracks if t in own]
        settings[model] = {
            k: _setting(file, f"[systems.{model}] {k}", k, v)
            for k, v in given.items()
            if k != "tracks"
        }
    return ExamConfig(
        models=models,
        tracks=tracks,
        parser=str(parser),
        ocr=ocr,
        ocr_max_tokens=_setting(file, "ocr_max_tokens", "max_tokens", max_tokens),
        pass_marks=_pass_marks(table.get("human_pass_marks", {}), file),
        settings=settings,
        model_tracks=model_tracks,
    )


def _names(value: object, key: str, file: Path) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise SuiteConfigError(f"{file}: {key} must be a non-empty list of names")
    bad = [v for v in value if not v or any(c in v for c in "[]/\\ ")]
    if bad:
        raise SuiteConfigError(f"{file}: {key}: {bad[0]!r} is not a usable name")
    twice = sorted({v for v in value if value.count(v) > 1})
    if twice:
        raise SuiteConfigError(f"{file}: {key} lists {', '.join(twice)} twice")
    return list(value)


def _setting(file: Path, where: str, key: str, value: Any) -> Any:
    """A checked setting `key` (``seed`` or one of `SETTINGS`), written at `where`."""
    if key == "seed":
        if isinstance(value, bool) or not isinstance(value, int):
            raise SuiteConfigError(f"{file}: {where} must be an integer, not {value!r}")
        return value
    kind, low, high = SETTINGS[key]
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    ok = ok and (kind is float or isinstance(value, int)) and low <= value <= high
    if not ok:
        what = "an integer >= 1" if kind is int else f"a number in [{low:g}, {high:g}]"
        raise SuiteConfigError(f"{file}: {where} must be {what}, not {value!r}")
    return kind(value)


def _pass_marks(value: object, file: Path) -> dict[str, float]:
    marks = value if isinstance(value, dict) else None
    if marks is None or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1
        for v in marks.values()
    ):
        raise SuiteConfigError(
            f"{file}: human_pass_marks is a table of nation = fraction (Korea = 0.6, not 60)"
        )
    return {str(k): float(v) for k, v in marks.items()}


# -- questions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Broken:
    """A question the loader refused: where, the loader's messages, the labels it could read
    and whether it has oracle text (so its B2 test exists too)."""

    line: int
    messages: list[str]
    labels: dict[str, str]
    oracle: bool


@dataclass(frozen=True)
class QuestionSet:
    questions: list[Question]
    broken: dict[str, Broken]

    @property
    def by_id(self) -> dict[str, Question]:
        return {q.id: q for q in self.questions}


def _problem_lines(message: str, path: Path) -> dict[int, list[str]]:
    """The loader's problems by line number."""
    out: dict[int, list[str]] = {}
    prefix = f"{path}:"
    for entry in message.splitlines():
        match = re.match(r"(\d+)\D", entry[len(prefix) :]) if entry.startswith(prefix) else None
        if match:
            out.setdefault(int(match.group(1)), []).append(entry)
    return out


def load_question_set(root: Path) -> QuestionSet:
    """The questions of the suite folder `root` that load, and the broken ones."""
    try:
        return QuestionSet(load_questions(root), {})
    except CaseInputError as exc:
        error = exc
    path = root / QUESTIONS
    if not _problem_lines(str(error), path):
        raise error  # missing, not UTF-8, empty: no line to blame
    # Split as `read_jsonl` does (bytes, so line numbers agree); a line that is not UTF-8 is
    # one of the problems: read as empty, so its case is named by its line, never by a guess.
    data = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    lines = [_utf8_or_empty(raw) for raw in data.splitlines()]
    problems: dict[int, list[str]] = {}
    questions: list[Question] = []
    with tempfile.TemporaryDirectory(prefix="doceval-exam-") as tmp:
        copy = Path(tmp) / QUESTIONS
        while True:
            found = _problem_lines(str(error), path)
            if not found or found.keys() <= problems.keys():
                raise error  # nothing new to blame on a line: do not loop
            problems.update(found)
            kept = ["" if n in problems else line for n, line in enumerate(lines, 1)]
            if not any(line.strip() for line in kept):
                break
            copy.write_text("\n".join(kept) + "\n", encoding="utf-8")
            try:
                questions = load_questions(Path(tmp), check_images=False)
                break
            except CaseInputError as exc:
                error = CaseInputError(str(exc).replace(str(copy), str(path)))
    return QuestionSet(questions, _broken(lines, problems, {q.id: q for q in questions}))


def _utf8_or_empty(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""


def _broken(
    lines: list[str], problems: Mapping[int, list[str]], loaded: Mapping[str, Question]
) -> dict[str, Broken]:
    out: dict[str, Broken] = {}
    for number, messages in sorted(problems.items()):
        try:
            row = json.loads(lines[number - 1])
        except (ValueError, IndexError):
            row = None
        row = row if isinstance(row, dict) else {}
        qid = row.get("id")
        name = qid if isinstance(qid, str) and _USABLE_ID.fullmatch(qid) else f"line-{number}"
        known = loaded.get(name)
        if name in out:
            out[name].messages.extend(messages)
        elif known is not None:  # a duplicate of a question that loaded: it breaks that one
            labels = {"nation": known.nation, "task": known.task}
            out[name] = Broken(known.line, list(messages), labels, known.has_oracle)
        else:
            labels = {k: str(row.get(k) or "") for k in ("nation", "task")}
            out[name] = Broken(
                number, list(messages), labels, isinstance(row.get("oracle_text"), str)
            )
    return out


# -- saved outputs ---------------------------------------------------------------------------


def read_outputs(path: Path) -> dict[str, str]:
    """Saved outputs, ``{"id": ..., "output": ...}`` per line (an empty output is an answer:
    the model said nothing); a `CaseInputError` listing every bad line otherwise."""
    out: dict[str, str] = {}
    problems: list[str] = []
    for line in read_jsonl(path, "saved outputs"):
        if isinstance(line, LineProblem):
            problems.append(line.where(path))
            continue
        number, row = line.number, line.value
        qid = row.get("id") if isinstance(row, dict) else None
        output = row.get("output") if isinstance(row, dict) else None
        if not isinstance(qid, str) or not isinstance(output, str):
            problems.append(f'{path}:{number}: a row is {{"id": "<question>", "output": "<text>"}}')
        elif qid in out:
            problems.append(f"{path}:{number}: a second output for question {qid!r}")
        else:
            out[qid] = output
    if problems:
        raise problems_error(problems)
    return out
