"""An exam suite's cases: ``questions.jsonl``, one question per line.

Each line is a JSON object::

    {"id": "kr-civics-001", "image": "images/kr-civics-001.png", "answer": 3, "choices": 5,
     "nation": "Korea", "task": "civics", "oracle_text": "..."}

- ``id``: unique, non-empty, no whitespace and no ``[`` or ``]`` (it is the case part of the
  test id ``<question>[<model>-<track>]``).
- ``image``: a PNG, relative to the suite folder and inside it, sent at its original resolution
  (never resized or re-encoded: the bytes read here are the bytes the model sees).
- ``answer``: 1 to ``choices``; also written as a letter ``A``-``E`` (either case), a digit
  string ``"3"`` or a circled digit ``"③"`` -- all mapped to 1-5.
- ``choices``: the number of options, 2 to 5 (seed 001's exams have 4 or 5; its prompt offers
  "1, 2, 3, 4, or 5", so more than 5 cannot be answered under it).
- ``nation``, ``task`` (subject or exam type): non-empty strings; every row is grouped by them.
- ``oracle_text`` (optional): a human transcription of the question; track B2 runs on the
  questions that have one.
- ``options`` (optional): the option texts, ``choices`` non-empty strings in order; with them
  ``robust-v1`` also reads an answer written as an option number and that option's text
  (``3. Paris``).
- Any other key (``year``, ``source``, ...) is kept in `Question.extra`, untouched.

Every error is a `CaseInputError` naming the file, the line and the cause; all of a file's
problems are reported at once, so a broken file is fixed in one pass.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_doceval.errors import CaseInputError
from pytest_doceval.files import LineProblem, problems_error, read_jsonl

QUESTIONS = "questions.jsonl"
MIN_CHOICES, MAX_CHOICES = 2, 5
KNOWN_KEYS = frozenset(
    {"id", "image", "answer", "choices", "nation", "task", "oracle_text", "options"}
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ID = re.compile(r"[^\s\[\]]+")
_LETTERS = "ABCDE"
_CIRCLED = "①②③④⑤"
# At most this many problems are listed in one error (a wholly wrong file would be a wall).


@dataclass(frozen=True)
class Question:
    """One validated question. ``image`` is as written (relative to the suite folder);
    ``line`` is its 1-based line in the file, for messages about it later."""

    id: str
    image: str
    answer: int
    choices: int
    nation: str
    task: str
    oracle_text: str | None
    line: int
    extra: Mapping[str, Any] = field(default_factory=dict)
    options: tuple[str, ...] = ()

    @property
    def has_oracle(self) -> bool:
        return self.oracle_text is not None

    def image_path(self, root: Path) -> Path:
        return root / self.image

    def read_image(self, root: Path) -> bytes:
        """The PNG's bytes exactly as stored; a `CaseInputError` naming the question's line if
        the file went missing or is no longer a PNG since the questions were loaded."""
        path = self.image_path(root)
        where = f"{root / QUESTIONS}:{self.line}"
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CaseInputError(
                f"{where}: question {self.id!r}: cannot read image {self.image!r} ({path}): "
                f"{exc.strerror or exc}"
            ) from None
        problem = png_problem(data)
        if problem:
            raise CaseInputError(
                f"{where}: question {self.id!r}: image {self.image!r} ({path}) {problem}"
            )
        return data


def png_problem(head: bytes) -> str | None:
    """Why `head` (a file's first bytes, at least 24) is not a PNG with a usable size, or None.

    The signature and the IHDR chunk (first, 13 bytes: width, height, ...) are all that a
    reader needs to know the image; decoding every pixel at collection would be slow, and a
    corrupt body is the model server's error to report.
    """
    if not head.startswith(PNG_SIGNATURE):
        return "is not a PNG (wrong signature)"
    if len(head) < 24 or head[12:16] != b"IHDR":
        return "is not a PNG (no IHDR header)"
    width, height = struct.unpack(">II", head[16:24])
    if width == 0 or height == 0:
        return f"is an empty PNG ({width}x{height})"
    return None


def parse_answer_key(value: Any, choices: int | None) -> tuple[int | None, str | None]:
    """(answer 1-5, None) or (None, why not) for the ``answer`` field."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        if len(text) == 1 and text.upper() in _LETTERS:
            number = _LETTERS.index(text.upper()) + 1
        elif len(text) == 1 and text in _CIRCLED:
            number = _CIRCLED.index(text) + 1
        elif text.isascii() and text.isdigit():
            number = int(text)
    if number is None:
        return None, f"answer {value!r} is not 1-5 or a letter A-E"
    limit = choices if choices is not None else MAX_CHOICES
    if not 1 <= number <= limit:
        return None, f"answer {value!r} is outside 1..{limit}" + (
            f" (choices = {choices})" if choices is not None else ""
        )
    return number, None


def _string(row: Mapping[str, Any], key: str, problems: list[str]) -> str | None:
    value = row.get(key)
    if value is None:
        problems.append(f"missing {key!r}")
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{key!r} must be a non-empty string, not {value!r}")
        return None
    return value.strip()


def _image_problem(root: Path, image: str) -> str | None:
    relative = Path(image)
    if relative.is_absolute() or ".." in relative.parts:
        return f"image {image!r} must be a path inside the suite folder"
    path = root / relative
    if not path.is_file():
        return f"image {image!r} not found ({path})"
    try:
        with path.open("rb") as handle:
            head = handle.read(24)
    except OSError as exc:
        return f"image {image!r} cannot be read ({path}): {exc.strerror or exc}"
    problem = png_problem(head)
    return f"image {image!r} ({path}) {problem}" if problem else None


def _question(row: Any, line: int, root: Path, check_images: bool) -> Question | list[str]:
    """The question on one line, or the list of what is wrong with it."""
    if not isinstance(row, dict):
        return [f"a question is a JSON object, not {type(row).__name__}"]
    problems: list[str] = []
    qid = row.get("id")
    if not isinstance(qid, str) or not _ID.fullmatch(qid):
        problems.append(f"'id' must be a non-empty string without spaces or brackets, not {qid!r}")
    choices = row.get("choices")
    if isinstance(choices, bool) or not isinstance(choices, int):
        problems.append(
            f"'choices' must be an integer {MIN_CHOICES}-{MAX_CHOICES}, not {choices!r}"
        )
        choices = None
    elif not MIN_CHOICES <= choices <= MAX_CHOICES:
        problems.append(f"'choices' must be {MIN_CHOICES}-{MAX_CHOICES}, not {choices}")
        choices = None
    answer: int | None = None
    if "answer" not in row:
        problems.append("missing 'answer'")
    else:
        answer, why = parse_answer_key(row["answer"], choices)
        if why:
            problems.append(why)
    nation = _string(row, "nation", problems)
    task = _string(row, "task", problems)
    image = _string(row, "image", problems)
    if image is not None and check_images:
        why = _image_problem(root, image)
        if why:
            problems.append(why)
    oracle = row.get("oracle_text")
    if oracle is not None and (not isinstance(oracle, str) or not oracle.strip()):
        problems.append(f"'oracle_text' must be a non-empty string or absent, not {oracle!r}")
    options = row.get("options", [])
    if not (
        isinstance(options, list)
        and all(isinstance(o, str) and o.strip() for o in options)
        and (not options or len(options) == choices)
    ):
        problems.append(
            f"'options' must be a list of {choices or 'choices'} non-empty strings or absent, "
            f"not {options!r}"
        )
        options = []
    if problems:
        return problems
    assert isinstance(qid, str) and isinstance(choices, int) and answer is not None
    assert nation is not None and task is not None and image is not None
    extra = {k: v for k, v in row.items() if k not in KNOWN_KEYS}
    return Question(qid, image, answer, choices, nation, task, oracle, line, extra, tuple(options))


def load_questions(root: Path, *, check_images: bool = True) -> list[Question]:
    """The questions of the suite folder `root` (its ``questions.jsonl``), in file order.

    Blank lines are skipped. With ``check_images`` every image must exist inside the suite and
    start like a PNG. Raises one `CaseInputError` listing every problem as
    ``<file>:<line>: <cause>`` (duplicate ids name both lines).
    """
    path = root / QUESTIONS
    questions: list[Question] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for line in read_jsonl(path, "questions file (an exam suite lists its questions here)"):
        if isinstance(line, LineProblem):
            problems.append(line.where(path))
            continue
        number, row = line.number, line.value
        qid = row.get("id") if isinstance(row, dict) else None
        if isinstance(qid, str) and qid in first_line:
            problems.append(
                f"{path}:{number}: duplicate question id {qid!r} (first on line {first_line[qid]})"
            )
            continue
        if isinstance(qid, str):
            first_line[qid] = number
        result = _question(row, number, root, check_images)
        if isinstance(result, list):
            label = f" (question {qid!r})" if isinstance(qid, str) else ""
            problems.extend(f"{path}:{number}{label}: {why}" for why in result)
        else:
            questions.append(result)
    if problems:
        raise problems_error(problems)
    if not questions:
        raise CaseInputError(f"{path}: no questions")
    return questions
