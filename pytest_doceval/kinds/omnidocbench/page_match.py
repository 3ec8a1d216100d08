"""One page matched as OmniDocBench v1.6 matches it (``process_get_matched_elements`` of its
``end2end_dataset.py``, with ``match_method: quick_match``), for the text, display-formula and
reading-order scores.

1. The prediction is cut into blocks (`segmentation`); the truth's text blocks and display
   formulas, in reading order, are matched with the predicted text and formula blocks
   (`quick_match`, under the page deadline: past it, `chunked_match`, reason
   ``page_timeout``).
2. Formula/text pairs are compared as text; weak text pairs may take a better run of blocks
   (`text_fallbacks`).
3. The display formulas are matched again, the best of several candidates kept
   (`formula_match`); each kept row gets the LaTeX CDM renders (`cdm_inputs`).
4. Text rows of the ignored categories (headers, footers, captions, footnotes, page numbers,
   code) leave the text score; reading order is read from the text, formula and table rows
   (`reading_order`). A formula row whose prediction is text (and not taken as a formula for
   CDM) joins the text rows.

What the page took beyond the plain path (a deadline's fallback, a text-span replacement, and
the formula candidate kept when it is not the text matcher's own) is in `PageMatch.log`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_doceval.kinds.omnidocbench.annotations import in_reading_order, truth_elements
from pytest_doceval.kinds.omnidocbench.cdm_inputs import CdmInputs, cdm_inputs
from pytest_doceval.kinds.omnidocbench.chunked_match import chunked_match
from pytest_doceval.kinds.omnidocbench.deadlines import Deadline, DeadlinePassed
from pytest_doceval.kinds.omnidocbench.formula_inputs import candidate_pool
from pytest_doceval.kinds.omnidocbench.formula_match import best_formula_rows
from pytest_doceval.kinds.omnidocbench.lines import IGNORED_TEXT, TEXT_CATEGORIES, TruthBlock
from pytest_doceval.kinds.omnidocbench.page_log import (
    PageLog,
    note_deadline,
    note_fallback,
    recording,
)
from pytest_doceval.kinds.omnidocbench.pairs import Pair
from pytest_doceval.kinds.omnidocbench.quick_match import (
    QUICK_MATCH_TIMEOUT,
    MatchSettings,
    quick_match,
)
from pytest_doceval.kinds.omnidocbench.reading_order import ReadingOrder, reading_order, table_rows
from pytest_doceval.kinds.omnidocbench.segmentation import segment
from pytest_doceval.kinds.omnidocbench.text_fallbacks import cross_category, local_span_fallback

PAGE_TIMEOUT = "page_timeout"
_NOT_MATCHED_AS_TEXT = ("html_table", "latex_table", "md2html_table", "formula_rescue")
_MATCHED_CATEGORIES = (*TEXT_CATEGORIES, "equation_isolated")
_FORMULA_KINDS = ("equation_inline", "equation_isolated", "")


@dataclass(frozen=True)
class FormulaRow:
    """A matched display formula and the LaTeX CDM renders for it."""

    pair: Pair
    cdm: CdmInputs


@dataclass(frozen=True)
class PageMatch:
    """The page's rows for each score."""

    text: list[Pair]  # Text Edit's rows
    formulas: list[FormulaRow]  # Formula Edit's and CDM's rows
    order: ReadingOrder | None  # None: nothing placed on either side
    log: PageLog


def _truth(
    elements: Mapping[str, list[Mapping[str, Any]]], categories: Sequence[str]
) -> list[TruthBlock]:
    found = [e for category in categories for e in elements.get(category, [])]
    return [TruthBlock.of(e) for e in in_reading_order(found)]


def _text_match(truth: list[TruthBlock], mix: list[Any], settings: MatchSettings) -> list[Pair]:
    deadline = Deadline.after(settings.page_timeout_s, PAGE_TIMEOUT)
    try:
        found = quick_match(truth, mix, settings, page=deadline)
    except DeadlinePassed:
        note_deadline(f"text matching over {settings.page_timeout_s:g} s (match_timeout_sec)")
        note_fallback(PAGE_TIMEOUT)
        return chunked_match(truth, mix, settings.chunks)
    if found.fallback == QUICK_MATCH_TIMEOUT:
        limit = settings.truncated_timeout_s
        note_deadline(f"merge search over {limit:g} s (quick_match_truncated_timeout_sec)")
        note_fallback(QUICK_MATCH_TIMEOUT)
    return found.pairs


def match_page(
    page: Mapping[str, Any], markdown: str, settings: MatchSettings | None = None
) -> PageMatch:
    """The page's rows (module docstring). OmniDocBenchInputError for an annotation the
    matcher cannot read."""
    settings = settings or MatchSettings()
    with recording() as log:
        segmented = segment(markdown)
        elements = truth_elements(page)
        mix = [
            b
            for c, blocks in segmented.blocks.items()
            if c not in _NOT_MATCHED_AS_TEXT
            for b in blocks
        ]
        pairs = [
            cross_category(p)
            for p in _text_match(_truth(elements, _MATCHED_CATEGORIES), mix, settings)
        ]
        pairs, replaced = local_span_fallback(pairs, mix)
        if replaced:
            note_fallback(f"text_span x{replaced}")
        text = [p for p in pairs if p.gt_kind in TEXT_CATEGORIES]
        formulas = [p for p in pairs if p.gt_kind == "equation_isolated" and p.has_truth]
        truth_formulas = _truth(elements, ("equation_isolated",))
        pool = candidate_pool(segmented)
        if truth_formulas or pool:
            formulas, chosen = best_formula_rows(truth_formulas, pool, formulas, settings)
            if chosen not in (None, "current_match"):
                log.formula_candidate = chosen
        rows = [FormulaRow(p, cdm_inputs(p)) for p in formulas]
        text = [p for p in text if p.gt_kind not in IGNORED_TEXT]
        tables = table_rows(in_reading_order(elements.get("table", [])), segmented)
        order = reading_order([*text, *formulas, *tables])
        moves = [r.pair.pred_kind not in _FORMULA_KINDS and not r.cdm.text_as_formula for r in rows]
        moved = [r.pair for r, move in zip(rows, moves, strict=True) if move]
        kept = [r for r, move in zip(rows, moves, strict=True) if not move]
    return PageMatch([*text, *moved], kept, order, log)
