"""Every table of a text, read into the shape PubTabNet's TEDS compares (issue 20).

Three forms are read, in this order, each from what the previous ones left (grid and pipe
blocks are found and split by the shared tokenizer of `text.markdown`, with pandoc's reading):

* **HTML** ``<table>`` (what pandoc writes for a table a pipe table cannot hold, and what many
  VLMs write), with the stdlib's tolerant ``html.parser``: ``<thead>``/``<tbody>``/``<tfoot>``
  are kept as written (rows written straight under ``<table>`` stay there), ``<th>`` is a cell
  like ``<td>`` (PubTabNet's trees only have ``td``; a header is a header by its ``<thead>``),
  ``colspan``/``rowspan`` are read (a value that is not a positive integer is 1, with a note).
  Text inside a cell, including nested inline tags and nested tables, is the cell's text;
  ``<caption>``/``<colgroup>`` are not part of the tree. A missing ``</td>``/``</tr>`` closes
  where the next cell or row starts (as browsers do); a cell outside a row opens one, and a
  table never closed ends at the end of the text -- both with a note.
* **Grid tables** (pandoc's ``+---+---+`` form, with spans): cells are the rectangles the
  ``+``/``-``/``|`` lines enclose (traced as docutils does), their spans the row and column
  boundaries they cross; cells above the ``+===+`` line form the ``<thead>``, the rest the
  ``<tbody>``.
* **Pipe tables** (``| a | b |`` lines, pandoc's and the VLMs'), found where pandoc finds them
  (`markdown.pandoc_table_blocks`: a row with a separator row under it, outer pipes optional;
  one pipe line, or rows without a separator, are text; unlike pandoc, a table may follow a
  line of text without a blank line between): the row above the
  separator is the ``<thead>``, the rest the ``<tbody>``. Cells split on ``|`` that is not
  escaped as ``\\|`` nor inside a code span, inline maths or an HTML tag
  (`markdown.split_pipe_row`). The separator sets the number of columns: a row with more cells
  is cut, one with fewer padded with empty cells, as pandoc does (with a note).
* A header row of empty cells (pipe or grid) is no header: pandoc writes a headerless table so,
  and reads it back without a ``<thead>``.

**Cell text** (`cell_text`), the same for every form: Unicode NFKC, then pandoc's attribute
syntax and markdown syntax removed as the fair profile does it (`normalise.remove_pandoc_divs`:
``[times]{.sans-serif}`` is ``times``; `normalise.strip_markdown`: emphasis, links, inline code,
HTML tags, backslash escapes), then every run of whitespace one space, ends trimmed. A ``|``
left in a cell is text (``a|b`` in a code span or an HTML cell stays ``a|b``). Case,
punctuation and maths (``$x$``) stay as written: TEDS compares what a reader sees in the cell.

Nothing here raises on text: what cannot be read as a table is left as text, and what is read
oddly is said in `TableReading.notes`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from pytest_doceval.text import markdown as md
from pytest_doceval.text.normalise import (
    collapse_whitespace,
    remove_pandoc_divs,
    strip_markdown,
    unicode_nfkc,
    unify_line_endings,
)

GROUP_TAGS = ("thead", "tbody", "tfoot")


def cell_text(raw: str) -> str:
    """A cell's text as TEDS compares it (module docstring)."""
    # A "|" still in a cell is text (pandoc's: in a code span, in maths, escaped, or in an HTML
    # cell), not the table syntax `strip_markdown` drops from whole texts: escape it to keep it.
    raw = md.UNESCAPED_PIPE.sub(r"\\|", raw)
    return collapse_whitespace(strip_markdown(remove_pandoc_divs(unicode_nfkc(raw))))


@dataclass(frozen=True)
class Cell:
    text: str
    colspan: int = 1
    rowspan: int = 1


Row = tuple[Cell, ...]


@dataclass(frozen=True)
class Group:
    """``<thead>``, ``<tbody>`` or ``<tfoot>`` and its rows; tag ``""`` for rows written
    straight under ``<table>``."""

    tag: str
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Table:
    groups: tuple[Group, ...]
    form: str  # "html" | "grid" | "pipe"
    start: int  # offset of the table in the text (after line endings are unified)
    # The table as written: its HTML element, or its markdown lines (PubTabNet's TEDS reads it).
    source: str = field(default="", compare=False)

    @property
    def rows(self) -> list[Row]:
        return [row for group in self.groups for row in group.rows]

    @property
    def node_count(self) -> int:
        """|T| as PubTabNet counts it: every element below ``<table>``."""
        rows = self.rows
        return sum(1 for g in self.groups if g.tag) + len(rows) + sum(len(r) for r in rows)

    @property
    def shape(self) -> tuple[int, int]:
        """Rows and the widest row's columns (spans counted)."""
        rows = self.rows
        return len(rows), max((sum(c.colspan for c in r) for r in rows), default=0)


@dataclass(frozen=True)
class TableReading:
    tables: list[Table]
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------ HTML

_TABLE_TAG = re.compile(r"<(/?)table\b[^>]*>", re.IGNORECASE)


def _html_regions(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, closed) of every outermost ``<table>`` element; an unclosed one ends at the
    end of the text."""
    regions: list[tuple[int, int, bool]] = []
    depth, start = 0, 0
    for match in _TABLE_TAG.finditer(text):
        if not match.group(1):
            if depth == 0:
                start = match.start()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                regions.append((start, match.end(), True))
    if depth > 0:
        regions.append((start, len(text), False))
    return regions


@dataclass
class _Builder:
    groups: list[tuple[str, list[list[Cell]]]] = field(default_factory=list)
    group_open: bool = False
    row: list[Cell] | None = None
    cell: list[str] | None = None
    spans: tuple[int, int] = (1, 1)


class _HtmlTable(HTMLParser):
    """One outermost ``<table>`` element (module docstring)."""

    def __init__(self, number: int) -> None:
        super().__init__(convert_charrefs=True)
        self.number = number
        self.depth = 0
        self.b = _Builder()
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        text = f"HTML table {self.number}: {message}"
        if text not in self.notes:
            self.notes.append(text)

    def _span(self, attrs: list[tuple[str, str | None]], name: str) -> int:
        value = dict(attrs).get(name)
        if value is None:
            return 1
        try:
            span = int(value.strip())
        except ValueError:
            span = 0
        if span < 1:
            self.note(f"{name}={value!r} is not a positive integer: read as 1")
            return 1
        return span

    def _close_cell(self) -> None:
        b = self.b
        if b.cell is not None and b.row is not None:
            b.row.append(Cell(cell_text("".join(b.cell)), *b.spans))
        b.cell = None

    def _close_row(self) -> None:
        self._close_cell()
        b = self.b
        if b.row is not None:
            if not b.group_open:
                b.groups.append(("", []))
                b.group_open = True
            b.groups[-1][1].append(b.row)
        b.row = None

    def _close_group(self) -> None:
        self._close_row()
        self.b.group_open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        b = self.b
        if tag == "table":
            self.depth += 1
            if self.depth > 1 and b.cell is not None:
                b.cell.append(" ")
            return
        if self.depth != 1:
            if b.cell is not None:
                b.cell.append(" ")
            return
        if tag in GROUP_TAGS:
            self._close_group()
            b.groups.append((tag, []))
            b.group_open = True
        elif tag == "tr":
            self._close_row()
            b.row = []
        elif tag in ("td", "th"):
            self._close_cell()
            if b.row is None:
                self.note("a cell outside a row: read as a row of its own")
                b.row = []
            b.cell = []
            b.spans = (self._span(attrs, "colspan"), self._span(attrs, "rowspan"))
        elif b.cell is not None:
            b.cell.append(" ")  # <br>, <p>, <div>: a break between words

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.depth -= 1
            if self.depth == 0:
                self._close_group()
            return
        if self.depth != 1:
            if self.b.cell is not None:
                self.b.cell.append(" ")
            return
        if tag in GROUP_TAGS:
            self._close_group()
        elif tag == "tr":
            self._close_row()
        elif tag in ("td", "th"):
            self._close_cell()
        elif self.b.cell is not None:
            self.b.cell.append(" ")

    def handle_data(self, data: str) -> None:
        if self.b.cell is not None:
            self.b.cell.append(data)
        elif data.strip() and self.depth == 1 and self.b.row is not None:
            self.note("text outside a cell is not part of the table")

    def groups(self) -> tuple[Group, ...]:
        if self.depth > 0:
            self._close_group()
        return tuple(Group(tag, tuple(tuple(r) for r in rows)) for tag, rows in self.b.groups)


def _read_html(text: str, start: int, closed: bool, number: int) -> tuple[Table | None, list[str]]:
    parser = _HtmlTable(number)
    parser.feed(text)
    parser.close()
    if not closed:
        parser.note("<table> is never closed: read to the end of the text")
    groups = parser.groups()
    if not any(group.rows for group in groups):
        parser.note("no rows: not scored as a table")
        return None, parser.notes
    return Table(groups, "html", start, text), parser.notes


# ------------------------------------------------------------------------------------ grid

_GRID_BORDER = md.GRID_BORDER


def _grid_cells(lines: list[str]) -> list[tuple[int, int, int, int, str]]:
    """(top, left, bottom, right, text) of every cell: the rectangles traced from each ``+``
    corner right, down, left and up, as docutils' grid-table parser does."""
    width = max(len(line) for line in lines)
    grid = [line.ljust(width) for line in lines]
    last_row, last_col = len(grid) - 1, width - 1

    def closes(top: int, left: int, bottom: int, right: int) -> bool:
        if grid[bottom][left] != "+":
            return False
        if any(ch not in "-=:+" for ch in grid[bottom][left + 1 : right]):
            return False
        return all(grid[r][left] in "|+" for r in range(top + 1, bottom))

    def down(top: int, left: int, right: int) -> int | None:
        for r in range(top + 1, last_row + 1):
            ch = grid[r][right]
            if ch == "+" and closes(top, left, r, right):
                return r
            if ch not in "|+":
                return None
        return None

    def trace(top: int, left: int) -> tuple[int, int] | None:
        for c in range(left + 1, last_col + 1):
            ch = grid[top][c]
            if ch == "+":
                bottom = down(top, left, c)
                if bottom is not None:
                    return bottom, c
            elif ch not in "-=:":
                return None
        return None

    cells: list[tuple[int, int, int, int, str]] = []
    corners = [(0, grid[0].index("+"))]
    seen: set[tuple[int, int]] = set()
    while corners:
        top, left = corners.pop()
        if (top, left) in seen or top >= last_row or left >= last_col:
            continue
        seen.add((top, left))
        found = trace(top, left)
        if found is None:
            continue
        bottom, right = found
        body = " ".join(grid[r][left + 1 : right].strip() for r in range(top + 1, bottom))
        cells.append((top, left, bottom, right, body))
        corners.extend([(bottom, left), (top, right)])
    return cells


def _read_grid(lines: list[str], start: int, number: int) -> tuple[Table | None, list[str]]:
    cells = _grid_cells(lines)
    if not cells:
        return None, [f"grid table {number}: no cell could be traced: not scored as a table"]
    row_lines = sorted({c[0] for c in cells} | {c[2] for c in cells})
    col_lines = sorted({c[1] for c in cells} | {c[3] for c in cells})
    head_end = next(
        (i for i, line in enumerate(lines) if i > 0 and "=" in line and _GRID_BORDER.match(line)),
        None,
    )
    rows: dict[int, list[tuple[int, Cell]]] = {}
    for top, left, bottom, right, body in cells:
        r, c = row_lines.index(top), col_lines.index(left)
        cell = Cell(cell_text(body), col_lines.index(right) - c, row_lines.index(bottom) - r)
        rows.setdefault(r, []).append((c, cell))
    ordered = [(r, tuple(cell for _, cell in sorted(rows[r]))) for r in sorted(rows)]
    head = [row for r, row in ordered if head_end is not None and row_lines[r] < head_end]
    rest = [row for r, row in ordered if head_end is None or row_lines[r] >= head_end]
    return _head_and_body(Table((), "grid", start, "\n".join(lines)), head, rest), []


# ------------------------------------------------------------------------------------ pipe

_NOT_NEWLINE = re.compile(r"[^\n]")


def _read_pipe(lines: list[str], start: int, number: int) -> tuple[Table | None, list[str]]:
    """Pandoc's reading: the separator row sets the number of columns; a row with more cells is
    cut to it, one with fewer padded with empty cells (with a note)."""
    columns = md.pipe_separator_columns(lines[1])
    notes: list[str] = []
    rows: list[Row] = []
    for index, line in enumerate(lines):
        if index == 1:
            continue
        raw = md.split_pipe_row(line)
        if len(raw) != columns:
            done = "the rest dropped" if len(raw) > columns else "padded with empty cells"
            written = f"{len(raw)} cell" + ("" if len(raw) == 1 else "s")
            notes.append(
                f"pipe table {number}: row {len(rows) + 1} has {written} where the separator "
                f"sets {columns} columns: {done}, as pandoc reads it"
            )
        cells = [Cell(cell_text(text)) for text in raw[:columns]]
        rows.append(tuple(cells + [Cell("")] * (columns - len(cells))))
    return _head_and_body(Table((), "pipe", start, "\n".join(lines)), rows[:1], rows[1:]), notes


def _head_and_body(table: Table, head: list[Row], body: list[Row]) -> Table:
    """`table` with its ``<thead>`` and ``<tbody>``; a header row of empty cells is no header
    (pandoc writes a headerless table as one, and its HTML then has no ``<thead>``), and the
    ``<tbody>`` is there even when empty, as pandoc writes it (a header-only table)."""
    if all(not cell.text for row in head for cell in row):
        head = []
    groups = (*([Group("thead", tuple(head))] if head else []), Group("tbody", tuple(body)))
    return Table(groups, table.form, table.start, table.source)


# ------------------------------------------------------------------------------------ text


def read_tables(text: str) -> TableReading:
    """Every table of `text` in the order it appears, and notes on what was read oddly."""
    text = unify_line_endings(text)
    found: list[tuple[Table | None, list[str]]] = []
    pieces: list[str] = []
    done = 0
    for number, (start, end, closed) in enumerate(_html_regions(text), start=1):
        found.append(_read_html(text[start:end], start, closed, number))
        # What an HTML table holds is no grid or pipe table: blank it, keeping line numbers.
        pieces += [text[done:start], _NOT_NEWLINE.sub(" ", text[start:end])]
        done = end
    lines = "".join([*pieces, text[done:]]).split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    numbers = {"grid": 0, "pipe": 0}
    for block in md.pandoc_table_blocks(lines):
        numbers[block.form] += 1
        read = _read_grid if block.form == "grid" else _read_pipe
        found.append(
            read(lines[block.start : block.end], offsets[block.start], numbers[block.form])
        )
    tables = sorted((t for t, _ in found if t is not None), key=lambda t: t.start)
    return TableReading(tables, [note for _, notes in found for note in notes])
