"""Work around evaluation that a big suite pays per test: each cross-checked against a simple
independent version of the same rule (issue 16, plugin overhead)."""

from __future__ import annotations

import gc
import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.facts.layout import SystemOutputs
from pytest_doceval.report.json_report import report_text
from pytest_doceval.rows import plain
from tests.test_startup import write_one_case_suite

pytest_plugins = ["pytester"]

# -- a system folder's repeat outputs, listed once ---------------------------------------------


def repeats_by_search(folder: Path, stem: str, page: int) -> list[str]:
    """benchmark.py's rule, one regular expression per page over the whole listing."""
    pattern = re.compile(rf"{re.escape(stem)}_pg{page}_repeat(\d+)\.md")
    found = [(int(m.group(1)), n) for n in os.listdir(folder) if (m := pattern.fullmatch(n))]
    return [name for _, name in sorted(found)]


stems = st.sampled_from(["doc", "doc_pg1", "a_pg1_repeat1", "x", "doc.v2"])
names = st.builds(
    lambda stem, page, repeat, tail: f"{stem}_pg{page}_repeat{repeat}{tail}",
    stems,
    st.sampled_from(["1", "2", "01", "10"]),
    st.integers(min_value=1, max_value=12),
    st.sampled_from([".md", ".md", ".md.bak", ".txt"]),
)


@settings(max_examples=60, deadline=None)
@given(files=st.sets(names, max_size=25), stem=stems, page=st.integers(1, 10))
def test_system_outputs_find_what_a_search_per_page_finds(
    files: set[str], stem: str, page: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in files:
            (folder / name).write_text("x")
        outputs = SystemOutputs(folder)
        for _ in range(2):  # the second answer comes from the listing kept by the first
            found = outputs.repeats(f"{stem}.pdf", page)
            assert [p.name for p in found] == repeats_by_search(folder, stem, page)
            assert all(p.parent == folder for p in found)


def test_system_outputs_of_a_pdf_in_a_subfolder_and_a_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "doc_pg2_repeat1.md").write_text("x")
    outputs = SystemOutputs(tmp_path)
    assert outputs.repeats("sub/doc.pdf", 2) == [tmp_path / "sub" / "doc_pg2_repeat1.md"]
    assert outputs.repeats("none/doc.pdf", 2) == []


# -- rows as builtins ----------------------------------------------------------------------------


def plain_reference(value: Any) -> Any:
    """JSON-able builtins, written independently: numpy scalars unwrapped, tuples as lists,
    non-finite floats as None, other objects as their str."""
    if isinstance(value, dict):
        return {str(k): plain_reference(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_reference(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=5),
    st.floats().map(np.float64),
    st.integers(-100, 100).map(np.int64),
    st.booleans().map(np.bool_),
    st.just(Path("a/b")),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), inner, max_size=4),
    ),
    max_leaves=20,
)


@given(values)
def test_plain_matches_an_independent_conversion(value: Any) -> None:
    assert plain(value) == plain_reference(value)


# -- the JSON report, a row a line ----------------------------------------------------------------


def a_report(rows: int, note: str = "") -> dict[str, Any]:
    results = [
        {"case": f"c{i}", "system": "s", "metrics": {"cer": i / 7, "wer": None}, "notes": [note]}
        for i in range(rows)
    ]
    return {
        "schema": "doceval-report/1",
        "suites": {
            "a": {"kind": "documents", "notes": [note], "results": results},
            "b": {"kind": None, "error": "broken", "results": []},
            "c": {"kind": "facts", "error": "no results key"},
        },
    }


@pytest.mark.parametrize("note", ["", "@doceval-results-0@", 'quote " and \u00e9'])
def test_report_text_is_the_report_with_a_row_a_line(note: str) -> None:
    report = a_report(5, note)
    text = report_text(report)
    assert json.loads(text) == report
    if "@" not in note:  # the token itself in the report's text: the plain indented form
        row_lines = [line for line in text.splitlines() if line.strip().startswith('{"case"')]
        assert len(row_lines) == 5
        assert [json.loads(line.rstrip(",")) for line in row_lines] == report["suites"]["a"][
            "results"
        ]
    else:
        assert text == json.dumps(report, indent=2, ensure_ascii=False)


# -- a run as a user makes it ------------------------------------------------------------------


def test_a_suites_folders_are_not_walked(pytester: pytest.Pytester) -> None:
    write_one_case_suite(pytester.path)
    case = pytester.path / "cases" / "docs" / "case1"
    # A test file among a suite's data is data: collecting it would fail the run.
    (case / "test_data.py").write_text("def test_data():\n    raise AssertionError\n")
    result = pytester.runpytest("--doceval", "--doceval-update", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert gc.get_freeze_count() == 0  # the end-of-run freeze was undone


def test_without_doceval_the_same_folders_are_walked(pytester: pytest.Pytester) -> None:
    write_one_case_suite(pytester.path)
    case = pytester.path / "cases" / "docs" / "case1"
    (case / "test_data.py").write_text("def test_data():\n    pass\n")
    pytester.runpytest("cases", "-p", "no:cacheprovider").assert_outcomes(passed=1)
