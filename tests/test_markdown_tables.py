"""The table tokenizer of the Markdown grammar (text/markdown.py): rows, separators, cells and
blocks, in pandoc's reading (the documents kind's TEDS) and olmOCR-bench's (the facts kind)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_doceval.text import markdown as md

# Cell text with no pipe and no backslash; escaped pipes are spliced in by `_cells`.
_PLAIN = st.text(alphabet=st.sampled_from("ab1 :-*_\u00a0\t"), max_size=8)
_ESCAPED = st.lists(_PLAIN, min_size=1, max_size=3).map("\\|".join)
_CELLS = st.lists(st.one_of(_PLAIN, _ESCAPED), min_size=1, max_size=6)


def _not_blank_at_the_ends(cells: list[str]) -> bool:
    return bool(cells[0].strip()) and bool(cells[-1].strip())


@given(_CELLS)
def test_cells_joined_between_outer_pipes_split_back(cells: list[str]) -> None:
    assert md.split_pipe_row("|" + "|".join(cells) + "|") == cells


@given(_CELLS.filter(_not_blank_at_the_ends))
def test_outer_pipes_are_optional(cells: list[str]) -> None:
    # Without outer pipes the row's ends are trimmed, like the cells of any reader.
    inner = "|".join(cells)
    stripped = [cell.strip() for cell in cells]
    assert [c.strip() for c in md.split_pipe_row(inner)] == stripped
    assert [c.strip() for c in md.split_pipe_row(f"  {inner} |  ")] == stripped
    assert [c.strip() for c in md.split_pipe_row(f"| {inner}")] == stripped


@given(_CELLS)
def test_escaped_pipes_stay_in_the_cell(cells: list[str]) -> None:
    row = "|" + "|".join(cells) + "|"
    split = md.split_pipe_row(row)
    assert [cell.count("\\|") for cell in split] == [cell.count("\\|") for cell in cells]
    # olmOCR-bench's reading splits at every pipe: each escaped pipe makes one more cell.
    every = md.split_pipe_row(row, escaped_pipes=False)
    assert len(every) == len(cells) + sum(cell.count("\\|") for cell in cells)
    assert "|".join(every) == row[1:-1]


@given(st.text(alphabet="ab|\\ -:", max_size=30))
def test_splitting_loses_only_the_outer_blank_pieces(row: str) -> None:
    for escaped in (True, False):
        cells = md.split_pipe_row(row, escaped_pipes=escaped)
        joined = "|".join(cells)
        assert joined in row.strip()
        # What is dropped is one blank piece at each end, with its pipe.
        assert len(row.strip()) - len(joined) <= 2 + sum(
            len(piece) for piece in (row.strip()[:1], row.strip()[-1:]) if not piece.strip("|")
        )


@pytest.mark.parametrize(
    ("line", "columns", "olmocr"),
    [
        ("|---|:--:|", 2, True),
        ("| --- | --- |", 2, True),
        ("---|---", 2, True),
        ("|---+---|", 2, False),  # pandoc parts columns with "+" too
        ("|---+---+", 0, False),  # ... but ends only with "|"
        ("|---|", 1, True),
        ("---|", 0, True),  # one column needs its leading pipe
        ("+----+====+", 0, False),  # a grid border
        ("|===|", 0, False),
        ("| : |", 0, True),  # colons alone: olmOCR's only
        ("|-- -|", 0, True),  # a space inside the dashes
        ("|---|\t", 1, True),
        ("   |---|---|", 2, True),
        ("    |---|---|", 0, True),  # four spaces in: code, for pandoc
        ("| a | b |", 0, False),
        ("| |", 0, False),
        ("", 0, False),
    ],
)
def test_separator_rows_in_both_readings(line: str, columns: int, olmocr: bool) -> None:
    assert md.pipe_separator_columns(line) == columns
    assert md.is_separator_row(line, grid_marks=False) is olmocr


def test_pipe_rows_in_both_readings() -> None:
    assert md.is_pipe_row("  | a |") and not md.is_pipe_row("a | b")
    assert md.is_pipe_row("a | b", pipe_anywhere=True) and not md.is_pipe_row(
        "ab", pipe_anywhere=True
    )
    # pandoc's: a pipe that splits cells, anywhere on the line
    assert md.is_pandoc_pipe_row("a | b") and md.is_pandoc_pipe_row("a |")
    assert not md.is_pandoc_pipe_row("`x|y`") and not md.is_pandoc_pipe_row("a \\| b")
    assert md.is_pandoc_pipe_row("| `x|y` |")


@pytest.mark.parametrize(
    ("row", "cells"),
    [
        ("| `x|y` | b |", ["`x|y`", "b"]),
        ("| ``a`|`b`` | c |", ["``a`|`b``", "c"]),
        ("| $x|y$ | b |", ["$x|y$", "b"]),
        ("| $5 | $6 |", ["$5", "$6"]),  # not maths: no closing "$" before a non-digit
        ('| <span title="a|b">p</span> | q |', ['<span title="a|b">p</span>', "q"]),
        ("| a \\| b | c |", ["a \\| b", "c"]),
        ("| unclosed `code | c |", ["unclosed `code", "c"]),
    ],
)
def test_pipes_that_are_cell_text(row: str, cells: list[str]) -> None:
    assert [cell.strip() for cell in md.split_pipe_row(row)] == cells


BLOCK_LINES = [
    "intro | with a pipe",
    "",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "",
    "+---+---+",
    "| x | y |",
    "+===+===+",
    "| 3 | 4 |",
    "+---+---+",
    "text",
    "| c | d |",
    "|---|---|",
    "",
    "| lone |",
    "",
    "```",
    "| in | code |",
    "|----|------|",
    "```",
    "x | y",
    "--|--",
]


def test_pandoc_table_blocks() -> None:
    blocks = md.pandoc_table_blocks(BLOCK_LINES)
    assert [(b.form, b.start, b.end) for b in blocks] == [
        ("pipe", 2, 5),
        ("grid", 6, 11),
        # "| lone |": no separator; the pipes inside the code fence are code
        ("pipe", 12, 14),  # right after a text line: a table (GitHub's reading, not pandoc's)
        ("pipe", 21, 23),
    ]


def test_table_blocks() -> None:
    # Runs of table-like lines, blind to separators and fences.
    runs = md.table_blocks(BLOCK_LINES)
    assert [(b.form, b.start, b.end) for b in runs] == [
        ("pipe", 2, 5),
        ("grid", 6, 11),
        ("pipe", 12, 14),
        ("pipe", 15, 16),
        ("pipe", 18, 20),
    ]
    olmocr = md.table_blocks(BLOCK_LINES, grid_tables=False, pipe_anywhere=True, min_pipe_rows=2)
    # Two or more lines holding a pipe: a lone row, or the grid's rows split by its borders,
    # are no table.
    assert [(b.form, b.start, b.end) for b in olmocr] == [
        ("pipe", 2, 5),
        ("pipe", 12, 14),
        ("pipe", 18, 20),
        ("pipe", 21, 23),
    ]


@given(st.lists(st.sampled_from(["| a |", "a | b", "+---+", "text", "", "|---|"]), max_size=12))
def test_blocks_are_ordered_disjoint_runs_of_rows(lines: list[str]) -> None:
    for anywhere, grid, least in ((False, True, 1), (True, False, 2)):
        blocks = md.table_blocks(
            lines, grid_tables=grid, pipe_anywhere=anywhere, min_pipe_rows=least
        )
        ends = [0, *(b.end for b in blocks)]
        assert all(b.start >= end for b, end in zip(blocks, ends, strict=False))
        for block in blocks:
            if block.form == "pipe":
                assert block.end - block.start >= least
                rows = lines[block.start : block.end]
                assert all(md.is_pipe_row(line, pipe_anywhere=anywhere) for line in rows)
                after = lines[block.end : block.end + 1]
                assert not any(md.is_pipe_row(line, pipe_anywhere=anywhere) for line in after)
            else:
                assert grid and md.GRID_BORDER.match(lines[block.start])
