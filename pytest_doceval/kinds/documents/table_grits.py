"""GriTS of a document's tables (`metrics.grits`): ``grits_con`` and ``grits_top``.

Each table the readers found (`table_trees.read_tables`: pipe, grid and HTML tables) is placed
on its grid with its cells' spans; a cell's text is the one TEDS compares (`table_trees.
cell_text`: NFKC, markdown and pandoc syntax removed, whitespace folded), so GriTS-Con and
TEDS read the same characters. The truth's and the output's tables are paired by GriTS's own
assignment (largest total true-positive score), not TEDS's: GriTS is the number its package
would give on these tables. Markdown and HTML carry no cell boxes, so there is no GriTS-Loc here.

Per case, GriTS = 2 TP / (truth slots + output slots) over all the document's tables; the
counts ``grits_con/slots`` and ``grits_top/slots`` (``matched`` = 2 TP, ``total`` = the slots)
make the report's corpus value beside the mean Σ 2 TP / Σ slots over the cases: the package's
recommended aggregate (``GritsEvaluator.compute_grits``), where the mean is its older
``compute_mean_grits_per_sample``.

A table with no cells (``<table></table>``) has no slot and costs nothing, as in the package,
and gets a note; a truth whose tables have no cell at all has no GriTS (nothing to find).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pytest_doceval.kinds.documents.table_trees import Table
from pytest_doceval.metrics.grits import GridCell, GritsInputError, TableGrid, grits, table_grid
from pytest_doceval.metrics.spec import SHARE, MetricSpec

GRITS_ASPECTS: Final = ("con", "top")
GRITS_METRICS: Final[Mapping[str, MetricSpec]] = {
    "grits_con": MetricSpec(
        "higher",
        bounds=SHARE,
        pooled="grits_con/",
        description="GriTS-Con (Smock et al. 2023): cell texts compared on the tables' grids "
        "(2 LCS / lengths), rows and columns aligned; F1 over all the document's table cells",
        threshold=0.5,
    ),
    "grits_top": MetricSpec(
        "higher",
        bounds=SHARE,
        pooled="grits_top/",
        description="GriTS-Top: the same on each cell's row and column spans (IoU), text "
        "left out: the tables' topology",
    ),
}


def grid_of(table: Table) -> TableGrid:
    """`table` on its grid, as GriTS compares it."""
    return table_grid([[GridCell(c.text, c.colspan, c.rowspan) for c in row] for row in table.rows])


@dataclass(frozen=True)
class GritsScores:
    metrics: dict[str, float] = field(default_factory=dict)
    counts: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _empty_tables(side: str, grids: Sequence[TableGrid]) -> list[str]:
    empty = [str(i + 1) for i, g in enumerate(grids) if g.slots == 0]
    if not empty:
        return []
    return [f"GriTS: {side} table(s) {', '.join(empty)} have no cells and count for nothing"]


def score_grits(truth: Sequence[Table], output: Sequence[Table]) -> GritsScores:
    """``grits_con`` and ``grits_top`` of the output's tables against the truth's (module
    docstring); none when the truth's tables have no cell."""
    truth_grids = [grid_of(t) for t in truth]
    output_grids = [grid_of(t) for t in output]
    notes = _empty_tables("truth", truth_grids) + _empty_tables("output", output_grids)
    if not any(g.slots for g in truth_grids):
        return GritsScores(notes=[*notes, "GriTS: the truth's tables have no cells: not scored"])
    metrics: dict[str, float] = {}
    counts: dict[str, dict[str, float]] = {}
    for aspect in GRITS_ASPECTS:
        try:
            score = grits(truth_grids, output_grids, aspect)
        except GritsInputError as exc:
            return GritsScores(notes=[*notes, f"GriTS not scored: {exc}"])
        metrics[f"grits_{aspect}"] = score.f1
        counts[f"grits_{aspect}/slots"] = {
            "matched": 2 * score.true_positive,
            "total": float(score.truth_slots + score.output_slots),
        }
    return GritsScores(metrics, counts, notes)
