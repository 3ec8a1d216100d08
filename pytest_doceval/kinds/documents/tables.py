"""A document's tables against its truth's: pairing, ``table_teds`` and ``table_teds_s``.

Both texts' tables are read (`table_trees.read_tables`). They are paired one to one by the
optimal assignment on 1 - TEDS (`metrics.assignment.assign`, which extraction's entries use too:
scipy's Hungarian solver), the shorter side padded with dummies at cost 1, so a missing or an
invented table is a pair scoring 0. A pair that the assignment forms at TEDS 0 (or below, which
PubTabNet's reading allows) shares nothing: it counts as a missing plus an invented table, not
as a match. ``table_teds`` is the mean TEDS
over the pairs, ``table_teds_s`` the mean TEDS-S over the same pairs (unmatched ones 0 in both),
that is, over max(truth tables, output tables) -- or more when zero-TEDS pairs split.

With ``teds = "pubtabnet"`` (`TEDS_READINGS`) the pairs are scored by PubTabNet's own TEDS
(`teds_pubtabnet`) instead of the default fair reading (`teds`).

Beside TEDS, the same tables give GriTS-Con and GriTS-Top (`table_grits`, GriTS's own pairing)
and table detection precision / recall / F1 (`table_detection`: the pairs above that have a
cell text in common).

A truth without tables gives no TEDS and no GriTS (neither 1 nor 0: there is nothing to
measure), and an output with tables there gets a note; its invented tables still count for
table detection (precision 0, F1 0). Tables too large for an exact tree edit
distance (`tree_edit.MAX_CELLS`) leave the case without table metrics, with a note. What the
readers found odd (ragged rows, broken HTML) is a note naming the side. ``counts["tables"]``
holds the truth's, the output's and the matched tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from pytest_doceval.kinds.documents.table_detection import (
    TABLE_DETECTION_METRICS,
    detection_scores,
    shares_cell_text,
)
from pytest_doceval.kinds.documents.table_grits import GRITS_METRICS, score_grits
from pytest_doceval.kinds.documents.table_trees import Table, read_tables
from pytest_doceval.kinds.documents.teds import teds, teds_s
from pytest_doceval.metrics.assignment import assign
from pytest_doceval.metrics.json_input import ExtractionInputError
from pytest_doceval.metrics.spec import SHARE, MetricSpec

# How TEDS reads a table: "fair" (`teds`, the default: what a reader sees in the cells) or
# "pubtabnet" (`teds_pubtabnet`: PubTabNet's metric.py on the table's HTML, markup and all).
TEDS_READINGS: Final = ("fair", "pubtabnet")

TABLE_METRICS: Final[Mapping[str, MetricSpec]] = {
    "table_teds": MetricSpec(
        "higher",
        bounds=SHARE,
        description="mean TEDS (PubTabNet tree-edit similarity: structure and cell text) of "
        "the truth's tables paired one to one with the output's; missing or invented tables 0",
        threshold=0.5,  # the tail: tables more wrong than right
    ),
    "table_teds_s": MetricSpec(
        "higher",
        bounds=SHARE,
        description="mean TEDS-S (structure only: rows, cells, spans) over the same table pairs",
    ),
    **GRITS_METRICS,
    **TABLE_DETECTION_METRICS,
}


@dataclass(frozen=True)
class TablePair:
    truth: int | None  # index among the truth's tables; None for an invented table
    output: int | None  # None for a missing table
    teds: float
    teds_s: float


@dataclass(frozen=True)
class TableScores:
    metrics: dict[str, float] = field(default_factory=dict)
    counts: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    views: dict[str, Any] = field(default_factory=dict)


def pair_tables(truth: list[Table], output: list[Table]) -> list[TablePair]:
    """The one-to-one pairs of least total 1 - TEDS (module docstring), in truth order, then
    the invented tables."""
    return pair_by(
        len(truth),
        len(output),
        lambda i, j: teds(truth[i], output[j]),
        lambda i, j: teds_s(truth[i], output[j]),
    )


def pair_by(
    n_truth: int,
    n_output: int,
    teds_of: Callable[[int, int], float],
    teds_s_of: Callable[[int, int], float],
) -> list[TablePair]:
    """`pair_tables` for tables known by their index and scored by `teds_of`/`teds_s_of`."""
    n = max(n_truth, n_output)
    similarity = np.zeros((n, n))
    for i in range(n_truth):
        for j in range(n_output):
            similarity[i, j] = teds_of(i, j)
    cols = assign(1.0 - similarity)
    pairs: list[TablePair] = []
    for i, j in enumerate(cols.tolist()):
        real_i, real_j = i < n_truth, j < n_output
        if real_i and real_j and similarity[i, j] > 0:
            pairs.append(TablePair(i, j, float(similarity[i, j]), teds_s_of(i, j)))
            continue
        if real_i:
            pairs.append(TablePair(i, None, 0.0, 0.0))
        if real_j:
            pairs.append(TablePair(None, j, 0.0, 0.0))
    pairs.sort(key=lambda p: (p.truth is None, p.truth or 0, p.output or 0))
    return pairs


def _pubtabnet_pairs(truth: list[Table], output: list[Table]) -> tuple[list[TablePair], list[str]]:
    """The pairs under PubTabNet's own TEDS (`teds_pubtabnet`), and what its reading noted."""
    from pytest_doceval.kinds.documents.teds_pubtabnet import pubtabnet_teds, pubtabnet_trees

    truth_trees, truth_notes = pubtabnet_trees(truth)
    output_trees, output_notes = pubtabnet_trees(output)
    pairs = pair_by(
        len(truth),
        len(output),
        lambda i, j: pubtabnet_teds(truth_trees[i], output_trees[j]),
        lambda i, j: pubtabnet_teds(truth_trees[i], output_trees[j], structure_only=True),
    )
    notes = [f"truth: {n}" for n in truth_notes] + [f"output: {n}" for n in output_notes]
    return pairs, notes


def _shown(table: Table | None) -> list[list[str]]:
    """A table's rows as text for the report; a merged cell shows its spans as ``⟨c×r⟩``."""
    if table is None:
        return []
    return [
        [
            cell.text
            + (
                f" ⟨{cell.colspan}×{cell.rowspan}⟩"
                if (cell.colspan, cell.rowspan) != (1, 1)
                else ""
            )
            for cell in row
        ]
        for row in table.rows
    ]


def score_tables(truth: str, output: str, *, reading: str = "fair") -> TableScores:
    """Table metrics, counts, notes and the ``tables`` view of one output (module docstring),
    under the TEDS `reading` (`TEDS_READINGS`)."""
    truth_read, output_read = read_tables(truth), read_tables(output)
    notes = [f"truth: {n}" for n in truth_read.notes] + [f"output: {n}" for n in output_read.notes]
    truth_tables, output_tables = truth_read.tables, output_read.tables
    if not truth_tables:
        if not output_tables:
            return TableScores(notes=notes)
        notes.append(
            f"the truth has no table but the output has {len(output_tables)}: no TEDS or "
            "GriTS for this case; table detection counts them as invented"
        )
        invented = detection_scores(0, len(output_tables), 0)
        return TableScores(invented.metrics, invented.counts, notes)
    try:
        if reading == "pubtabnet":
            pairs, reading_notes = _pubtabnet_pairs(truth_tables, output_tables)
            notes += reading_notes
        else:
            pairs = pair_tables(truth_tables, output_tables)
    except ExtractionInputError as exc:  # a table pair past tree_edit.MAX_CELLS
        notes.append(f"table metrics not scored: {exc}")
        return TableScores(notes=notes)
    matched = sum(1 for p in pairs if p.truth is not None and p.output is not None)
    found = sum(
        1
        for p in pairs
        if p.truth is not None
        and p.output is not None
        and shares_cell_text(truth_tables[p.truth], output_tables[p.output])
    )
    detection = detection_scores(len(truth_tables), len(output_tables), found)
    grids = score_grits(truth_tables, output_tables)
    metrics = {
        "table_teds": sum(p.teds for p in pairs) / len(pairs),
        "table_teds_s": sum(p.teds_s for p in pairs) / len(pairs),
        **grids.metrics,
        **detection.metrics,
    }
    counts: dict[str, dict[str, float]] = {
        "tables": {"truth": len(truth_tables), "output": len(output_tables), "matched": matched},
        **grids.counts,
        **detection.counts,
    }
    notes += grids.notes
    view = {
        "pairs": [
            {
                "truth": p.truth,
                "output": p.output,
                "teds": round(p.teds, 6),
                "teds_s": round(p.teds_s, 6),
                "truth_rows": _shown(None if p.truth is None else truth_tables[p.truth]),
                "output_rows": _shown(None if p.output is None else output_tables[p.output]),
            }
            for p in pairs
        ]
    }
    return TableScores(metrics, counts, notes, {"tables": view})
