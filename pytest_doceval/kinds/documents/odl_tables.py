"""opendataloader-bench's reading of markdown tables: each written as an HTML table before NID
and MHS compare texts (`reading_order`, `headings`).

opendataloader-bench (github.com/opendataloader-project/opendataloader-bench, MIT, at b4b9505:
``src/converter_markdown_table.py``) turns every markdown pipe table of a text into one line of
HTML before it measures reading order and headings, so that a table written as markdown and the
same table written as HTML read alike. Its numbers depend on that reading, quirks included, so
it is reproduced here rather than replaced by the documents kind's pandoc reading
(`table_trees`), which TEDS and GriTS use:

* Lines are split as Python's ``str.splitlines`` splits them (``\\r``, ``\\n``, ``\\r\\n`` and
  the other Unicode line breaks). A line is a row when, stripped, it holds a ``|``; its cells
  are the pieces between ``|`` (every ``|``, an escaped one too), the first piece dropped when
  the line starts with ``|`` and the last when it ends with one, each stripped.
* A table starts at a row followed by a separator row (every cell non-empty and made of ``-``
  and ``:`` only, spaces aside) and runs over the following rows, up to the first line that is
  not a row. Its width is the longer of the header and the separator; a row of another width is
  padded with empty cells or cut, except that a row of exactly three cells in a wider table
  becomes its first cell, its middle cell repeated, and its last (the header of a middle cell
  that spans columns).
* A header of empty cells is replaced by the first body row (when there is one).
* The table is written ``<table><tr><th>..</th>..</tr><tr><td>..</td>..</tr>..</table>`` with
  each cell HTML-escaped (``&``, ``<``, ``>``, both quotes), followed by the header line's own
  line ending (``\\r\\n``, ``\\n`` or ``\\r``; none for another break); every other line is kept
  as written.
"""

from __future__ import annotations

import html
import re
from typing import Final

# What NID-S removes (opendataloader-bench's ``_HTML_TABLE_PATTERN``): a <table> element,
# shortest match, any case, across lines.
HTML_TABLE: Final = re.compile(r"<table[^>]*?>.*?</table>", re.IGNORECASE | re.DOTALL)
_WHITESPACE: Final = re.compile(r"\s+")


def squeezed(text: str) -> str:
    """Every run of whitespace one space, the ends trimmed: how opendataloader-bench folds the
    texts it compares."""
    return _WHITESPACE.sub(" ", text).strip()


def _cells(line: str) -> list[str] | None:
    trimmed = line.strip()
    if not trimmed or "|" not in trimmed:
        return None
    cells = trimmed.split("|")
    if trimmed.startswith("|"):
        cells = cells[1:]
    if cells and trimmed.endswith("|"):
        cells = cells[:-1]
    return [c.strip() for c in cells] or None


def _is_separator(cells: list[str]) -> bool:
    return all((c := cell.replace(" ", "")) and set(c) <= {"-", ":"} for cell in cells)


def _fit(cells: list[str], width: int) -> list[str]:
    if len(cells) == width:
        return cells
    if len(cells) == 3 and width > 3:
        return [cells[0], *[cells[1]] * (width - 2), cells[2]]
    return (cells + [""] * width)[:width]


def _line_ending(line: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending):
            return ending
    return ""


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    def row(tag: str, cells: list[str]) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"

    return "<table>" + row("th", header) + "".join(row("td", r) for r in rows) + "</table>"


def with_html_tables(markdown: str) -> str:
    """`markdown` with every pipe table written as opendataloader-bench writes it in HTML
    (module docstring)."""
    lines = markdown.splitlines(keepends=True)
    out: list[str] = []
    index = 0
    while index < len(lines):
        header = _cells(lines[index])
        separator = _cells(lines[index + 1]) if header and index + 1 < len(lines) else None
        if header is None or separator is None or not _is_separator(separator):
            out.append(lines[index])
            index += 1
            continue
        width = max(len(header), len(separator))
        header = _fit(header, width)
        body: list[list[str]] = []
        end = index + 2
        while end < len(lines) and (cells := _cells(lines[end])) is not None:
            body.append(_fit(cells, width))
            end += 1
        if body and not any(header):
            header = body.pop(0)
        out.append(_html_table(header, body) + _line_ending(lines[index]))
        index = end
    return "".join(out)
