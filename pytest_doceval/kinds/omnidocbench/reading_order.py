"""OmniDocBench v1.6's reading-order comparison of one page (``get_order_paired``), and the rows
of its table pairing it reads (``match_gt2pred_simple`` on tables).

The truth order is every matched row's truth positions, sorted; the predicted order the same
positions taken row by row in the order of the rows' predicted positions (rows with no
prediction left out). Empty positions (a block without ``order``, or order 0) are dropped from
both. Read Order Edit is the Levenshtein distance of the two sequences over the longer length.

Table rows keep one of OmniDocBench's quirks: a truth table paired with the *first* predicted
table has no predicted position (it tests the index for truth, and 0 is false), so it counts in
the truth order only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy.optimize import linear_sum_assignment

from pytest_doceval.kinds.omnidocbench.edit_distance import distance, edit_matrix
from pytest_doceval.kinds.omnidocbench.lines import Position
from pytest_doceval.kinds.omnidocbench.pairs import NO_POSITION, Pair
from pytest_doceval.kinds.omnidocbench.segmentation import Segmented
from pytest_doceval.kinds.omnidocbench.table_html import normalised_table_html


@dataclass(frozen=True)
class ReadingOrder:
    """The page's two orders and their distance."""

    truth: list[Position]
    predicted: list[Position]

    @property
    def edits(self) -> int:
        return int(distance(self.truth, self.predicted))

    @property
    def longer(self) -> int:
        return max(len(self.truth), len(self.predicted))


def _order(position: Position) -> Any:
    return position  # positions compare as OmniDocBench's do (numbers; a text would raise)


def reading_order(rows: Sequence[Pair]) -> ReadingOrder | None:
    """The orders of these rows (module docstring), None when both are empty."""
    with_truth = [r for r in rows if r.gt_position != NO_POSITION]
    placed: list[tuple[tuple[Position, ...], Any]] = [
        (r.gt_position, r.pred_position) for r in with_truth if r.pred_position != ""
    ]
    truth: list[Position] = sorted((p for r in with_truth for p in r.gt_position if p), key=_order)
    predicted: list[Position] = [
        p for positions, _ in sorted(placed, key=lambda x: x[1]) for p in positions if p
    ]
    if not truth and not predicted:
        return None
    return ReadingOrder(truth, predicted)


def _table_match_text(text: str) -> str:
    """``normalize_table_match_content``."""
    if not text:
        return ""
    return normalised_table_html(text) if "<table" in text.lower() else text


def table_rows(truth_tables: Sequence[Mapping[str, Any]], segmented: Segmented) -> list[Pair]:
    """The truth tables' rows of OmniDocBench's table pairing, with the positions reading
    order reads (texts are not kept: tables are scored by `tables`)."""
    truth = [str(t.get("content") or t.get("html", "")) for t in truth_tables]
    # LaTeX tables are converted by LaTeXML, which is not run here: empty, so never paired.
    predicted = [b.content for b in segmented.of("html_table")] + [
        "" for _ in segmented.of("latex_table")
    ]
    starts = [b.start for b in segmented.of("html_table")] + [
        b.start for b in segmented.of("latex_table")
    ]
    gt = [(i, n) for i, t in enumerate(truth) if t and (n := _table_match_text(t))]
    pred = [(i, n) for i, p in enumerate(predicted) if p and (n := _table_match_text(p))]
    positions = [t.get("order") if t.get("order") else "" for t in truth_tables]
    rows = []
    assigned: dict[int, int] = {}
    if pred:
        cost = edit_matrix([n for _, n in gt], [n for _, n in pred])
        assigned = {int(r): int(c) for r, c in zip(*linear_sum_assignment(cost), strict=True)}
    for g in range(len(gt)):
        p = assigned.get(g)
        # filtered indices read the unfiltered lists' positions, as in OmniDocBench
        rows.append(
            Pair(
                (g,),
                (p,) if p is not None else (),
                "",
                "",
                "",
                "",
                (positions[g],),
                starts[p] if p else "",
                "table",
                "",
                1,
            )
        )
    return rows
