"""A facts suite's fact files read into test cases; a bad line never stops the others.

`load_entries` reads every ``*.jsonl`` at the top of the suite (`facts.fact_files`, sorted by
name) line by line through the engine's `parse_fact`. A line that is not UTF-8 or not JSON, a
fact of unknown type, a missing or mistyped field, a ``pdf`` that leaves ``pdfs/``, or an id used
before becomes an entry holding its `FactError`: its tests error with that cause while the rest
run. (The engine's `load_facts` refuses a whole file for one bad line, which is right for a
library and wrong for a test suite.)

Each entry is one case. Its name is the fact's id -- olmOCR-bench requires ids to be unique
across a benchmark's files, so an id names one fact wherever it lives, and the baselines stay
keyed by id when a fact moves to another file. A bad line without a usable id is named
``<file>:<line>``. Entries keep file order, then line order; olmOCR-bench's implicit baseline
facts (`implicit_baselines`: one per PDF that has no baseline fact, in the pseudo file
``baseline``) come last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pytest_doceval.errors import CaseInputError
from pytest_doceval.files import JsonLine, LineProblem, read_jsonl
from pytest_doceval.kinds.facts import Fact, FactError, fact_files, implicit_baselines, parse_fact
from pytest_doceval.kinds.facts.layout import PDF_DIR

__all__ = ["Entry", "Loaded", "load_entries"]


@dataclass(frozen=True)
class Entry:
    """One case: its fact (or why the line cannot be one) and the labels its rows carry."""

    fact: Fact | FactError
    labels: dict[str, str]


@dataclass
class Loaded:
    entries: dict[str, Entry] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _pdf_error(pdf: str) -> str | None:
    """Why `pdf` cannot name a file inside ``pdfs/`` (outputs are looked up by it too)."""
    path = PurePosixPath(pdf)
    if path.is_absolute() or ".." in path.parts or "\\" in pdf:
        return f"field 'pdf' must be a relative path inside {PDF_DIR}/, got {pdf!r}"
    return None


def _read_line(line: JsonLine | LineProblem, path: Path) -> tuple[Fact | FactError, object, object]:
    """One line (`files.read_jsonl`) -> its fact or error, plus the raw ``id`` and ``type`` it
    claims (for naming and labelling a bad line)."""
    number = line.number

    def error(cause: str, fact_id: object = None) -> FactError:
        shown = fact_id if isinstance(fact_id, str) and fact_id else None
        return FactError(cause, file=path.name, line=number, fact_id=shown)

    if isinstance(line, LineProblem):
        return error(line.cause), None, None
    obj = line.value
    raw_id = obj.get("id") if isinstance(obj, dict) else None
    raw_type = obj.get("type") if isinstance(obj, dict) else None
    try:
        fact = parse_fact(obj, file=path.name, line=number)
    except FactError as exc:
        return exc, raw_id, raw_type
    outside = _pdf_error(fact.pdf)
    return (error(outside, raw_id) if outside else fact), raw_id, raw_type


def _label(value: object) -> str:
    return value if isinstance(value, str) and 0 < len(value) <= 40 else "?"


def load_entries(suite_dir: Path) -> Loaded:
    """Every fact line of the suite as a case (module docstring)."""
    loaded = Loaded()
    entries = loaded.entries
    first_use: dict[str, str] = {}  # id -> "file:line" where it was first used
    good: dict[str, list[Fact]] = {}
    bad = 0

    def add_bad(name: str, error: FactError, labels: dict[str, str]) -> None:
        nonlocal bad
        bad += 1
        while name in entries:  # only a pathological id ("a.jsonl:3") can collide
            name += "~"
        entries[name] = Entry(error, labels)

    for path in fact_files(suite_dir):
        try:
            lines = read_jsonl(path, "fact file")
        except CaseInputError as exc:
            error = FactError(str(exc), file=path.name, line=0, fact_id=None)
            add_bad(path.name, error, {"type": "?", "file": path.name})
            continue
        facts = good.setdefault(path.name, [])
        for line in lines:
            number = line.number
            fact, raw_id, raw_type = _read_line(line, path)
            labels = {"type": _label(raw_type), "file": path.name}
            here = f"{path.name}:{number}"
            fresh = isinstance(raw_id, str) and raw_id != "" and raw_id not in first_use
            if isinstance(raw_id, str) and raw_id and not fresh:
                fact = FactError(
                    f"duplicate id (first used in {first_use[raw_id]})",
                    file=path.name,
                    line=number,
                    fact_id=raw_id,
                )
            if fresh:
                first_use[str(raw_id)] = here
            if isinstance(fact, FactError):
                add_bad(str(raw_id) if fresh else here, fact, labels)
                continue
            facts.append(fact)
            entries[fact.id] = Entry(fact, labels)
    pdfs = sorted({fact.pdf for facts in good.values() for fact in facts})
    for baseline in implicit_baselines(pdfs, good):
        if baseline.id in entries:
            loaded.notes.append(
                f"no implicit baseline fact for {baseline.pdf}: its id {baseline.id!r} is "
                "already a fact's"
            )
            continue
        entries[baseline.id] = Entry(baseline, {"type": "baseline", "file": baseline.file})
    if bad:
        loaded.notes.append(
            f"{bad} fact line{'s' if bad != 1 else ''} could not be used: "
            f"{'their tests are errors' if bad != 1 else 'its tests are errors'} naming the cause"
        )
    return loaded
