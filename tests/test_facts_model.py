"""Parsing fact JSONL into typed facts, and the errors a bad fact file gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.errors import CaseInputError
from pytest_doceval.kinds.facts.model import (
    BaselineFact,
    FactError,
    FactFileError,
    FootnoteFact,
    FormatFact,
    MathFact,
    OrderFact,
    TableFact,
    TextFact,
    implicit_baselines,
    load_fact_files,
    load_facts,
    parse_fact,
)

BASE = {"pdf": "doc.pdf", "page": 1, "id": "f1"}


def fact(**fields: Any) -> dict[str, Any]:
    return {**BASE, **fields}


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n",
        encoding="utf-8",
    )
    return path


def test_each_type_parses_to_its_class_with_olmocr_defaults() -> None:
    present = parse_fact(fact(type="present", text="Hello"), file="a.jsonl", line=3)
    assert isinstance(present, TextFact)
    assert (present.case_sensitive, present.first_n, present.last_n) == (True, None, None)
    assert (present.max_diffs, present.checked, present.file, present.line) == (
        0,
        None,
        "a.jsonl",
        3,
    )
    assert isinstance(parse_fact(fact(type="absent", text="x")), TextFact)
    assert isinstance(parse_fact(fact(type="order", before="ab", after="cd")), OrderFact)
    table = parse_fact(fact(type="table", cell="1", up=None, top_heading="Year"))
    assert isinstance(table, TableFact)
    assert (table.up, table.top_heading, table.left) == ("", "Year", "")  # null means unchecked
    baseline = parse_fact(fact(type="baseline", max_length=0))
    assert isinstance(baseline, BaselineFact)
    assert (baseline.max_length, baseline.max_repeats) == (0, 30)
    assert isinstance(parse_fact(fact(type="math", math=r"x^2")), MathFact)
    bold = parse_fact(fact(type="format", text="Results", format="bold"))
    assert isinstance(bold, FormatFact)
    assert (bold.format, bold.case_sensitive) == ("bold", True)
    note = parse_fact(fact(type="footnote", marker="3", appears_after_marker=None))
    assert isinstance(note, FootnoteFact)
    assert (note.marker, note.appears_before_marker, note.appears_after_marker) == ("3", None, None)


def test_optional_olmocr_fields_are_accepted() -> None:
    parsed = parse_fact(
        fact(
            type="present",
            text="t",
            max_diffs=2,
            checked="verified",
            url="https://example.org/a.pdf",
            case_sensitive=False,
            first_n=100,
            last_n=0,  # olmOCR tests `if self.last_n`: 0 is "not set"
        )
    )
    assert isinstance(parsed, TextFact)
    assert (parsed.max_diffs, parsed.checked, parsed.last_n) == (2, "verified", None)


@pytest.mark.parametrize(
    ("obj", "cause"),
    [
        (fact(type="heading", text="x"), 'unknown fact type "heading" (str); known types:'),
        ({"pdf": "doc.pdf", "page": 1, "id": "f1"}, "missing required field 'type'"),
        (fact(type="present"), "missing required field 'text'"),
        ({"type": "present", "text": "x"}, "missing required fields 'pdf', 'page', 'id'"),
        (fact(type="present", text="x", page="1"), "field 'page' must be a positive integer"),
        (fact(type="present", text="x", page=0), "field 'page' must be a positive integer"),
        (fact(type="present", text="x", max_diffs=True), "'max_diffs' must be a non-negative"),
        (fact(type="present", text="x", max_diffs=-1), "'max_diffs' must be a non-negative"),
        (fact(type="present", text=5), "field 'text' must be a string, got 5 (int)"),
        (fact(type="present", text="x", case_sensitive="no"), "must be true or false"),
        (fact(type="present", text="x", checked="yes"), '"verified", "rejected" or null'),
        (fact(type="present", text="x", max_diff=1), "unknown field 'max_diff' for type"),
        (fact(type="present", text="  "), "field 'text' is empty after normalisation"),
        (fact(type="present", text="x", pdf=""), "field 'pdf' must not be empty"),
        (fact(type="order", before="abcd", after="ab", max_diffs=2), "more than half"),
        (fact(type="math", math=" "), "field 'math' must not be empty"),
        (fact(type="baseline", max_repeats=0), "'max_repeats' must be a positive integer"),
        (fact(type="table", cell=["a"]), "field 'cell' must be a string"),
        (fact(type="format", text="x"), "missing required field 'format'"),
        (fact(type="format", text="x", format="underline"), "'heading', 'bold', 'italic'"),
        (fact(type="format", text="**", format="bold"), "'text' is empty after normalisation"),
        (fact(type="footnote"), "missing required field 'marker'"),
        (fact(type="footnote", marker=""), "field 'marker' must not be empty"),
        (fact(type="footnote", marker="1 2"), "field 'marker' must not contain a space"),
        (fact(type="footnote", marker=1), "field 'marker' must be a string"),
        (
            fact(type="footnote", marker="1", appears_before_marker="<b></b>"),
            "'appears_before_marker' is empty after normalisation",
        ),
        (fact(type="footnote", marker="1", text="x"), "unknown field 'text' for type"),
        ([1, 2], "expected a JSON object, got [1, 2] (list)"),
    ],
)
def test_bad_facts_name_file_line_id_and_cause(obj: Any, cause: str) -> None:
    with pytest.raises(FactError) as info:
        parse_fact(obj, file="suite/tables.jsonl", line=12)
    message = str(info.value)
    assert message.startswith("suite/tables.jsonl:12: ")
    assert cause in message
    has_id = isinstance(obj, dict) and obj.get("id")
    assert ("fact 'f1'" in message) == bool(has_id)
    assert info.value.line == 12 and info.value.file == "suite/tables.jsonl"


def test_fact_error_is_a_value_error_and_a_case_input_error() -> None:
    with pytest.raises(ValueError):
        parse_fact({"type": "nope"})
    assert issubclass(FactError, CaseInputError)


def test_facts_are_frozen() -> None:
    parsed = parse_fact(fact(type="present", text="x"))
    assert isinstance(parsed, TextFact)
    with pytest.raises(AttributeError):
        parsed.text = "y"  # type: ignore[misc]


def test_load_facts_reads_in_order_and_skips_blank_lines(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "a.jsonl",
        [fact(type="present", text="x"), "", fact(id="f2", type="absent", text="y")],
    )
    facts = load_facts(path)
    assert [(f.id, f.line) for f in facts] == [("f1", 1), ("f2", 3)]
    assert all(f.file == str(path) for f in facts)


def test_load_facts_reports_every_bad_line_at_once(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            fact(type="present", text="ok"),
            "{not json",
            fact(id="f3", type="table"),
            fact(id="f1", type="absent", text="dup"),
            '"a string"',
        ],
    )
    with pytest.raises(FactFileError) as info:
        load_facts(path)
    lines = str(info.value).splitlines()
    assert lines[0] == "4 bad facts:"
    assert f"{path}:2: fact (no id): not valid JSON" in lines[1]
    assert f"{path}:3: fact 'f3': missing required field 'cell'" in lines[2]
    assert f"{path}:4: fact 'f1': duplicate id (first used on line 1)" in lines[3]
    assert f"{path}:5: fact (no id): expected a JSON object" in lines[4]
    assert [e.line for e in info.value.errors] == [2, 3, 4, 5]
    assert isinstance(info.value, ValueError)


def test_load_fact_files_keys_by_name_and_rejects_ids_shared_between_files(
    tmp_path: Path,
) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [fact(type="present", text="x")])
    b = write_jsonl(tmp_path / "b.jsonl", [fact(id="g1", type="present", text="x")])
    assert list(load_fact_files([a, b])) == ["a.jsonl", "b.jsonl"]
    c = write_jsonl(tmp_path / "c.jsonl", [fact(type="absent", text="x")])
    with pytest.raises(FactFileError, match=r"c\.jsonl:1: fact 'f1': duplicate id \(also in "):
        load_fact_files([a, c])


def test_implicit_baselines_cover_pdfs_without_one() -> None:
    facts = {
        "a.jsonl": [
            parse_fact(fact(type="baseline", pdf="one.pdf")),
            parse_fact(fact(id="f2", type="present", text="x", pdf="two.pdf")),
        ]
    }
    added = implicit_baselines(["one.pdf", "two.pdf", "sub/three.pdf"], facts)
    assert [(b.id, b.pdf, b.page, b.file) for b in added] == [
        ("two.pdf_baseline", "two.pdf", 1, "baseline"),
        ("sub/three.pdf_baseline", "sub/three.pdf", 1, "baseline"),
    ]
