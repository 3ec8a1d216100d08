"""Table detection: were the truth's tables found at all, apart from how well (TEDS, GriTS)?

TEDS averages over table pairs, so a missed table and a badly read one look alike. Here a
truth table is *found* when the one-to-one pairing of the documents kind (`tables.pair_tables`,
the assignment on 1 - TEDS under the suite's reading) pairs it with an output table that has a
cell text in common with it (`shares_cell_text`: the same non-empty text after the cell
normalisation TEDS uses). Any two tables share some structure (rows, cells), so TEDS > 0 would
call every table found; a common cell says it is recognisably the same table. An output table
not paired with a truth table it shares a cell with is *invented*. With t truth tables, o output
tables and m found:

* ``table_detection_precision`` = m / o, absent when the output has no table (nothing claimed);
* ``table_detection_recall`` = m / t, absent when the truth has no table (nothing to find);
* ``table_detection_f1`` = 2m / (t + o), the harmonic mean of the two where both exist, and
  defined whenever either side has a table: 0 for an output whose tables are all invented, or
  that found none of the truth's.

A case with no table on either side has none of them. The counts ``table_detection_*/tables``
carry m and the denominator, so the report's corpus value beside each mean is the pooled
Σ m / Σ o (Σ m / Σ t, Σ 2m / Σ (t + o)) over the cases: detection as one corpus.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from pytest_doceval.kinds.documents.table_trees import Table
from pytest_doceval.metrics.spec import SHARE, MetricSpec

TABLE_DETECTION_METRICS: Final[Mapping[str, MetricSpec]] = {
    "table_detection_f1": MetricSpec(
        "higher",
        bounds=SHARE,
        pooled="table_detection_f1/",
        description="tables found: 2 x found / (truth tables + output tables), a truth table "
        "found when the TEDS pairing gives it an output table with a cell text in common",
    ),
    "table_detection_precision": MetricSpec(
        "higher",
        headline=False,
        bounds=SHARE,
        pooled="table_detection_precision/",
        description="share of the output's tables that pair with one of the truth's",
    ),
    "table_detection_recall": MetricSpec(
        "higher",
        headline=False,
        bounds=SHARE,
        pooled="table_detection_recall/",
        description="share of the truth's tables the output has (paired, a cell in common)",
    ),
}


def shares_cell_text(a: Table, b: Table) -> bool:
    """Whether two tables have a non-empty cell text in common (module docstring)."""
    texts = {cell.text for row in a.rows for cell in row if cell.text}
    return any(cell.text in texts for row in b.rows for cell in row)


@dataclass(frozen=True)
class DetectionScores:
    metrics: dict[str, float] = field(default_factory=dict)
    counts: dict[str, dict[str, float]] = field(default_factory=dict)


def detection_scores(truth: int, output: int, found: int) -> DetectionScores:
    """The detection metrics of `found` of `truth` tables, with `output` tables in the output
    (module docstring)."""
    if not 0 <= found <= min(truth, output):
        raise ValueError(f"found {found} of {truth} truth and {output} output tables")
    ratios = {
        "table_detection_precision": (found, output),
        "table_detection_recall": (found, truth),
        "table_detection_f1": (2 * found, truth + output),
    }
    present = {name: pair for name, pair in ratios.items() if pair[1] > 0}
    return DetectionScores(
        metrics={name: hits / total for name, (hits, total) in present.items()},
        counts={
            f"{name}/tables": {"matched": float(hits), "total": float(total)}
            for name, (hits, total) in present.items()
        },
    )
