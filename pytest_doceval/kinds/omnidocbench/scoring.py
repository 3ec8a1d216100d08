"""OmniDocBench v1.6's per-page end-to-end scoring, reimplemented (the contract with the kind).

`score_page` scores one annotated page against the page's predicted markdown the way
OmniDocBench's own `End2EndDataset` (``match_method: quick_match``, ``configs/end2end.yaml``)
and `End2EndEval` score it; `leaderboard` aggregates pages the way its report and leaderboard
do. The numbers equal its code's (tests/test_omnidocbench_parity.py runs it on the demo pages
and on generated pages covering the matcher's branches); nothing here imports it.

* ``text_edit``, ``formula_edit``, ``reading_order_edit``: its whole text matcher
  (`page_match`), then its ``Edit_dist`` per page (`edit_scores`). Given a checkout of its
  code (`reference.Reference`, the suite's ``reference`` key), these three come from its own
  code instead (the opt-in cross-check), and `scoring_id` says so.
* ``table_teds``, ``table_teds_s``: its table finder, pairing and TEDS (`tables`).
* ``formula_cdm``: CDM per matched display formula (`cdm`), computed in an engine stage
  where TeX Live is installed; `cdm_page` makes the page's value from its rows' scores.
* ``overall`` (leaderboard only): ((1 - Text Edit) x 100 + Formula CDM x 100 + Table TEDS x
  100) / 3, as its leaderboard computes it, where all three exist.

Timeouts: its text matching falls back to a chunked match after 420 s a page (300 s for its
merge search); the same deadlines are checked here (`deadlines`), and a page that passes one is
noted. It gives TEDS 0 to a table pair that takes over 120 s; ours computes every pair's exact
TEDS (a 40x12 table pair: under a second on a busy 2-core machine).
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
from pytest_doceval.kinds.omnidocbench.cdm_inputs import CdmInputs
from pytest_doceval.kinds.omnidocbench.edit_scores import EditScore, edit_scores
from pytest_doceval.kinds.omnidocbench.formula_lines import split_truth_formulas
from pytest_doceval.kinds.omnidocbench.lines import TruthBlock
from pytest_doceval.kinds.omnidocbench.markdown_tables import predicted_tables
from pytest_doceval.kinds.omnidocbench.matched_block import MatchedBlock
from pytest_doceval.kinds.omnidocbench.page_match import PageMatch, match_page
from pytest_doceval.kinds.omnidocbench.quick_match import MatchSettings
from pytest_doceval.kinds.omnidocbench.reference import Reference
from pytest_doceval.kinds.omnidocbench.tables import pair_tables

SCORING_ID = "omnidocbench-v1.6@9dc1dec"
__all__ = [
    "PAGE_METRICS",
    "SCORING_ID",
    "MatchedBlock",
    "OmniDocBenchInputError",
    "PageScore",
    "cdm_page",
    "leaderboard",
    "overall",
    "score_page",
]

PAGE_METRICS: tuple[str, ...] = (
    "text_edit",
    "formula_edit",
    "formula_cdm",
    "table_teds",
    "table_teds_s",
    "reading_order_edit",
)
# Errors the matcher raises on input it cannot read, as OmniDocBench's own code does (it stops
# the whole run); here they are the page's error, with the cause.
_MATCHER_FAILURES = (ValueError, TypeError, KeyError, IndexError, AttributeError)


@dataclass(frozen=True)
class PageScore:
    """One page's metrics, with the sums behind the rates and the pairs behind the sums."""

    metrics: Mapping[str, float]  # only the metrics this page has (no text blocks -> no text_edit)
    counts: Mapping[str, tuple[float, float]]  # "text_edit": (Σ edits, Σ max_len), corpus rates
    blocks: tuple[MatchedBlock, ...]
    notes: tuple[str, ...]  # e.g. "empty prediction: scored as OmniDocBench scores it"
    formulas: tuple[CdmInputs, ...] = ()  # the display formulas CDM scores, in row order
    formula_page: bool = False  # the truth has a display formula: CDM counts the page (0 if none)
    fallbacks: tuple[str, ...] = ()  # the matcher's fallbacks taken (`page_log`)
    deadlines: tuple[str, ...] = ()  # the deadlines it passed
    formula_candidate: str | None = None  # the formula match kept, when not the text match's


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


def _first(positions: Sequence[Any]) -> int | None:
    value = positions[0] if positions else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _edit_blocks(category: str, score: EditScore | None) -> list[MatchedBlock]:
    if score is None:
        return []
    return [
        MatchedBlock(
            category,
            row.truth,
            row.prediction,
            row.edits,
            row.longer,
            _first(row.pair.gt_position),
            row.pair.pred_position if isinstance(row.pair.pred_position, int) else None,
        )
        for row in score.rows
    ]


def _match_notes(match: PageMatch) -> list[str]:
    notes = [f"deadline passed: {what}" for what in match.log.deadlines]
    if match.log.fallbacks:
        notes.append("matcher fallbacks: " + ", ".join(match.log.fallbacks))
    return notes


def _native_text(
    page: Mapping[str, Any], prediction: str, settings: MatchSettings | None
) -> tuple[PageMatch, dict[str, float], dict[str, tuple[float, float]], list[MatchedBlock]]:
    try:
        match = match_page(page, prediction, settings)
    except OmniDocBenchInputError:
        raise
    except _MATCHER_FAILURES as exc:
        raise OmniDocBenchInputError(
            f"OmniDocBench's matcher fails on this page ({type(exc).__name__}: {exc}); its own "
            "code stops on it too"
        ) from exc
    scores = edit_scores(match)
    metrics: dict[str, float] = {}
    counts: dict[str, tuple[float, float]] = {}
    for metric, score in (
        ("text_edit", scores.text),
        ("formula_edit", scores.formula),
        ("reading_order_edit", scores.order),
    ):
        if score is not None and score.value is not None:
            metrics[metric] = score.value
            counts[metric] = (float(score.edits), float(score.longer))
    blocks = _edit_blocks("text_block", scores.text) + _edit_blocks(
        "display_formula", scores.formula
    )
    return match, metrics, counts, blocks


def formula_lines(page: Mapping[str, Any]) -> int:
    """How many truth formula lines the page has (multi-line formulas split as the matcher
    splits them): about how many formulas CDM renders for it (0 for an annotation the matcher
    cannot read; its test says why)."""
    try:
        blocks = [TruthBlock.of(e) for e in truth_elements(page).get("equation_isolated", [])]
        return len(split_truth_formulas(blocks))
    except (OmniDocBenchInputError, *_MATCHER_FAILURES):
        return 0


def has_display_formula(page: Mapping[str, Any]) -> bool:
    """Whether OmniDocBench counts the page for CDM (a display formula not ignored)."""
    return any(
        e.get("category_type") == "equation_isolated" and not e.get("ignore", False)
        for e in page["layout_dets"]
    )


def score_page(
    page: Mapping[str, Any],
    prediction: str,
    reference: Reference | None = None,
    settings: MatchSettings | None = None,
) -> PageScore:
    """Score one page of OmniDocBench's annotation JSON against its predicted markdown: every
    metric but ``formula_cdm`` (`cdm_page`, from the CDM stage's scores of `formulas`).

    Raises OmniDocBenchInputError naming the cause on an annotation not in the format or one
    the matcher cannot read. With `reference` (a checkout of OmniDocBench's code), its own code
    gives ``text_edit``, ``formula_edit`` and ``reading_order_edit`` (OmniDocBenchReferenceError
    when it cannot run)."""
    check_page(page)
    notes: list[str] = []
    if not prediction.strip():
        notes.append(
            "empty prediction: scored as OmniDocBench scores it (every truth block unmatched)"
        )
    metrics, counts, table_blocks = _table_scores(page, prediction, notes)
    match, text_metrics, text_counts, blocks = _native_text(page, prediction, settings)
    if reference is not None:
        text = reference.score(page, prediction)
        text_metrics, text_counts, blocks = dict(text.metrics), dict(text.counts), list(text.blocks)
    else:
        notes += _match_notes(match)
    metrics.update(text_metrics)
    counts.update(text_counts)
    return PageScore(
        metrics=metrics,
        counts=counts,
        blocks=(*blocks, *table_blocks),
        notes=tuple(notes),
        formulas=tuple(row.cdm for row in match.formulas),
        formula_page=has_display_formula(page),
        fallbacks=tuple(match.log.fallbacks),
        deadlines=tuple(match.log.deadlines),
        formula_candidate=match.log.formula_candidate,
    )


def cdm_page(scores: Sequence[float], formula_page: bool) -> float | None:
    """The page's Formula CDM: the mean of its formulas' scores; 0 for a page whose truth has
    a display formula but no row was matched (OmniDocBench's missing-page rows); None for a
    page CDM does not count."""
    if scores:
        return sum(scores) / len(scores)
    return 0.0 if formula_page else None


def overall(board: Mapping[str, float]) -> float | None:
    """The leaderboard's Overall: ((1 - Text Edit) x 100 + CDM x 100 + TEDS x 100) / 3, in
    its order of operations; None unless all three exist."""
    if not all(m in board for m in ("text_edit", "formula_cdm", "table_teds")):
        return None
    text, cdm, teds = board["text_edit"], board["formula_cdm"], board["table_teds"]
    return ((1.0 - text) * 100.0 + cdm * 100.0 + teds * 100.0) / 3.0


def leaderboard(pages: Sequence[PageScore]) -> dict[str, float]:
    """The numbers OmniDocBench prints for these pages, by its own aggregation.

    Every metric is a mean over the pages that have it (the leaderboard's page-level
    numbers: ``ALL_page_avg`` for the edit distances, the ``page`` split for TEDS and CDM,
    whose per-page value is the mean over the page's truth tables or formulas). A metric no
    page has is absent; ``overall`` where its three parts exist.
    """
    board: dict[str, float] = {}
    for metric in PAGE_METRICS:
        values = [p.metrics[metric] for p in pages if metric in p.metrics]
        if values:
            board[metric] = sum(values) / len(values)
    total = overall(board)
    if total is not None:
        board["overall"] = total
    return board
