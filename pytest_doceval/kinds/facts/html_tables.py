"""HTML tables of a page output, read with the standard library's ``html.parser``.

Follows olmOCR-bench's ``parse_html_tables`` (BeautifulSoup there).

HTML: every ``<table>``; its rows are its ``<tr>`` elements, its cells the ``<td>``/``<th>``
directly inside them. A cell's text is its text nodes joined with newlines (``<br>`` is a
newline), stripped; the text of a table nested in a cell is part of that cell's text, as with
BeautifulSoup's ``get_text``. Headings are ``<th>`` cells and every cell of a row inside
``<thead>``. Unclosed ``<td>``/``<th>``/``<tr>`` are closed by the next cell or row and by the
end of the table, which is how browsers read them. One difference from olmOCR: BeautifulSoup's
``table.find_all("tr")`` also hands the rows of a nested table to the outer table; here each
table has only its own rows.

Spans: ``rowspan``/``colspan`` that are missing, empty, not an integer or below 1 count as 1;
``rowspan="0"`` extends to the last row of the table. The grid, with spans and neighbours, is
then `grid.build_table`'s work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

from pytest_doceval.kinds.facts.grid import CellSpec, TableData, build_table

__all__ = ["parse_html_tables"]


def _span(value: str | None) -> int:
    """olmOCR's ``_safe_span_int``: anything but an integer >= 1 is 1."""
    if value is None or value == "":
        return 1
    try:
        span = int(value)
    except ValueError:
        return 1
    return span if span > 0 else 1


@dataclass
class _OpenCell:
    parts: list[str]
    rowspan_attr: str | None
    colspan: int
    heading: bool


@dataclass
class _OpenTable:
    slot: int
    rows: list[list[_OpenCell]] = field(default_factory=list)
    row_open: bool = False
    row_in_thead: bool = False
    cell: _OpenCell | None = None
    thead_depth: int = 0
    heading_rows: list[bool] = field(default_factory=list)


class _TableCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[_OpenTable] = []
        self.done: list[TableData | None] = []

    def _close_cell(self, table: _OpenTable) -> None:
        if table.cell is not None:
            table.rows[-1].append(table.cell)
            table.cell = None

    def _close_row(self, table: _OpenTable) -> None:
        self._close_cell(table)
        table.row_open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.stack.append(_OpenTable(slot=len(self.done)))
            self.done.append(None)
            return
        if not self.stack:
            return
        table = self.stack[-1]
        if tag == "thead":
            table.thead_depth += 1
        elif tag == "tr":
            self._close_row(table)
            table.rows.append([])
            table.row_open = True
            table.heading_rows.append(table.thead_depth > 0)
        elif tag in ("td", "th") and table.row_open:
            self._close_cell(table)
            attr = dict(attrs)
            in_thead = table.heading_rows[-1]
            table.cell = _OpenCell(
                [], attr.get("rowspan"), _span(attr.get("colspan")), tag == "th" or in_thead
            )
        elif tag == "br":
            self.handle_data("\n")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack:
            return
        table = self.stack[-1]
        if tag in ("td", "th"):
            self._close_cell(table)
        elif tag == "tr":
            self._close_row(table)
        elif tag == "thead":
            table.thead_depth = max(0, table.thead_depth - 1)
        elif tag == "table":
            self._finish(self.stack.pop())

    def handle_data(self, data: str) -> None:
        for table in self.stack:  # a nested table's text is part of the enclosing cell's text
            if table.cell is not None:
                table.cell.parts.append(data)

    def _finish(self, table: _OpenTable) -> None:
        self._close_row(table)
        total = len(table.rows)
        specs = []
        for r, row in enumerate(table.rows):
            line = []
            for cell in row:
                raw = cell.rowspan_attr
                to_end = raw is not None and raw.strip() == "0"  # HTML: span to the last row
                rowspan = max(1, total - r) if to_end else _span(raw)
                text = "\n".join(cell.parts).strip()
                line.append(CellSpec(text, rowspan, cell.colspan, cell.heading))
            specs.append(line)
        self.done[table.slot] = build_table(specs) if specs else None

    def close(self) -> None:
        super().close()
        while self.stack:  # unclosed tables still count, as BeautifulSoup finds them
            self._finish(self.stack.pop())


def parse_html_tables(content: str) -> list[TableData]:
    """Every HTML table of `content`, outer before nested (module docstring for the rules)."""
    if "<table" not in content.lower():
        return []  # most outputs have none; skip the tokenizer
    collector = _TableCollector()
    collector.feed(content)
    collector.close()
    return [t for t in collector.done if t is not None]
