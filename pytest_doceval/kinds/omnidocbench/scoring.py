"""OmniDocBench v1.6's per-page end-to-end scoring, reimplemented (the contract with the kind).

`score_page` scores one annotated page against the page's predicted markdown the way
OmniDocBench's own `End2EndDataset` (``match_method: quick_match``) and `End2EndEval` score it;
`leaderboard` aggregates pages the way its report does. The numbers equal the reference's
(tests/test_omnidocbench_parity.py runs its code on the demo pages); nothing here imports it.

A metric is given only where it equals the reference; `COMPUTED_METRICS` lists them. Today
those are ``table_teds`` and ``table_teds_s``: the text, formula and reading-order numbers hang
on the reference's whole text matcher (``quick_match`` with its merge/split search, the formula
candidate search that hands formula-looking text to the text pairs, and their fallbacks), not
reimplemented yet; `NOT_COMPUTED` says so per metric, in words a report can show. Given a
checkout of OmniDocBench's code (`reference.Reference`, the suite's ``reference`` key), those
three come from its own code instead (`reference`), and `scoring_id` says so.

Timeouts: the reference gives TEDS 0 to a table pair that takes over 120 s, and falls back to a
chunked matcher for a page whose text matching takes over 420 s. Ours has no timeout: it
computes the exact TEDS of every pair (a 40x12 table pair: under a second on a busy 2-core
machine).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_doceval.errors import OmniDocBenchInputError
from pytest_doceval.kinds.omnidocbench.annotations import (
    check_page,
    has_table,
    in_reading_order,
    truth_elements,
)
from pytest_doceval.kinds.omnidocbench.markdown_tables import predicted_tables
from pytest_doceval.kinds.omnidocbench.matched_block import MatchedBlock
from pytest_doceval.kinds.omnidocbench.reference import METRIC_OF_ELEMENT, Reference
from pytest_doceval.kinds.omnidocbench.tables import pair_tables

SCORING_ID = "omnidocbench-v1.6@9dc1dec"
__all__ = [
    "COMPUTED_METRICS",
    "NOT_COMPUTED",
    "PAGE_METRICS",
    "SCORING_ID",
    "MatchedBlock",
    "OmniDocBenchInputError",
    "PageScore",
    "leaderboard",
    "not_computed",
    "score_page",
    "scoring_id",
]

PAGE_METRICS: tuple[str, ...] = (
    "text_edit",
    "formula_edit",
    "table_teds",
    "table_teds_s",
    "reading_order_edit",
)
COMPUTED_METRICS: tuple[str, ...] = ("table_teds", "table_teds_s")
_NOT_YET = "not computed: OmniDocBench's text matcher (quick_match) is not reimplemented yet"
NOT_COMPUTED: Mapping[str, str] = {
    "text_edit": _NOT_YET,
    "formula_edit": _NOT_YET,
    "reading_order_edit": _NOT_YET,
}


def scoring_id(reference: Reference | None) -> str:
    """The scoring id of numbers made with `reference` (None: ours alone): baselines made
    by the two paths never compare."""
    return SCORING_ID if reference is None else SCORING_ID + reference.scoring_suffix


def not_computed(reference: Reference | None) -> Mapping[str, str]:
    """The metrics not given, with the reason: `NOT_COMPUTED`, less what `reference` gives."""
    if reference is None:
        return NOT_COMPUTED
    given = set(METRIC_OF_ELEMENT.values())
    return {metric: why for metric, why in NOT_COMPUTED.items() if metric not in given}


@dataclass(frozen=True)
class PageScore:
    """One page's metrics, with the sums behind the rates and the pairs behind the sums."""

    metrics: Mapping[str, float]  # only the metrics this page has (no text blocks -> no text_edit)
    counts: Mapping[str, tuple[float, float]]  # "text_edit": (Σ edits, Σ max_len), corpus rates
    blocks: tuple[MatchedBlock, ...]
    notes: tuple[str, ...]  # e.g. "empty prediction: scored as OmniDocBench scores it"


def _order(element: Mapping[str, Any]) -> int | None:
    order = element.get("order")
    return order if isinstance(order, int) and not isinstance(order, bool) else None


def _table_scores(
    page: Mapping[str, Any], prediction: str, notes: list[str]
) -> tuple[dict[str, float], dict[str, tuple[float, float]], list[MatchedBlock]]:
    tables = in_reading_order(truth_elements(page).get("table", []))
    truth = [str(t.get("content") or t.get("html", "")) for t in tables]
    if not truth:
        if has_table(page):
            # Its only tables sit in a truncated group with an ignored member: the reference
            # counts the page with a score of 0 (its "missing page" rows).
            return {"table_teds": 0.0, "table_teds_s": 0.0}, {}, []
        return {}, {}, []
    predicted = predicted_tables(prediction)
    if predicted.latex:
        notes.append(
            f"{predicted.latex} LaTeX table(s) in the prediction, scored as empty tables: "
            "OmniDocBench converts LaTeX tables with LaTeXML (latexmlc) and scores them empty "
            "where it is not installed; these numbers are that reading"
        )
    pairs = pair_tables(truth, predicted.tables)
    n = float(len(pairs))
    teds = sum(p.teds for p in pairs)
    teds_s = sum(p.teds_s for p in pairs)
    blocks = [
        MatchedBlock("table", p.truth, p.prediction, p.edit, p.max_len, _order(t), None)
        for p, t in zip(pairs, tables, strict=True)
    ]
    metrics = {"table_teds": teds / n, "table_teds_s": teds_s / n}
    counts = {"table_teds": (teds, n), "table_teds_s": (teds_s, n)}
    return metrics, counts, blocks


def score_page(
    page: Mapping[str, Any], prediction: str, reference: Reference | None = None
) -> PageScore:
    """Score one page of OmniDocBench's annotation JSON against its predicted markdown.

    Raises OmniDocBenchInputError naming the cause on an annotation not in the format.
    Only the metrics whose numbers equal the reference's are given (see the kind's README):
    ``table_teds`` and ``table_teds_s``, and with `reference` (a checkout of OmniDocBench's
    code) also ``text_edit``, ``formula_edit`` and ``reading_order_edit`` from its own code
    (OmniDocBenchReferenceError when it cannot run).
    """
    check_page(page)
    notes: list[str] = []
    if not prediction.strip():
        notes.append(
            "empty prediction: scored as OmniDocBench scores it (every truth block unmatched)"
        )
    metrics, counts, blocks = _table_scores(page, prediction, notes)
    if reference is not None:
        text = reference.score(page, prediction)
        metrics.update(text.metrics)
        counts.update(text.counts)
        blocks = [*text.blocks, *blocks]
    return PageScore(metrics=metrics, counts=counts, blocks=tuple(blocks), notes=tuple(notes))


def leaderboard(pages: Sequence[PageScore]) -> dict[str, float]:
    """The numbers OmniDocBench prints for these pages, by its own aggregation.

    Every metric is a mean over the pages that have it (the leaderboard's page-level
    numbers: ``ALL_page_avg`` for the edit distances, the ``page`` split for TEDS, whose
    per-page value is the mean over the page's truth tables). A metric no page has is absent.
    """
    board: dict[str, float] = {}
    for metric in PAGE_METRICS:
        values = [p.metrics[metric] for p in pages if metric in p.metrics]
        if values:
            board[metric] = sum(values) / len(values)
    return board
