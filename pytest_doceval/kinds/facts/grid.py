"""A table as a grid of cells with spans, and each cell's neighbours and headings.

Follows olmOCR-bench's ``_build_table_data_from_specs`` (``olmocr/bench/tests.py``); the
markdown (`tables`) and HTML (`html_tables`) parsers both produce rows of `CellSpec` for it.

A spanning cell occupies every grid position it covers and is one cell (its id is its top-left
position). Rowspans reaching past the last row add rows, as in olmOCR. Neighbours of a cell are,
for each row (column) it spans, the first other cell to its left/right (above/below), skipping
empty positions. Its headings (``top_heading``, ``left_heading``) are found as olmOCR-bench finds
them: by walking the up (left) neighbours, and theirs, to the edge of the table, through spans
into other columns (rows); the heading cells met on the way, or, when there is none, the cells
where the walk ends (the top row, the first column), but never the cell itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from pytest_doceval.kinds.facts.normalise import normalise_text

__all__ = ["CellSpec", "Pos", "TableData", "build_table"]

Pos = tuple[int, int]


@dataclass(frozen=True)
class CellSpec:
    """One source cell before placement in the grid."""

    text: str
    rowspan: int = 1
    colspan: int = 1
    heading: bool = False


@dataclass(frozen=True)
class TableData:
    """A table as cells keyed by top-left (row, column) and their neighbour relations."""

    cells: dict[Pos, str]
    headings: frozenset[Pos]
    relations: dict[str, dict[Pos, frozenset[Pos]]] = field(repr=False)
    grid: tuple[tuple[Pos | None, ...], ...] = field(repr=False)

    @cached_property
    def normalised(self) -> dict[Pos, str]:
        return {pos: normalise_text(text) for pos, text in self.cells.items()}

    def rows(self) -> list[list[str]]:
        """The grid as text (spanned positions repeat the cell, empty positions are "")."""
        return [[self.cells[p] if p is not None else "" for p in row] for row in self.grid]


def build_table(rows: Sequence[Sequence[CellSpec]]) -> TableData | None:
    """Place `rows` on a grid and derive every cell's neighbours; None for a table with no cell."""
    cells: dict[Pos, str] = {}
    spans: dict[Pos, tuple[int, int]] = {}
    headings: set[Pos] = set()
    grid: list[list[Pos | None]] = []
    # Per column: the cell whose rowspan still covers it, and how many more rows it covers.
    pending: list[tuple[Pos, int] | None] = []

    def take_pending(col: int) -> Pos | None:
        entry = pending[col]
        if entry is None:
            return None
        pos, remaining = entry
        pending[col] = (pos, remaining - 1) if remaining > 1 else None
        return pos

    for r, specs in enumerate(rows):
        line: list[Pos | None] = []
        queue = list(specs)
        col = 0
        while queue or col < len(pending):
            if col < len(pending) and pending[col] is not None:
                line.append(take_pending(col))
                col += 1
                continue
            if not queue:
                line.append(None)
                col += 1
                continue
            spec = queue.pop(0)
            pos = (r, col)
            cells[pos] = spec.text
            spans[pos] = (max(1, spec.rowspan), max(1, spec.colspan))
            if spec.heading:
                headings.add(pos)
            rowspan, colspan = spans[pos]
            if len(pending) < col + colspan:
                pending.extend([None] * (col + colspan - len(pending)))
            for c in range(col, col + colspan):
                line.append(pos)
                pending[c] = (pos, rowspan - 1) if rowspan > 1 else None
            col += colspan
        grid.append(line)
    while any(entry is not None for entry in pending):  # rowspans past the last row
        grid.append([take_pending(c) for c in range(len(pending))])
    if not cells:
        return None
    width = 1 + max(c for line in grid for c, p in enumerate(line) if p is not None)
    for line in grid:
        del line[width:]
        line.extend([None] * (width - len(line)))
    return TableData(
        cells=cells,
        headings=frozenset(headings),
        relations=_relations(cells, spans, headings, grid),
        grid=tuple(tuple(line) for line in grid),
    )


def _relations(
    cells: dict[Pos, str],
    spans: dict[Pos, tuple[int, int]],
    headings: set[Pos],
    grid: list[list[Pos | None]],
) -> dict[str, dict[Pos, frozenset[Pos]]]:
    height, width = len(grid), len(grid[0])

    def first(pos: Pos, path: Iterable[Pos]) -> list[Pos]:
        for r, c in path:
            other = grid[r][c]
            if other is not None and other != pos:
                return [other]
        return []

    out: dict[str, dict[Pos, frozenset[Pos]]] = {
        name: {} for name in ("up", "down", "left", "right", "top_heading", "left_heading")
    }
    for pos in cells:
        (r0, c0), (rowspan, colspan) = pos, spans[pos]
        rows = range(r0, min(r0 + rowspan, height))
        cols = range(c0, min(c0 + colspan, width))
        r1, c1 = r0 + rowspan - 1, c0 + colspan - 1
        found: dict[str, list[Pos]] = {name: [] for name in out}
        for r in rows:
            found["right"] += first(pos, ((r, c) for c in range(c1 + 1, width)))
            found["left"] += first(pos, ((r, c) for c in range(c0 - 1, -1, -1)))
        for c in cols:
            found["down"] += first(pos, ((r, c) for r in range(r1 + 1, height)))
            found["up"] += first(pos, ((r, c) for r in range(r0 - 1, -1, -1)))
        for name, positions in found.items():
            out[name][pos] = frozenset(positions)
    for pos in cells:
        out["top_heading"][pos] = _walk_headings(pos, out["up"], headings)
        out["left_heading"][pos] = _walk_headings(pos, out["left"], headings)
    return out


def _walk_headings(
    start: Pos, step: dict[Pos, frozenset[Pos]], headings: set[Pos]
) -> frozenset[Pos]:
    """The heading cells reachable from `start` along `step` (up or left neighbours), or, if
    none, the cells where the walk stops; `start` itself is never one (module docstring)."""
    found: set[Pos] = set()
    ends: set[Pos] = set()
    seen: set[Pos] = set()
    to_visit = {start}
    while to_visit:
        cell = to_visit.pop()
        if cell in seen:
            continue
        seen.add(cell)
        if cell in headings:
            found.add(cell)
        if step[cell]:
            to_visit |= step[cell]
        else:
            ends.add(cell)
    found.discard(start)
    ends.discard(start)
    return frozenset(found or ends)
