"""The table pieces of our OmniDocBench scoring, each against the reference's own function on
generated input (hypothesis): the markdown table finder against its ``md_tex_filter``, the table
normaliser against its ``normalized_table``, TEDS / TEDS-S against its ``TEDS`` class; and the
pairing rule (unmatched predicted tables dropped) by hand."""

from __future__ import annotations

import math
from typing import Any

import omnidocbench_reference as reference
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.omnidocbench.markdown_tables import predicted_tables
from pytest_doceval.kinds.omnidocbench.scoring import score_page
from pytest_doceval.kinds.omnidocbench.table_html import normalised_table_html
from pytest_doceval.kinds.omnidocbench.tables import pair_tables
from pytest_doceval.kinds.omnidocbench.teds import teds_pair

try:
    reference.load()
    HAVE_REFERENCE = True
except reference.Unavailable:  # pragma: no cover - depends on the machine
    HAVE_REFERENCE = False
needs_reference = pytest.mark.skipif(not HAVE_REFERENCE, reason="OmniDocBench reference absent")

CELL_TEXT = st.sampled_from(
    [
        "",
        "a",
        "Total",
        "12.5",
        " x  y ",
        "-",
        "–",
        "$x$",
        r"\(\alpha\)",
        "✓",
        "&amp;",
        "a&nbsp;b",
        "<b>bold</b>",
        "<span>s</span>",
        "<sup>2</sup>",
        "中文",
        "ﬁ",
        r"\%",
        "<br>",
        "a\nb",
    ]
)


@st.composite
def html_tables(draw: st.DrawFn) -> str:
    rows = draw(st.integers(1, 4))
    cols = draw(st.integers(1, 3))
    header = draw(st.booleans())
    parts = [
        "<table" + draw(st.sampled_from(["", ' border="1"', " class='x'", ' style="a"'])) + ">"
    ]
    if draw(st.booleans()):
        parts.append("<colgroup><col></colgroup>")
    for r in range(rows):
        tag = "th" if header and r == 0 else "td"
        cells = []
        for _ in range(cols):
            span = draw(st.sampled_from(["", ' colspan="2"', ' rowspan="2"', ' align="left"']))
            cells.append(f"<{tag}{span}>{draw(CELL_TEXT)}</{tag}>")
        row = "<tr>" + "".join(cells) + "</tr>"
        if header and r == 0 and draw(st.booleans()):
            row = "<thead>" + row + "</thead>"
        parts.append(row)
    if draw(st.booleans()):
        parts.insert(1, "<tbody>")
        parts.append("</tbody>")
    parts.append("</table>")
    return draw(st.sampled_from(["", "\n"])).join(parts)


@st.composite
def pipe_tables(draw: st.DrawFn) -> str:
    cols = draw(st.integers(1, 3))
    rows = draw(st.integers(1, 3))
    cell = st.sampled_from(["a", "12", "x y", "", "$a|b$", "中"])
    lines = ["| " + " | ".join(draw(cell) for _ in range(cols)) + " |"]
    lines.append("|" + draw(st.sampled_from(["---|", ":---|", " - |"])) * cols)
    lines += ["| " + " | ".join(draw(cell) for _ in range(cols)) + " |" for _ in range(rows)]
    return "\n".join(lines)


FRAGMENTS = st.one_of(
    html_tables(),
    pipe_tables(),
    st.sampled_from(
        [
            "Some text.",
            "# Title",
            "$$\na | b\n$$",
            r"\[ x | y \]",
            "$x|y$",
            "![img](a.png)",
            "```html",
            "```",
            "\\begin{tabular}{ll}\na & b \\\\\n\\end{tabular}",
            "<table>",
            "</table>",
            "<html><body>",
            "The image shows a table with $x$ and $y$ values inside.",
            "________",
            "a      b",
            "| lone |",
            "<!-- c -->",
        ]
    ),
)


@needs_reference
@settings(max_examples=150, deadline=None)
@given(st.lists(FRAGMENTS, max_size=6), st.sampled_from(["\n\n", "\n", "\n\n\n"]))
def test_table_finder_equals_the_reference(fragments: list[str], sep: str) -> None:
    markdown = sep.join(fragments)
    assert list(predicted_tables(markdown).tables) == reference.table_texts_in(markdown)


@needs_reference
@settings(max_examples=200, deadline=None)
@given(html_tables())
def test_table_normaliser_equals_the_reference(table: str) -> None:
    assert normalised_table_html(table) == reference.normalised_table(table)


@needs_reference
@settings(max_examples=150, deadline=None)
@given(html_tables(), html_tables())
def test_teds_equals_the_reference(a: str, b: str) -> None:
    pred, true = normalised_table_html(a), normalised_table_html(b)
    ours = teds_pair(pred, true)
    theirs = reference.teds(pred, true)
    assert math.isclose(ours[0], theirs[0], abs_tol=1e-9) and math.isclose(
        ours[1], theirs[1], abs_tol=1e-9
    )


@needs_reference
@pytest.mark.parametrize(
    ("pred", "true"),
    [
        ("", "<html><body><table><tr><td>a</td></tr></table></body></html>"),
        ("no table here", "<html><body><table><tr><td>a</td></tr></table></body></html>"),
        (
            '<html><body><table><tr><td colspan="x">a</td></tr></table></body></html>',
            "<html><body><table><tr><td>a</td></tr></table></body></html>",
        ),
        ("<html><body><table></table></body></html>", "<html><body><table></table></body></html>"),
        (
            "<TABLE><TR><TD>a<b>b</b>c</TD></TR></TABLE>",
            "<table><tr><td>abc</td><td></td></tr></table>",
        ),
    ],
)
def test_teds_edge_cases_equal_the_reference(pred: str, true: str) -> None:
    assert teds_pair(pred, true) == pytest.approx(reference.teds(pred, true), abs=1e-12)


def test_unmatched_predicted_tables_are_dropped() -> None:
    truth = "<table><tr><td>a</td><td>b</td></tr></table>"
    invented = "<table><tr><td>zzz</td></tr><tr><td>qqq</td></tr></table>"
    alone = pair_tables([truth], [truth])
    with_extra = pair_tables([truth], [invented, truth])
    assert len(with_extra) == 1 and with_extra[0].teds == alone[0].teds == 1.0
    missing = pair_tables([truth, invented], [truth])
    assert [p.teds for p in missing] == [1.0, 0.0] and missing[1].prediction == ""


def test_header_cells_and_wrappers_normalise_away() -> None:
    plain = "<table><tr><td>a</td></tr><tr><td>1</td></tr></table>"
    dressed = (
        "<table><thead><tr><th>a</th></tr></thead>"
        "<tbody><tr><td><span>1</span></td></tr></tbody></table>"
    )
    assert normalised_table_html(plain) == normalised_table_html(dressed)
    assert normalised_table_html("no table") == ""


def _table_pages() -> list[dict[str, Any]]:
    if not HAVE_REFERENCE:
        return []
    return [
        p
        for p in reference.demo_pages()
        if any(d["category_type"] == "table" for d in p["layout_dets"])
    ]


@needs_reference
@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 7),
    st.lists(st.one_of(FRAGMENTS, st.just("TRUTH"), st.just("TRUTH-PIPE")), max_size=6),
)
@pytest.mark.slow
def test_page_table_scores_equal_the_reference_table_path(
    page_index: int, fragments: list[str]
) -> None:
    """Whole pages: the demo page's truth tables (as HTML or as pipe tables) among generated
    fragments, ours against the reference's own table path on the page (its block finder,
    pairing, normaliser and TEDS), table by table."""
    pages = _table_pages()
    page = pages[page_index % len(pages)]
    truth = [d["html"] for d in page["layout_dets"] if d["category_type"] == "table"]
    parts = []
    for k, fragment in enumerate(fragments):
        if fragment.startswith("TRUTH"):
            html = truth[k % len(truth)]
            parts.append(html if fragment == "TRUTH" else _pipe_of(html))
        else:
            parts.append(fragment)
    markdown = "\n\n".join(parts)
    ours = score_page(page, markdown)
    theirs = reference.table_path(page, markdown)
    # (the page's text blocks come first: score_page matches its text natively too)
    assert sum(b.category == "table" for b in ours.blocks) == len(theirs)
    n = len(theirs)
    assert math.isclose(ours.metrics["table_teds"], sum(t[0] for t in theirs) / n, abs_tol=1e-9)
    assert math.isclose(ours.metrics["table_teds_s"], sum(t[1] for t in theirs) / n, abs_tol=1e-9)


def _pipe_of(table_html: str) -> str:
    from bs4 import BeautifulSoup

    rows = [
        [" ".join(c.get_text(" ").split()) for c in tr.find_all(["td", "th"])]
        for tr in BeautifulSoup(table_html, "html.parser").find_all("tr")
    ]
    rows = [r for r in rows if r] or [["x"]]
    width = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    return "\n".join([lines[0], "|" + "---|" * width, *lines[1:]])
