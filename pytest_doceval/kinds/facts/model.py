"""olmOCR-bench facts as typed, frozen dataclasses, parsed from JSONL with errors that say where.

A fact file holds one JSON object per line. Each object becomes one of the `Fact` classes, chosen
by its ``type``; the fields and defaults are olmOCR-bench's (``olmocr/bench/tests.py``). What
olmOCR rejects is rejected here too (empty ``pdf``/``id``/``text``, an ``order`` fact whose
``max_diffs`` exceeds half of either string, duplicate ids); on top of that every field's JSON
type is checked, and a key no fact type knows is an error, because a misspelt optional field
(``max_diff``) would otherwise silently fall back to its default.

Fact strings are stored as written. Checks normalise them (and the output) when they run, so an
explanation can quote what the fact file says.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Literal

from pytest_doceval.errors import CaseInputError
from pytest_doceval.files import LineProblem, read_jsonl
from pytest_doceval.kinds.facts.normalise import normalise_text

__all__ = [
    "FACT_TYPES",
    "BaselineFact",
    "Fact",
    "FactError",
    "FactFileError",
    "FootnoteFact",
    "FormatFact",
    "MathFact",
    "OrderFact",
    "TableFact",
    "TextFact",
    "implicit_baselines",
    "load_fact_files",
    "load_facts",
    "parse_fact",
]


class FactError(CaseInputError, ValueError):
    """One fact that cannot be used as written: names the file, line, fact id and cause."""

    def __init__(self, cause: str, *, file: str, line: int, fact_id: str | None) -> None:
        self.cause = cause
        self.file = file
        self.line = line
        self.fact_id = fact_id
        where = f"{file}:{line}" if line else file
        name = f"fact {fact_id!r}" if fact_id else "fact (no id)"
        super().__init__(f"{where}: {name}: {cause}")


class FactFileError(FactError):
    """Every bad line of one or more fact files, reported together (not only the first)."""

    def __init__(self, errors: Sequence[FactError]) -> None:
        self.errors = tuple(errors)
        first = self.errors[0]
        super().__init__(first.cause, file=first.file, line=first.line, fact_id=first.fact_id)
        count = len(self.errors)
        head = f"{count} bad fact{'s' if count != 1 else ''}:"
        self.args = ("\n".join([head, *(f"  {e}" for e in self.errors)]),)


@dataclass(frozen=True, kw_only=True)
class _FactBase:
    """Fields every fact has. ``file``/``line`` say where it was read (not part of olmOCR)."""

    pdf: str
    page: int
    id: str
    max_diffs: int = 0
    checked: Literal["verified", "rejected"] | None = None
    url: str | None = None
    file: str = ""
    line: int = 0


@dataclass(frozen=True, kw_only=True)
class TextFact(_FactBase):
    """``present``/``absent``: `text` is (or is not) in the output, fuzzily."""

    type: Literal["present", "absent"]
    text: str
    case_sensitive: bool = True
    first_n: int | None = None
    last_n: int | None = None


@dataclass(frozen=True, kw_only=True)
class OrderFact(_FactBase):
    """``order``: an occurrence of `before` starts before an occurrence of `after`."""

    type: Literal["order"]
    before: str
    after: str


@dataclass(frozen=True, kw_only=True)
class TableFact(_FactBase):
    """``table``: a table cell matching `cell` has the named neighbours ("" = not checked)."""

    type: Literal["table"]
    cell: str
    up: str = ""
    down: str = ""
    left: str = ""
    right: str = ""
    top_heading: str = ""
    left_heading: str = ""
    ignore_markdown_tables: bool = False

    RELATIONS: ClassVar[tuple[str, ...]] = (
        "up",
        "down",
        "left",
        "right",
        "top_heading",
        "left_heading",
    )


@dataclass(frozen=True, kw_only=True)
class BaselineFact(_FactBase):
    """``baseline``: not blank (or blank enough, with `max_length`), no runaway repeats, no
    out-of-script characters."""

    type: Literal["baseline"]
    max_length: int | None = None
    max_length_skips_image_alt_tags: bool = False
    max_repeats: int = 30
    check_disallowed_characters: bool = True


@dataclass(frozen=True, kw_only=True)
class MathFact(_FactBase):
    """``math``: an equation of the output equals the LaTeX `math`."""

    type: Literal["math"]
    math: str
    ignore_dollar_delimited: bool = False


FORMATS = ("heading", "bold", "italic")


@dataclass(frozen=True, kw_only=True)
class FormatFact(_FactBase):
    """``format``: `text` is inside a heading, a bold span or an italic span (`format`)."""

    type: Literal["format"]
    text: str
    format: Literal["heading", "bold", "italic"]
    case_sensitive: bool = True


@dataclass(frozen=True, kw_only=True)
class FootnoteFact(_FactBase):
    """``footnote``: `marker` appears as ``[^marker]``, ``<sup>marker</sup>`` or Unicode
    superscript digits, with `appears_before_marker` ending just before one occurrence and
    `appears_after_marker` starting just after one (each checked only when given)."""

    type: Literal["footnote"]
    marker: str
    appears_before_marker: str | None = None
    appears_after_marker: str | None = None


Fact = TextFact | OrderFact | TableFact | BaselineFact | MathFact | FormatFact | FootnoteFact

_CLASS_OF_TYPE: dict[str, type[Fact]] = {
    "present": TextFact,
    "absent": TextFact,
    "order": OrderFact,
    "table": TableFact,
    "baseline": BaselineFact,
    "math": MathFact,
    "format": FormatFact,
    "footnote": FootnoteFact,
}
FACT_TYPES: tuple[str, ...] = tuple(_CLASS_OF_TYPE)

# Per field: the JSON types accepted (bool is excluded from int explicitly below), whether null
# is accepted, and, for null, the value it stands for.
_STRING_FIELDS = {"pdf", "id", "text", "before", "after", "cell", "math", "url", "marker"}
# olmOCR skips these checks when the field is null or "" (``if self.appears_before_marker:``).
_FOOTNOTE_CONTEXT = {"appears_before_marker", "appears_after_marker"}
_RELATION_FIELDS = set(TableFact.RELATIONS)  # olmOCR treats null like "" (not checked)
_BOOL_FIELDS = {
    "case_sensitive",
    "ignore_markdown_tables",
    "max_length_skips_image_alt_tags",
    "check_disallowed_characters",
    "ignore_dollar_delimited",
}
_OPTIONAL = {"checked", "url", "first_n", "last_n", "max_length", *_FOOTNOTE_CONTEXT}
_PROVENANCE = {"file", "line"}


def _describe(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    if len(shown) > 40:
        shown = shown[:39] + "…"
    return "null" if value is None else f"{shown} ({type(value).__name__})"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _field_error(name: str, value: Any) -> str | None:
    """Why `value` cannot be field `name`, or None when it can."""
    if value is None and (name in _OPTIONAL or name in _RELATION_FIELDS):
        return None
    if name in _STRING_FIELDS or name in _RELATION_FIELDS or name in _FOOTNOTE_CONTEXT:
        return None if isinstance(value, str) else f"must be a string, got {_describe(value)}"
    if name in _BOOL_FIELDS:
        return None if isinstance(value, bool) else f"must be true or false, got {_describe(value)}"
    if name == "format":
        if value in FORMATS:
            return None
        return f"must be one of {', '.join(map(repr, FORMATS))}, got {_describe(value)}"
    if name == "checked":
        if value in ("verified", "rejected"):
            return None
        return f'must be "verified", "rejected" or null, got {_describe(value)}'
    minimum = {"page": 1, "max_repeats": 1, "first_n": 0, "last_n": 0}.get(name, 0)
    if _is_int(value) and value >= minimum:
        return None
    kind = "a positive integer" if minimum else "a non-negative integer"
    return f"must be {kind}, got {_describe(value)}"


def _semantic_error(fact: Fact) -> str | None:
    """olmOCR's own validation (its ``__post_init__`` rules), on the parsed fact."""
    if not fact.pdf:
        return "field 'pdf' must not be empty"
    if not fact.id:
        return "field 'id' must not be empty"
    if isinstance(fact, TextFact | FormatFact) and not normalise_text(fact.text).strip():
        return "field 'text' is empty after normalisation"
    if isinstance(fact, FootnoteFact):
        return _footnote_error(fact)
    if isinstance(fact, OrderFact):
        before, after = normalise_text(fact.before), normalise_text(fact.after)
        if not before.strip() or not after.strip():
            side = "before" if not before.strip() else "after"
            return f"field '{side}' is empty after normalisation"
        if fact.max_diffs > len(before) // 2 or fact.max_diffs > len(after) // 2:
            shorter = min(len(before), len(after))
            return (
                f"max_diffs {fact.max_diffs} is more than half of the shorter string "
                f"({shorter} characters after normalisation); olmOCR-bench rejects this"
            )
    if isinstance(fact, MathFact) and not fact.math.strip():
        return "field 'math' must not be empty"
    return None


def _footnote_error(fact: FootnoteFact) -> str | None:
    """olmOCR's FootnoteTest rules: a marker without a space; context texts, when given, not
    blank once normalised."""
    if not fact.marker:
        return "field 'marker' must not be empty"
    if " " in fact.marker:  # olmOCR refuses only the space character, not tabs or newlines
        return f"field 'marker' must not contain a space, got {_describe(fact.marker)}"
    for name in sorted(_FOOTNOTE_CONTEXT):
        value = getattr(fact, name)
        if value and not normalise_text(value).strip():
            return f"field {name!r} is empty after normalisation"
    return None


def parse_fact(obj: Any, *, file: str | os.PathLike[str] = "", line: int = 0) -> Fact:
    """One decoded JSON value -> its `Fact`; raises `FactError` naming file, line, id and cause."""
    file = os.fspath(file)
    if not isinstance(obj, dict):
        raise FactError(
            f"expected a JSON object, got {_describe(obj)}", file=file, line=line, fact_id=None
        )
    raw_id = obj.get("id")
    fact_id = raw_id if isinstance(raw_id, str) and raw_id else None

    def fail(cause: str) -> FactError:
        return FactError(cause, file=file, line=line, fact_id=fact_id)

    kind = obj.get("type")
    if "type" not in obj:
        raise fail("missing required field 'type'")
    if not isinstance(kind, str) or kind not in _CLASS_OF_TYPE:
        known = ", ".join(FACT_TYPES)
        raise fail(f"unknown fact type {_describe(kind)}; known types: {known}")
    cls = _CLASS_OF_TYPE[kind]
    known_fields = {f.name: f for f in fields(cls) if f.name not in _PROVENANCE}
    unknown = sorted(set(obj) - set(known_fields))
    if unknown:
        names = ", ".join(repr(u) for u in unknown)
        raise fail(f"unknown field{'s' if len(unknown) > 1 else ''} {names} for type {kind!r}")
    missing = [
        name
        for name, f in known_fields.items()
        if name not in obj and f.default is MISSING and f.default_factory is MISSING
    ]
    if missing:
        names = ", ".join(repr(m) for m in missing)
        raise fail(f"missing required field{'s' if len(missing) > 1 else ''} {names}")
    values: dict[str, Any] = {}
    for name, value in obj.items():
        if name == "type":
            values[name] = value
            continue
        cause = _field_error(name, value)
        if cause:
            raise fail(f"field {name!r} {cause}")
        if value is None and name in _RELATION_FIELDS:
            value = ""
        if name in ("first_n", "last_n") and value == 0:
            value = None  # olmOCR tests `if self.first_n:`, so 0 means "whole output"
        values[name] = value
    fact = cls(**values, file=file, line=line)
    cause = _semantic_error(fact)
    if cause:
        raise fail(cause)
    return fact


def load_facts(path: str | os.PathLike[str]) -> list[Fact]:
    """Every fact of one JSONL file, in file order; blank lines are skipped.

    Every bad line is reported (one `FactFileError` listing them all), as are ids used twice in
    the file (olmOCR-bench refuses those too: results are keyed by id).
    """
    name = os.fspath(path)
    facts: list[Fact] = []
    errors: list[FactError] = []
    first_line_of: dict[str, int] = {}
    for line in read_jsonl(Path(path), "fact file"):
        if isinstance(line, LineProblem):
            errors.append(FactError(line.cause, file=name, line=line.number, fact_id=None))
            continue
        number, obj = line.number, line.value
        try:
            fact = parse_fact(obj, file=name, line=number)
        except FactError as exc:
            errors.append(exc)
            continue
        if fact.id in first_line_of:
            errors.append(
                FactError(
                    f"duplicate id (first used on line {first_line_of[fact.id]})",
                    file=name,
                    line=number,
                    fact_id=fact.id,
                )
            )
            continue
        first_line_of[fact.id] = number
        facts.append(fact)
    if errors:
        raise FactFileError(errors)
    return facts


def load_fact_files(paths: Iterable[str | os.PathLike[str]]) -> dict[str, list[Fact]]:
    """Facts per file name (the file's base name, as olmOCR-bench reports it), in path order.

    Errors of all files are collected into one `FactFileError`; an id used in two files is an
    error too, because olmOCR-bench maps each id to the one file it came from.
    """
    by_file: dict[str, list[Fact]] = {}
    errors: list[FactError] = []
    seen: dict[str, Fact] = {}
    for path in paths:
        try:
            facts = load_facts(path)
        except FactFileError as exc:
            errors.extend(exc.errors)
            continue
        key = Path(path).name
        if key in by_file:
            errors.append(
                FactError(
                    "a fact file of this name was already read",
                    file=os.fspath(path),
                    line=0,
                    fact_id=None,
                )
            )
            continue
        for fact in facts:
            if fact.id in seen:
                first = seen[fact.id]
                errors.append(
                    FactError(
                        f"duplicate id (also in {first.file}:{first.line})",
                        file=fact.file,
                        line=fact.line,
                        fact_id=fact.id,
                    )
                )
            else:
                seen[fact.id] = fact
        by_file[key] = facts
    if errors:
        raise FactFileError(errors)
    return by_file


IMPLICIT_BASELINE_FILE = "baseline"


def implicit_baselines(
    pdfs: Iterable[str], facts_by_file: Mapping[str, Sequence[Fact]]
) -> list[BaselineFact]:
    """The baseline facts olmOCR-bench adds itself: one per PDF that has none, on page 1.

    olmOCR-bench (``benchmark.py``) gives every PDF without a ``baseline`` fact a default one,
    ``id=f"{pdf}_baseline"``, counted in a pseudo fact file named ``"baseline"``; that file is
    then one of the files its headline score averages over (unless ``--skip_baseline``).
    """
    has_baseline = {
        fact.pdf
        for facts in facts_by_file.values()
        for fact in facts
        if isinstance(fact, BaselineFact)
    }
    return [
        BaselineFact(
            pdf=pdf, page=1, id=f"{pdf}_baseline", type="baseline", file=IMPLICIT_BASELINE_FILE
        )
        for pdf in pdfs
        if pdf not in has_baseline
    ]
