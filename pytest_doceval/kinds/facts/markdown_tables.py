"""Markdown tables of a page output, read as olmOCR-bench's ``parse_markdown_tables``
(``olmocr/bench/tests.py``) reads them, on the shared table tokenizer of `text.markdown` with
olmOCR's parameters, into grids with neighbours (`grid`).

A table is a run of at least two consecutive lines that contain ``|``. The first line made only
of ``-``, ``:`` and spaces (pipes aside) is the separator and is dropped, as is any line made
only of ``-: |``. A row's cells are the line split on ``|``, stripped, without the empty first
and last pieces that leading and trailing pipes leave. Ragged rows are padded with empty
positions. Headings are the first row and the first column.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_doceval.kinds.facts.grid import CellSpec, TableData, build_table
from pytest_doceval.text import markdown as md

# olmOCR-bench's reading, not pandoc's: its verdicts are defined by it. So every ``|`` is a cell
# boundary (olmOCR splits on ``|``, escaped or not), a table is two or more lines holding a ``|``
# anywhere, no grid tables, and its separator is made of ``-``, ``:`` and spaces only.
_ESCAPED_PIPES = False
_PIPE_ANYWHERE = True
_MIN_ROWS = 2
_GRID_MARKS = False


def _only_pipes_and_marks(line: str) -> bool:
    # olmOCR drops, besides the first separator, every line made only of "- :|" (untrimmed: a
    # line ending in a tab or "\r" is not one).
    return bool(line.strip()) and all(ch in "- :|" for ch in line)


def _markdown_rows(lines: Sequence[str]) -> list[list[str]]:
    separator = next(
        (i for i, line in enumerate(lines) if md.is_separator_row(line, grid_marks=_GRID_MARKS)),
        None,
    )
    rows: list[list[str]] = []
    for i, line in enumerate(lines):
        if i == separator or _only_pipes_and_marks(line):
            continue
        cells = [cell.strip() for cell in md.split_pipe_row(line, escaped_pipes=_ESCAPED_PIPES)]
        if cells:
            rows.append(cells)
    return rows


def parse_markdown_tables(content: str) -> list[TableData]:
    """Every markdown table of `content` (module docstring for the rules)."""
    lines = content.strip().split("\n")
    blocks = md.table_blocks(
        lines, grid_tables=False, pipe_anywhere=_PIPE_ANYWHERE, min_pipe_rows=_MIN_ROWS
    )
    tables = []
    for block in blocks:
        rows = _markdown_rows(lines[block.start : block.end])
        specs = [
            [CellSpec(text, heading=r == 0 or c == 0) for c, text in enumerate(row)]
            for r, row in enumerate(rows)
        ]
        table = build_table(specs)
        if table is not None:
            tables.append(table)
    return tables
