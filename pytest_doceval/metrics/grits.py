"""GriTS: grid table similarity, for tables read by any kind (Con, Top and, with boxes, Loc).

The definition is Smock, Pesala and Abraham's (*GriTS: Grid table similarity metric for table
structure recognition*, ICDAR 2023), as its authors' package ``grits-metric`` 0.7.0 (MIT,
Kensho) computes it, which the tests hold this module equal to:

* A table is a **grid**: every cell written (`GridCell`: text, colspan, rowspan, optional box)
  placed as the HTML table model places it (`table_grid`: row by row, each cell in the first
  column of its row that no cell above spans into; a span reaching past the last row adds rows,
  as the package's conversion does), so a merged cell fills every slot it covers. A slot no
  cell covers holds the empty text, the span [0, 0, 1, 1] and the box [0, 0, 0, 0].
* Each slot holds a feature: its cell's text (**Con**), its cell's span relative to the slot,
  [c0 - j, r0 - i, c1 - j, r1 - i] for a cell over rows [r0, r1) and columns [c0, c1) seen from
  slot (i, j) (**Top**; [0, 0, 1, 1] for an unmerged cell), or its cell's bounding box
  (**Loc**). Two slots' similarity is, for Con, 2 LCS(a, b) / (|a| + |b|) (1 for equal texts,
  the empty one included), and for Top and Loc the IoU of the two boxes (0 without overlap).
* Two grids are matched by the **factored 2D most-similar substructures**: the rows of the
  truth are aligned with the output's by a sequence alignment (no crossing, rows may be
  skipped) whose reward for a row pair is the best alignment of their slots; the columns the
  same way on the transposed grids; the true-positive score is the sum of the similarities of
  the slots at the aligned rows and columns. The package's two shortcuts are part of what it
  computes and are kept: grids of one shape whose slot-by-slot score reaches
  (max(rows, cols) - 1) x min(rows, cols) score that, and grids with as many columns whose
  aligned rows score at least (aligned rows x columns - 1) stop there. Ties in an alignment go
  to the diagonal, then to skipping a truth row, as there.
* The tables of a document are paired one to one by the assignment of largest total true
  positive score (scipy's Hungarian solver), a table left alone scoring nothing, and
  **GriTS** = 2 TP / (truth slots + output slots): precision TP / output slots, recall
  TP / truth slots, their harmonic mean (precision 1 with no output slot, recall 1 with no
  truth slot, F1 0 when both are 0: the package's conventions). Counting slots, a missing or
  invented table costs in proportion to its size; a table with no cells costs nothing.

Where the package stores the pair scores as float32 before the assignment and sums them in
float32, this module keeps float64: the two agree to about 1e-7.

**Speed.** The package aligns in Python loops, O(R_t R_p C_t C_p) steps for one pair. Here the
slot similarities come at once from rapidfuzz (``cdist`` of LCS lengths) or array arithmetic,
and an alignment row ``s[a, b] = max(s[a-1, b-1] + r, s[a-1, b], s[a, b-1])`` is one numpy
step for every row pair at once: the last term makes the row a running maximum
(``np.maximum.accumulate``). The shortcut that needs only slot-by-slot scores is tried before
the full similarity tensor is built. ``benchmarks/bench_grits.py`` times both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cdist, cpdist

from pytest_doceval.metrics.assignment import assign

FloatArray = npt.NDArray[np.float64]
Box = tuple[float, float, float, float]  # x0, y0, x1, y1
Aspect = Literal["con", "top", "loc"]
ASPECTS: Final[tuple[Aspect, ...]] = ("con", "top", "loc")
# A pair of tables whose slot-by-slot similarity tensor would exceed this many entries (8 bytes
# each) is refused: 25 million is 200 MB, two tables of 5,000 slots.
MAX_SLOT_PAIRS: Final = 25_000_000
_EMPTY_SPAN: Final = (0, 0, 1, 1)
_EMPTY_BOX: Final = (0.0, 0.0, 0.0, 0.0)


class GritsInputError(ValueError):
    """Tables GriTS cannot compare as given (a malformed box, tables too large)."""


@dataclass(frozen=True)
class GridCell:
    """A table cell as written: its text, its spans and, where known, its box."""

    text: str = ""
    colspan: int = 1
    rowspan: int = 1
    box: Box | None = None


@dataclass(frozen=True)
class TableGrid:
    """A table placed on its grid (`table_grid`): per slot, the text (Con), the relative span
    (Top) and, when every cell has one, the box (Loc)."""

    texts: tuple[str, ...]  # row-major, rows x cols
    spans: npt.NDArray[np.int64]  # (rows x cols, 4)
    boxes: FloatArray | None  # (rows x cols, 4), None unless every cell has a box
    rows: int
    cols: int

    @property
    def slots(self) -> int:
        return self.rows * self.cols


def table_grid(rows: Sequence[Sequence[GridCell]]) -> TableGrid:
    """Place the cells of `rows` (the table's rows as written, top to bottom) on their grid
    (module docstring)."""
    placed: list[tuple[int, int, GridCell]] = []
    taken: dict[int, set[int]] = {}
    for r, row in enumerate(rows):
        column = 0
        for cell in row:
            if cell.colspan < 1 or cell.rowspan < 1:
                raise GritsInputError(f"a cell's spans must be at least 1, not {cell}")
            occupied = taken.setdefault(r, set())
            while column in occupied:
                column += 1
            placed.append((r, column, cell))
            for covered in range(r, r + cell.rowspan):
                taken.setdefault(covered, set()).update(range(column, column + cell.colspan))
            column += cell.colspan
    n_rows = max((r + c.rowspan for r, _, c in placed), default=0)
    n_cols = max((col + c.colspan for _, col, c in placed), default=0)
    texts = [""] * (n_rows * n_cols)
    spans = np.tile(np.array(_EMPTY_SPAN, dtype=np.int64), (n_rows * n_cols, 1))
    with_boxes = bool(placed) and all(c.box is not None for _, _, c in placed)
    boxes = np.tile(np.array(_EMPTY_BOX), (n_rows * n_cols, 1)) if with_boxes else None
    for r0, c0, cell in placed:  # later cells overwrite overlapping ones, as in HTML
        if cell.box is not None and (cell.box[0] > cell.box[2] or cell.box[1] > cell.box[3]):
            raise GritsInputError(f"a cell's box must be x0 <= x1 and y0 <= y1, not {cell.box}")
        for i in range(r0, r0 + cell.rowspan):
            for j in range(c0, c0 + cell.colspan):
                slot = i * n_cols + j
                texts[slot] = cell.text
                spans[slot] = (c0 - j, r0 - i, c0 + cell.colspan - j, r0 + cell.rowspan - i)
                if boxes is not None and cell.box is not None:
                    boxes[slot] = cell.box
    return TableGrid(tuple(texts), spans, boxes, n_rows, n_cols)


# ------------------------------------------------------------------------ slot similarity


def _lcs_similarity(a: Sequence[str], b: Sequence[str], *, pairwise: bool) -> FloatArray:
    """2 LCS / (|a| + |b|) of every text of `a` against every one of `b` (or, `pairwise`,
    of a[k] against b[k]); 1 for two empty texts."""
    if pairwise:
        lcs = cpdist(a, b, scorer=LCSseq.similarity, dtype=np.int64)
        total = np.array([len(t) for t in a]) + np.array([len(t) for t in b])
    else:
        lcs = cdist(a, b, scorer=LCSseq.similarity, dtype=np.int64)
        total = np.array([len(t) for t in a])[:, None] + np.array([len(t) for t in b])[None, :]
    out: FloatArray = np.ones(lcs.shape)
    np.divide(2 * lcs, total, out=out, where=total > 0)
    return out


def _iou(a: npt.NDArray[Any], b: npt.NDArray[Any], *, pairwise: bool) -> FloatArray:
    """Intersection over union of boxes (x0, y0, x1, y1): every one of `a` against every one
    of `b`, or, `pairwise`, a[k] against b[k]; 0 where they do not overlap."""
    if not pairwise:
        a, b = a[:, None, :], b[None, :, :]
    width = np.maximum(0, np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]))
    height = np.maximum(0, np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]))
    inter = width * height
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    union = area_a + area_b - inter
    out: FloatArray = np.zeros(np.shape(inter))
    np.divide(inter, union, out=out, where=inter != 0)
    return out


def _features(grid: TableGrid, aspect: Aspect) -> Sequence[str] | npt.NDArray[Any]:
    if aspect == "con":
        return grid.texts
    if aspect == "top":
        return grid.spans
    if grid.boxes is None:
        raise GritsInputError("GriTS-Loc needs a box on every cell of both tables")
    return grid.boxes


def _similarity(
    truth: TableGrid, output: TableGrid, aspect: Aspect, *, pairwise: bool = False
) -> FloatArray:
    """Slot similarities: (truth slots, output slots), or slot by slot (`pairwise`, equal
    shapes)."""
    a, b = _features(truth, aspect), _features(output, aspect)
    if aspect == "con":
        return _lcs_similarity(list(a), list(b), pairwise=pairwise)
    return _iou(np.asarray(a), np.asarray(b), pairwise=pairwise)


# ------------------------------------------------------------------------ alignment


def _alignment_values(rewards: FloatArray) -> FloatArray:
    """The best alignment score of every sequence pair: `rewards` is (..., n, m), the rewards
    of pairing element a of one sequence with element b of the other; the result is (...)."""
    *batch, n, m = rewards.shape
    row = np.zeros((*batch, m + 1))
    for a in range(n):
        step = np.maximum(row[..., :-1] + rewards[..., a, :], row[..., 1:])
        row = np.concatenate([np.zeros((*batch, 1)), np.maximum.accumulate(step, axis=-1)], -1)
    values: FloatArray = row[..., -1]
    return values


def _align(rewards: FloatArray) -> tuple[list[int], list[int], float]:
    """The best alignment of two sequences under `rewards` (n, m): the aligned indices of
    each, and its score; ties to the diagonal, then to skipping an element of the first."""
    n, m = rewards.shape
    scores = np.zeros((n + 1, m + 1))
    for a in range(n):
        step = np.maximum(scores[a, :-1] + rewards[a], scores[a, 1:])
        scores[a + 1, 1:] = np.maximum.accumulate(step)
    diagonal = scores[:-1, :-1] + rewards
    pointers = np.where(
        diagonal == scores[1:, 1:], 0, np.where(scores[:-1, 1:] == scores[1:, 1:], -1, 1)
    )
    first: list[int] = []
    second: list[int] = []
    a, b = n, m
    while a > 0 or b > 0:
        move = -1 if b == 0 else 1 if a == 0 else int(pointers[a - 1, b - 1])
        if move == -1:
            a -= 1
        elif move == 1:
            b -= 1
        else:
            a, b = a - 1, b - 1
            first.append(a)
            second.append(b)
    return first[::-1], second[::-1], float(scores[n, m])


def _sequential_sum(values: FloatArray) -> float:
    """Left to right, as the package adds slot scores (numpy's sum is pairwise)."""
    return float(np.add.accumulate(values.ravel())[-1]) if values.size else 0.0


def true_positive_score(truth: TableGrid, output: TableGrid, aspect: Aspect) -> float:
    """The factored 2D-MSS true-positive score of one pair of grids (module docstring)."""
    if truth.slots == 0 or output.slots == 0:
        return 0.0
    shape_t, shape_o = (truth.rows, truth.cols), (output.rows, output.cols)
    if shape_t == shape_o:
        identity = _sequential_sum(_similarity(truth, output, aspect, pairwise=True))
        if identity >= (max(shape_t) - 1) * min(shape_t):
            return identity
    if truth.slots * output.slots > MAX_SLOT_PAIRS:
        raise GritsInputError(
            f"tables of {truth.slots:,} and {output.slots:,} slots are too large to compare "
            f"(limit {MAX_SLOT_PAIRS:,} slot pairs)"
        )
    rewards = _similarity(truth, output, aspect).reshape(
        truth.rows, truth.cols, output.rows, output.cols
    )
    row_rewards = _alignment_values(rewards.transpose(0, 2, 1, 3))
    rows_t, rows_o, _ = _align(row_rewards)
    if truth.cols == output.cols:
        # (aligned rows, columns): each aligned row pair, column by column
        aligned = np.diagonal(rewards[rows_t, :, rows_o, :], axis1=1, axis2=2)
        score = _sequential_sum(aligned)
        if score >= len(rows_t) * truth.cols - 1:
            return score
    column_rewards = _alignment_values(rewards.transpose(1, 3, 0, 2))
    cols_t, cols_o, _ = _align(column_rewards)
    r_t, r_o = np.array(rows_t)[:, None], np.array(rows_o)[:, None]
    c_t, c_o = np.array(cols_t)[None, :], np.array(cols_o)[None, :]
    return _sequential_sum(rewards[r_t, c_t, r_o, c_o])  # aligned rows x aligned columns


# ------------------------------------------------------------------------ a document's tables


@dataclass(frozen=True)
class GritsScore:
    """GriTS of a document's tables against the truth's: the true-positive score, the slots
    on each side, and the pairs the assignment formed (truth index, output index)."""

    true_positive: float
    truth_slots: int
    output_slots: int
    pairs: tuple[tuple[int, int], ...] = ()

    @property
    def precision(self) -> float:
        return self.true_positive / self.output_slots if self.output_slots else 1.0

    @property
    def recall(self) -> float:
        return self.true_positive / self.truth_slots if self.truth_slots else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0


def grits(truth: Sequence[TableGrid], output: Sequence[TableGrid], aspect: Aspect) -> GritsScore:
    """GriTS-`aspect` of the output's tables against the truth's, paired one to one by the
    largest total true-positive score (module docstring)."""
    if aspect not in ASPECTS:
        raise ValueError(f"GriTS aspect must be one of {', '.join(ASPECTS)}, not {aspect!r}")
    n = max(len(truth), len(output))
    scores = np.zeros((n, n))
    for i, t in enumerate(truth):
        for j, o in enumerate(output):
            scores[i, j] = true_positive_score(t, o, aspect)
    pairs = tuple(
        (i, j) for i, j in enumerate(assign(-scores).tolist()) if i < len(truth) and j < len(output)
    )
    return GritsScore(
        true_positive=float(sum(scores[i, j] for i, j in pairs)),
        truth_slots=sum(t.slots for t in truth),
        output_slots=sum(o.slots for o in output),
        pairs=pairs,
    )
