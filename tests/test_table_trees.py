"""Reading tables out of markdown (pipe, grid, HTML) into PubTabNet's shape, issue 20: by hand,
on the committed pandoc truths, bad input with notes, and hypothesis (never crashes)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.documents.table_trees import Cell, Group, cell_text, read_tables

CASES = Path(__file__).resolve().parent.parent / "cases" / "tables"


def texts(groups: tuple[Group, ...]) -> list[tuple[str, list[list[str]]]]:
    return [(g.tag, [[c.text for c in row] for row in g.rows]) for g in groups]


def test_cell_text_rule() -> None:
    # NFKC, markdown syntax out (emphasis, links, code, HTML tags, escapes), whitespace folded;
    # case, punctuation and maths kept
    assert cell_text("  **Bold**  _it_ [link](http://x.y) `code` ") == "Bold it link code"
    assert cell_text("ﬁve\u00a0×\u2003 2") == "five × 2"
    assert cell_text("a<br>b") == "a b"
    assert cell_text("\\| 3 \\* 4") == "| 3 * 4"
    assert cell_text("Mean $x$, n.s.") == "Mean $x$, n.s."
    assert cell_text("CamelCase") == "CamelCase"
    assert cell_text("[times]{.sans-serif}") == "times"  # pandoc's bracketed span


def test_pipe_table_header_body_and_escaped_pipe() -> None:
    reading = read_tables("Before\n\n| A | **B** |\n|:--|--:|\n| 1 | 2 \\| 3 |\n| 4 | 5 |\n\nAfter")
    (table,) = reading.tables
    assert table.form == "pipe"
    assert texts(table.groups) == [("thead", [["A", "B"]]), ("tbody", [["1", "2 | 3"], ["4", "5"]])]
    assert table.node_count == 2 + 3 + 6
    assert table.shape == (3, 2)
    assert reading.notes == []


def test_ragged_pipe_rows_are_cut_or_padded_to_the_separator_with_a_note() -> None:
    reading = read_tables("| a | b | c |\n|---|---|---|\n| 1 | 2 |\n| 3 | 4 | 5 | 6 |")
    (table,) = reading.tables
    assert texts(table.groups) == [
        ("thead", [["a", "b", "c"]]),
        ("tbody", [["1", "2", ""], ["3", "4", "5"]]),
    ]
    assert reading.notes == [
        "pipe table 1: row 2 has 2 cells where the separator sets 3 columns: padded with "
        "empty cells, as pandoc reads it",
        "pipe table 1: row 3 has 4 cells where the separator sets 3 columns: the rest dropped, "
        "as pandoc reads it",
    ]


def test_pipe_rows_without_separator_are_text() -> None:
    assert read_tables("| a | b |\n| 1 | 2 |").tables == []
    assert read_tables("| a | b |").tables == []
    # right after a line of text: a table (GitHub's reading; pandoc would want a blank line)
    (after_text,) = read_tables("text\n| a | b |\n|---|---|\n| 1 | 2 |").tables
    assert texts(after_text.groups) == [("thead", [["a", "b"]]), ("tbody", [["1", "2"]])]
    (table,) = read_tables("a | b\n--|--\n1 | 2").tables  # outer pipes are optional
    assert texts(table.groups) == [("thead", [["a", "b"]]), ("tbody", [["1", "2"]])]


def test_headerless_tables_have_no_thead() -> None:
    pipe = read_tables("|   |   |\n|:--|:--|\n| 1 | 2 |").tables[0]
    grid = read_tables("+---+---+\n|   |   |\n+===+===+\n| 1 | 2 |\n+---+---+").tables[0]
    for table in (pipe, grid):
        assert texts(table.groups) == [("tbody", [["1", "2"]])]
    # one header cell with text keeps the header
    (kept,) = read_tables("|   | b |\n|---|---|\n| 1 | 2 |").tables
    assert texts(kept.groups) == [("thead", [["", "b"]]), ("tbody", [["1", "2"]])]


def test_grid_table_with_spans() -> None:
    grid = """+-----+-----+
| h1  | h2  |
+=====+=====+
| a b       |
+-----+-----+
| c   | d   |
|     +-----+
|     | e   |
+-----+-----+"""
    (table,) = read_tables(grid).tables
    assert table.form == "grid"
    assert table.groups == (
        Group("thead", ((Cell("h1"), Cell("h2")),)),
        Group(
            "tbody",
            ((Cell("a b", 2, 1),), (Cell("c", 1, 2), Cell("d")), (Cell("e"),)),
        ),
    )


def test_html_table_as_written() -> None:
    html = (
        '<table><caption>x</caption><colgroup><col></colgroup><thead><tr><th colspan="2">'
        "H <em>1</em></th></tr></thead><tbody><tr><td>a&amp;b</td><td rowspan=2>c<br>d</td>"
        "</tr></tbody><tr><td>e</td></tr></table>"
    )
    reading = read_tables(html)
    (table,) = reading.tables
    assert table.groups == (
        Group("thead", ((Cell("H 1", 2, 1),),)),
        Group("tbody", ((Cell("a&b"), Cell("c d", 1, 2)),)),
        Group("", ((Cell("e"),),)),
    )
    assert table.node_count == 2 + 3 + 4  # thead, tbody; 3 tr; 4 td; no node for the bare rows
    assert reading.notes == []


def test_malformed_html_is_read_tolerantly_with_notes() -> None:
    html = '<table><td colspan="zero">a<tr><td>b<td>c<table><tr><td>inner</td></tr></table>'
    reading = read_tables(html + "\n\nafter")
    (table,) = reading.tables
    assert texts(table.groups) == [("", [["a"], ["b", "c inner after"]])]
    assert table.rows[0][0].colspan == 1
    assert reading.notes == [
        "HTML table 1: a cell outside a row: read as a row of its own",
        "HTML table 1: colspan='zero' is not a positive integer: read as 1",
        "HTML table 1: <table> is never closed: read to the end of the text",
    ]


def test_tables_in_text_order_and_html_hides_its_pipes() -> None:
    text = (
        "| p |\n|---|\n| 1 |\n\n<table><tr><td>| not a pipe row |</td></tr></table>\n\n"
        "+---+\n| g |\n+---+\n"
    )
    reading = read_tables(text)
    assert [t.form for t in reading.tables] == ["pipe", "html", "grid"]
    # read inside the HTML table as its text, not as a pipe row
    assert reading.tables[1].rows[0][0].text == "| not a pipe row |"


def test_pandoc_truths_of_the_tables_suite() -> None:
    merged = read_tables((CASES / "merged-cells" / "truth.md").read_text("utf-8")).tables
    (table,) = merged
    assert table.form == "html"
    spans = [
        (c.text, c.colspan, c.rowspan) for r in table.rows for c in r if c.colspan * c.rowspan > 1
    ]
    assert spans == [("Morning", 2, 1), ("Gannet", 1, 2)]
    ledger = read_tables((CASES / "unruled-ledger" / "truth.md").read_text("utf-8")).tables
    # the second table is headerless: pandoc wrote it with an empty header row
    assert [t.shape for t in ledger] == [(5, 3), (3, 2)]
    assert [g.tag for g in ledger[1].groups] == ["tbody"]
    inventory = read_tables((CASES / "long-inventory" / "truth.md").read_text("utf-8")).tables
    assert [t.shape for t in inventory] == [(65, 4)]


table_bits = st.sampled_from(
    ["|", "+", "-", "=", ":", " ", "\n", "a", "<table>", "</table>", "<tr>", "<td>", "</td>",
     '<td colspan="2">', "<th rowspan=x>", "<thead>", "</tbody>", "+---+", "|---|", "\\|", "&amp;"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(table_bits, max_size=60).map("".join)))
@example("|\n|---|")  # no cell at all: pandoc still writes a <tbody>
def test_arbitrary_text_never_crashes_the_readers(text: str) -> None:
    reading = read_tables(text)
    for table in reading.tables:
        assert table.node_count >= 1
        assert all(c.colspan >= 1 and c.rowspan >= 1 for r in table.rows for c in r)
