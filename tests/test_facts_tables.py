"""Markdown and HTML table parsing (spans, headings, neighbours) and the table check."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from pytest_doceval.kinds.facts.checks import check
from pytest_doceval.kinds.facts.model import Fact, parse_fact
from pytest_doceval.kinds.facts.tables import (
    CellSpec,
    TableData,
    build_table,
    parse_html_tables,
    parse_markdown_tables,
)


def make(**fields: Any) -> Fact:
    return parse_fact({"pdf": "d.pdf", "page": 1, "id": "t", "type": "table", **fields})


def texts(table: TableData, relation: str, pos: tuple[int, int]) -> set[str]:
    return {table.cells[p] for p in table.relations[relation][pos]}


def pos_of(table: TableData, text: str) -> tuple[int, int]:
    (found,) = [p for p, t in table.cells.items() if t == text]
    return found


# --- markdown ---

MARKDOWN = """Some text | with a pipe.

| Year | Revenue | Cost |
|:-----|--------:|:----:|
| 2020 | 10 | 4 |
| 2021 | 12 |
Paragraph after.

a | b
c | d
"""


def test_markdown_tables_rows_and_headings() -> None:
    first, second = parse_markdown_tables(MARKDOWN)
    assert first.rows() == [
        ["Year", "Revenue", "Cost"],
        ["2020", "10", "4"],
        ["2021", "12", ""],  # ragged row padded
    ]
    assert second.rows() == [["a", "b"], ["c", "d"]]  # pipes without outer pipes
    assert pos_of(first, "Year") in first.headings and pos_of(first, "2021") in first.headings
    assert pos_of(first, "Revenue") in first.headings and pos_of(first, "12") not in first.headings
    twelve = pos_of(first, "12")
    assert texts(first, "up", twelve) == {"10"}
    assert texts(first, "left", twelve) == {"2021"}
    assert texts(first, "right", twelve) == set()  # the empty position is not a cell
    assert texts(first, "down", twelve) == set()
    assert texts(first, "top_heading", twelve) == {"Revenue"}
    assert texts(first, "left_heading", twelve) == {"2021"}


def test_single_pipe_line_is_not_a_table() -> None:
    assert parse_markdown_tables("just | one line\n\nno table") == []


CELL = st.text(
    alphabet=st.characters(blacklist_characters="|\n\r", blacklist_categories=["Cs", "Zl", "Zp"]),
    max_size=8,
).map(str.strip)


@st.composite
def grids(draw: st.DrawFn) -> list[list[str]]:
    width = draw(st.integers(1, 4))
    height = draw(st.integers(1, 5))
    rows = [[draw(CELL) for _ in range(width)] for _ in range(height)]
    for row in rows:  # a row of only "-", ":" and spaces reads as a separator line
        if all(set(cell) <= set("-: ") for cell in row):
            row[0] = "x" + row[0]
    return rows


@given(grids())
@settings(max_examples=150)
def test_markdown_round_trip(rows: list[list[str]]) -> None:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    (table,) = parse_markdown_tables("intro\n\n" + "\n".join(lines) + "\n\noutro")
    assert table.rows() == rows
    width = len(rows[0])
    for (r, c), text in table.cells.items():
        assert text == rows[r][c]
        assert ((r, c) in table.headings) == (r == 0 or c == 0)
        assert texts(table, "right", (r, c)) == ({rows[r][c + 1]} if c + 1 < width else set())
        assert texts(table, "up", (r, c)) == ({rows[r - 1][c]} if r > 0 else set())


# --- HTML ---

SPANS = """
<table>
  <thead><tr><th rowspan="2">Region</th><th colspan="2">Sales</th></tr>
         <tr><th>2020</th><th>2021</th></tr></thead>
  <tbody>
    <tr><td>North</td><td>1</td><td>2</td></tr>
    <tr><td rowspan=2>South<br>&amp; East</td><td colspan=2>3 <b>(both)</b></td></tr>
    <tr><td>4</td><td>5</td></tr>
  </tbody>
</table>
"""


def test_html_spans_headings_and_neighbours() -> None:
    (table,) = parse_html_tables(SPANS)
    assert table.rows() == [
        ["Region", "Sales", "Sales"],
        ["Region", "2020", "2021"],
        ["North", "1", "2"],
        ["South\n& East", "3 (both)", "3 (both)"],  # text nodes joined with nothing
        ["South\n& East", "4", "5"],
    ]
    assert {table.cells[p] for p in table.headings} == {"Region", "Sales", "2020", "2021"}
    south = pos_of(table, "South\n& East")
    assert table.normalised[south] == "South & East"
    assert texts(table, "right", south) == {"3 (both)", "4"}  # one per spanned row
    assert texts(table, "up", south) == {"North"}
    both = pos_of(table, "3 (both)")
    assert texts(table, "down", both) == {"4", "5"}  # one per spanned column
    assert texts(table, "top_heading", both) == {"Sales", "2020", "2021"}
    # "South" is a td, not a heading; with no heading to the left, olmOCR-bench takes the cell
    # where the walk ends.
    assert texts(table, "left_heading", both) == {"South\n& East"}
    assert texts(table, "top_heading", pos_of(table, "2020")) == {"Sales"}
    assert texts(table, "left_heading", pos_of(table, "2020")) == {"Region"}


@pytest.mark.parametrize(
    ("html", "rows"),
    [
        ('<table><tr><td rowspan="x">a</td><td colspan="-2">b</td></tr></table>', [["a", "b"]]),
        (
            '<table><tr><td rowspan="0">a</td><td>b</td></tr><tr><td>c</td></tr>'
            "<tr><td>d</td></tr></table>",
            [["a", "b"], ["a", "c"], ["a", "d"]],
        ),
        (
            '<table><tr><td rowspan="3">a</td><td>b</td></tr></table>',  # past the last row
            [["a", "b"], ["a", ""], ["a", ""]],
        ),
        # Unclosed tags nest in html.parser's tree (the next cell is inside the first one), as
        # olmOCR-bench reads them: one cell "abc" in the first row, "c" in the (nested) second.
        ("<TABLE><TR><TD>a<TD>b<TR><TD>c</TABLE>", [["abc"], ["c"]]),
        ("<table><tr><td><p>a</p></td><td><!-- c -->b</td></tr></table>", [["a", "b"]]),
        ("<table></table><table><tr></tr></table>", None),
    ],
)
def test_html_edge_cases(html: str, rows: list[list[str]] | None) -> None:
    tables = parse_html_tables(html)
    assert [t.rows() for t in tables] == ([] if rows is None else [rows])


def test_nested_table_text_and_rows_belong_to_the_outer_table_too() -> None:
    # As in olmOCR-bench (BeautifulSoup's find_all("tr")): the outer table also gets the
    # nested table's rows.
    html = "<table><tr><td>x<table><tr><td>in</td></tr></table></td><td>y</td></tr></table>"
    outer, inner = parse_html_tables(html)
    assert outer.rows() == [["xin", "y"], ["in", ""]]
    assert inner.rows() == [["in"]]


def test_build_table_without_cells_is_none() -> None:
    assert build_table([]) is None
    assert build_table([[CellSpec("a", colspan=2)]]) is not None


# --- the table check ---


def test_table_check_passes_on_markdown_and_html() -> None:
    fact = make(cell="12", up="10", left="2021", top_heading="Revenue", left_heading="2021")
    result = check(fact, MARKDOWN, latin_only=True)
    assert (result.passed, result.score) == (True, 1.0)
    spans = make(cell="4", up="South & East", top_heading="2020", right="5")
    assert check(spans, SPANS, latin_only=True).passed is False  # up of "4" is "3 (both)"
    assert check(make(cell="4", up="3 (both)", right="5"), SPANS, latin_only=True).passed is True
    assert check(make(cell="2021", top_heading="Sales"), SPANS, latin_only=True).passed is True


def test_table_check_failures_explain_what_was_found() -> None:
    no_table = check(make(cell="1"), "plain text", latin_only=True)
    assert (no_table.passed, no_table.explanation) == (
        False,
        "no table (markdown or HTML) in the output",
    )
    no_cell = check(make(cell="Profit"), MARKDOWN, latin_only=True)
    assert no_cell.passed is False
    assert no_cell.explanation.startswith("no cell matches 'Profit' (threshold 1.00); closest")
    best = max(fuzz.ratio("Profit", t) for t in ["Year", "Revenue", "Cost", "2020", "10", "4"])
    assert no_cell.score == pytest.approx(best / 100)
    wrong = check(make(cell="12", up="11", right="5"), MARKDOWN, latin_only=True)
    assert wrong.passed is False
    assert wrong.explanation == (
        "cell '12' found, but the cell above is '10', not '11' (similarity 0.50 < 1.00); "
        "it has no cell to the right"
    )


def test_table_thresholds_follow_max_diffs_with_a_floor_of_one_half() -> None:
    # ratio("Revenue", "Revenues") = 1 - 1/15; threshold with max_diffs=1: 1 - 1/8.
    assert check(make(cell="Revenues"), MARKDOWN, latin_only=True).passed is False
    assert check(make(cell="Revenues", max_diffs=1), MARKDOWN, latin_only=True).passed is True
    # max_diffs larger than the text would make the threshold negative; it stays 0.5, so a
    # cell sharing nothing with the fact still does not match.
    assert fuzz.ratio("Zz", "10") == 0
    far = check(make(cell="Zz", max_diffs=5), "| Zq | 10 |\n|---|---|\n| 1 | 2 |", latin_only=True)
    assert far.passed is True  # "Zq" is at ratio 0.5, exactly the floor
    assert check(make(cell="Zz", max_diffs=5), MARKDOWN, latin_only=True).passed is False


def test_ignore_markdown_tables() -> None:
    fact = make(cell="12", ignore_markdown_tables=True)
    result = check(fact, MARKDOWN, latin_only=True)
    assert (result.passed, result.explanation) == (False, "no table (HTML) in the output")
