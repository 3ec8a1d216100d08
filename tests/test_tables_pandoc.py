"""Tables read as pandoc reads them (issue 26): our reader's tables against the ``<table>``
elements of ``pandoc -f markdown -t html`` -- how many, header or not, rows, cells and cell text
-- on a corpus of snippets (tests/data/pandoc_tables.md) and on generated pipe tables. Skipped
cleanly without pandoc."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pandoc_support import needs_pandoc, pandoc_html

from pytest_doceval.kinds.documents.table_trees import read_tables
from pytest_doceval.kinds.documents.tables import score_tables

lxml_html = pytest.importorskip("lxml.html")

pytestmark = needs_pandoc

CORPUS = Path(__file__).resolve().parent / "data" / "pandoc_tables.md"
STRUCTURE_ONLY = "(structure only)"  # pandoc renders maths; we keep "$x$" as the cell's text
# Our one difference from pandoc (markdown.pandoc_table_blocks): a table may follow a text line
# directly. Pandoc's reading of such a snippet is taken with a blank line put before the table.
AFTER_TEXT = "GFM's reading"

# One table as compared: whether it has a <thead>, and its rows' cell texts.
Shape = tuple[bool, list[list[str]]]


def _snippets() -> list[tuple[str, str]]:
    chunks = re.split(r"^%%% ", CORPUS.read_text("utf-8"), flags=re.MULTILINE)[1:]
    return [(name, body) for name, _, body in (c.partition("\n") for c in chunks)]


def pandoc_tables(markdown: str) -> list[Shape]:
    """The top-level tables of pandoc's HTML, read with lxml (not our reader)."""
    html = pandoc_html(markdown)
    if "<table" not in html:
        return []
    root = lxml_html.fromstring(f"<div>{html}</div>")
    shapes: list[Shape] = []
    for table in root.iter("table"):
        rows = [
            [" ".join("".join(cell.itertext()).split()) for cell in tr if cell.tag in ("td", "th")]
            for tr in table.iter("tr")
        ]
        shapes.append((table.find("thead") is not None, rows))
    return shapes


def our_tables(markdown: str) -> list[Shape]:
    return [
        (
            any(group.tag == "thead" for group in table.groups),
            [[cell.text for cell in row] for row in table.rows],
        )
        for table in read_tables(markdown).tables
    ]


def _structure(shapes: list[Shape]) -> list[tuple[bool, list[int]]]:
    return [(head, [len(row) for row in rows]) for head, rows in shapes]


@pytest.mark.parametrize(("name", "markdown"), _snippets(), ids=[n for n, _ in _snippets()])
def test_corpus_tables_equal_pandocs(name: str, markdown: str) -> None:
    ours = our_tables(markdown)
    if AFTER_TEXT in name:
        assert pandoc_tables(markdown) == []  # pandoc: more of the paragraph
        markdown = markdown.replace("\n", "\n\n", 1)
    theirs = pandoc_tables(markdown)
    if STRUCTURE_ONLY in name:
        assert _structure(ours) == _structure(theirs)
    else:
        assert ours == theirs


def test_the_corpus_holds_every_form_the_issue_names() -> None:
    names = " / ".join(name for name, _ in _snippets())
    for form in (
        "headerless pipe table",
        "headerless grid table",
        "one pipe line is a paragraph",
        "pipe rows without a separator",
        "no outer pipes",
        "pipe inside a code span",
        "escaped pipe",
        "alignment row",
        "grid table with a header",
    ):
        assert form in names


TABLE_CASES = Path(__file__).resolve().parent.parent / "cases" / "tables"


def test_shipped_headerless_truth_has_no_thead() -> None:
    markdown = (TABLE_CASES / "unruled-ledger" / "truth.md").read_text("utf-8")
    assert our_tables(markdown) == pandoc_tables(markdown)
    assert [head for head, _ in our_tables(markdown)] == [True, False]


@pytest.mark.parametrize("case", sorted(p.name for p in TABLE_CASES.glob("*/") if p.is_dir()))
def test_pandocs_html_of_a_shipped_truth_is_a_perfect_output(case: str) -> None:
    # Issue 26: the HTML pandoc writes of unruled-ledger's truth scored table_teds 0.636.
    markdown = (TABLE_CASES / case / "truth.md").read_text("utf-8")
    score = score_tables(markdown, pandoc_html(markdown))
    teds = {m: score.metrics[m] for m in ("table_teds", "table_teds_s")}  # beside GriTS
    assert teds == {"table_teds": 1.0, "table_teds_s": 1.0}
    assert score.notes == []


# Generated pipe tables. Cell text avoids what pandoc's smart typography rewrites (quotes,
# dashes, dots) and what it renders differently by design (maths, raw HTML).
_WORD = st.text(alphabet="abcxyz019", min_size=1, max_size=4)
_CELL = st.one_of(
    st.just(""),
    _WORD,
    st.tuples(_WORD, _WORD).map(" ".join),
    _WORD.map("**{}**".format),
    _WORD.map("*{}*".format),
    st.tuples(_WORD, _WORD).map(lambda ab: f"`{ab[0]}|{ab[1]}`"),
    st.tuples(_WORD, _WORD).map(lambda ab: f"{ab[0]} \\| {ab[1]}"),
)


@st.composite
def pipe_tables(draw: st.DrawFn) -> str:
    columns = draw(st.integers(1, 4))
    outer = columns == 1 or draw(st.booleans())  # one column needs its outer pipes
    align = draw(st.lists(st.sampled_from(["---", ":--", "--:", ":-:"]), min_size=columns,
                          max_size=columns))  # fmt: skip

    def line(cells: list[str]) -> str:
        inner = " | ".join(cells)
        return f"| {inner} |" if outer else inner

    def row() -> list[str]:
        width = draw(st.integers(max(1, columns - 1), columns + 1))  # ragged now and then
        cells = draw(st.lists(_CELL, min_size=width, max_size=width))
        if not outer and not cells[0]:
            cells[0] = "a"  # a blank first cell without an outer pipe opens no row
        return cells

    head = draw(st.one_of(st.just([""] * columns), st.lists(_CELL, min_size=columns,
                                                            max_size=columns)))  # fmt: skip
    if not outer and not head[0]:
        head = ["h", *head[1:]]
    body = [row() for _ in range(draw(st.integers(0, 3)))]
    return "\n".join([line(head), line(align), *map(line, body)])


@settings(max_examples=12, deadline=None)
@given(st.lists(pipe_tables(), min_size=1, max_size=8))
def test_generated_pipe_tables_equal_pandocs(tables: list[str]) -> None:
    # Many tables in one pandoc call, each its own block.
    markdown = "\n\nbetween\n\n".join(tables)
    assert our_tables(markdown) == pandoc_tables(markdown)
