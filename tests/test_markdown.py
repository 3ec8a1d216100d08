"""The Markdown grammar (text/markdown.py): each construct on examples, and the two readings of
one construct where the seeds make them differ."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_doceval.text import markdown as md


@pytest.mark.parametrize(
    ("line", "text"),
    [("# Title", "Title"), ("### Results ###", "Results"), ("## Intro {#sec:intro}", "Intro")],
)
def test_heading_element_text(line: str, text: str) -> None:
    match = md.HEADING.match(line)
    assert match is not None and match.group(1) == text


def test_the_two_readings_of_a_heading_differ_as_the_seeds_say() -> None:
    # Stripping (seed 000) allows CommonMark's indentation; seed 001's element needs column 0.
    assert md.HEADING_LINES.search("   # Indented") is not None
    assert md.HEADING.match("   # Indented") is None
    assert md.HEADING.match("#NoSpace") is None and md.HEADING_LINES.search("#NoSpace") is None


def test_lists_tables_fences_and_breaks() -> None:
    assert md.UNORDERED_ITEM.match("  - item").group(1) == "item"  # type: ignore[union-attr]
    assert md.ORDERED_ITEM.match("12. item").group(1) == "item"  # type: ignore[union-attr]
    assert md.ORDERED_ITEM.match("12) item") is None
    assert md.TABLE_ROW.match("| a | b |") and not md.TABLE_ROW.match("a | b")
    assert md.TABLE_SEPARATOR.match("|---|:--:|") and md.TABLE_SEPARATOR.match("+----+====+")
    assert not md.TABLE_SEPARATOR.match("| a | b |")
    assert md.GRID_BORDER.match("+---+===+") and not md.GRID_BORDER.match("+ a +")
    assert md.UNESCAPED_PIPE.split(r"a\|b|c") == [r"a\|b", "c"]
    assert md.FENCE.match("```python") and md.FENCE_LINES.search("  ~~~")
    assert md.THEMATIC_BREAK.match("* * *") and not md.THEMATIC_BREAK.match("    ---")
    assert md.SETEXT_UNDERLINE.match("===") and not md.SETEXT_UNDERLINE.match("    ===")
    assert md.SETEXT_UNDERLINE_LINES.search("    ===")
    reply = md.FENCED_REPLY.match("```markdown\n# A\n```\n")
    assert reply is not None and reply.group(1) == "# A"


def test_inlines() -> None:
    assert md.LINK.sub(r"\1", "see [X](https://w/X_(y)) now") == "see X now"
    assert md.LINK.search(r"\[not](a link)") is None
    assert md.LINK_IN_ELEMENT.sub(r"\1", "[a](b)") == "a"
    assert md.IMAGE.sub("", "x ![alt](p.png) y") == "x  y"
    assert md.AUTOLINK.sub(r"\1", "<https://a.b>") == "https://a.b"
    strong, em_star, em_under, strike = md.EMPHASIS_SPANS
    assert strong.sub(r"\2", "**b**") == "b" and em_star.sub(r"\1", "*i*") == "i"
    assert em_under.sub(r"\1", "snake_case_name") == "snake_case_name"
    assert strike.sub(r"\1", "~~s~~") == "s"
    assert md.INLINE_CODE.sub(r"\1", "``code``") == "code"
    assert md.ESCAPE.sub(r"\1", r"\*x\*") == "*x*" and md.ANY_ESCAPE.sub(r"\1", r"\q") == "q"


@given(st.text(alphabet="ab|\\ ", max_size=30))
def test_pipe_cells_join_back_to_the_row(row: str) -> None:
    cells = md.UNESCAPED_PIPE.split(row)
    assert "|".join(cells) == row
    assert all(cell.replace("\\|", "").count("|") == 0 for cell in cells)
