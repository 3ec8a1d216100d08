"""A page's Text Edit, Formula Edit and Read Order Edit from its matched rows, as OmniDocBench
v1.6's ``Edit_dist`` metric computes them per page.

Each row compares its normalised truth and prediction (its raw text where the normalised one
is empty); the page's value is Σ Levenshtein distances / Σ longer lengths over its rows, absent
when every row is empty on both sides (the leaderboard's ``ALL_page_avg`` leaves such a page
out). Read Order Edit is the one comparison of the page's two orders (`reading_order`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_doceval.kinds.omnidocbench.edit_distance import distance
from pytest_doceval.kinds.omnidocbench.page_match import PageMatch
from pytest_doceval.kinds.omnidocbench.pairs import Pair


@dataclass(frozen=True)
class RowEdit:
    """One row as the metric reads it."""

    pair: Pair
    truth: str
    prediction: str
    edits: int
    longer: int


@dataclass(frozen=True)
class EditScore:
    """Σ edits and Σ longer lengths of a page's rows; `value` their ratio (None: 0/0)."""

    edits: int
    longer: int
    rows: tuple[RowEdit, ...] = ()

    @property
    def value(self) -> float | None:
        return self.edits / self.longer if self.longer else None


def row_edit(pair: Pair) -> RowEdit:
    truth = pair.norm_gt or pair.gt
    prediction = pair.norm_pred or pair.pred
    longer = max(len(truth), len(prediction))
    return RowEdit(
        pair, truth, prediction, int(distance(prediction, truth)) if longer else 0, longer
    )


def rows_score(pairs: Sequence[Pair]) -> EditScore | None:
    """The page's score over these rows; None when there is none."""
    if not pairs:
        return None
    rows = tuple(row_edit(p) for p in pairs)
    return EditScore(sum(r.edits for r in rows), sum(r.longer for r in rows), rows)


@dataclass(frozen=True)
class EditScores:
    text: EditScore | None
    formula: EditScore | None
    order: EditScore | None


def edit_scores(match: PageMatch) -> EditScores:
    """The three edit scores of a matched page."""
    order = match.order
    return EditScores(
        rows_score(match.text),
        rows_score([r.pair for r in match.formulas]),
        EditScore(order.edits, order.longer) if order is not None else None,
    )
