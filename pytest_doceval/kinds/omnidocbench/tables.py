"""A page's tables, paired and scored as OmniDocBench v1.6 pairs and scores them.

Pairing (the reference's ``match_gt2pred_simple`` on tables): every truth table (in reading
order) and every predicted table (in `markdown_tables`' order) is read for matching as its
normalised HTML when it contains ``<table`` (any case), else as written; the cost of a pair is
their Levenshtein distance over the longer length (0 for two empty strings), and one Hungarian
assignment (scipy's, as the reference) pairs them. A truth table left without a partner is
scored against an empty prediction (TEDS 0); a predicted table left without one is dropped
(it is no table of the truth's, and OmniDocBench does not score it).

Each pair's TEDS and TEDS-S are `teds.teds_pair` of the two tables' normalised HTML (a side
that does not normalise, e.g. a prediction with no ``<table``, is compared as written). The
page's ``table_teds`` is the mean over its truth tables.

GriTS (`page_grits`, `metrics.grits`; not an OmniDocBench number) reads the same normalised
HTML into grids as GriTS's package reads HTML (lxml; rows in document order, a cell's text its
text nodes joined by a space, spans read as a browser reads them) and pairs the page's tables
by its own assignment; a table that does not read (no ``<table``, a LaTeX table) has no cells.
A page whose truth tables have no cell has no GriTS.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from lxml import etree, html
from rapidfuzz.distance import Levenshtein

from pytest_doceval.kinds.omnidocbench.annotations import in_reading_order, truth_elements
from pytest_doceval.kinds.omnidocbench.table_html import normalised_table_html
from pytest_doceval.kinds.omnidocbench.teds import teds_pair
from pytest_doceval.metrics.grits import GridCell, TableGrid, grits, table_grid

_SPAN = re.compile(r"[\t\n\f\r ]*\+?([0-9]+)")  # a browser's reading of colspan/rowspan


@dataclass(frozen=True)
class TablePair:
    """One truth table and what it was paired with."""

    truth: str  # normalised HTML (as written when it does not normalise)
    prediction: str  # "" when no predicted table was paired
    edit: int  # Levenshtein distance of the two as read for matching
    max_len: int
    teds: float
    teds_s: float


@dataclass(frozen=True)
class _Read:
    """One table as written, as read for matching and as read for TEDS (one normalisation)."""

    matched: str
    scored: str

    @classmethod
    def of(cls, text: str) -> _Read:
        normalised = normalised_table_html(text)
        return cls(normalised if "<table" in text.lower() else text, normalised or text)


def _cost(a: str, b: str) -> float:
    if not a and not b:
        return 0.0
    return Levenshtein.distance(a, b) / max(len(a), len(b))


def _assignment(truth: Sequence[str], predicted: Sequence[str]) -> dict[int, int]:
    if not predicted:
        return {}
    costs = np.array([[_cost(t, p) for p in predicted] for t in truth], dtype=np.float64)
    from scipy.optimize import linear_sum_assignment  # on use: scipy is slow to import

    rows, cols = linear_sum_assignment(costs)
    return {int(r): int(c) for r, c in zip(rows, cols, strict=True)}


def pair_tables(truth: Sequence[str], predicted: Sequence[str]) -> list[TablePair]:
    """Pair the truth tables with the predicted ones and score each pair (module docstring)."""
    truth_read = [_Read.of(t) for t in truth]
    predicted_read = [_Read.of(p) for p in predicted]
    partner = _assignment([t.matched for t in truth_read], [p.matched for p in predicted_read])
    pairs = []
    for i, t in enumerate(truth_read):
        j = partner.get(i)
        p = predicted_read[j] if j is not None else _Read("", "")
        teds, teds_s = teds_pair(p.scored, t.scored)
        pairs.append(
            TablePair(
                truth=t.scored,
                prediction=p.scored,
                edit=Levenshtein.distance(t.matched, p.matched),
                max_len=max(len(t.matched), len(p.matched)),
                teds=teds,
                teds_s=teds_s,
            )
        )
    return pairs


def _span(value: str | None, most: int) -> int:
    match = _SPAN.match(value or "")
    return min(int(match.group(1)), most) if match and int(match.group(1)) else 1


def html_grid(markup: str) -> TableGrid:
    """The first table of `markup` on its grid (module docstring); no cells when none reads."""
    try:
        root = html.fromstring(markup, parser=html.HTMLParser(remove_comments=True))
    except (etree.ParserError, ValueError):
        return table_grid([])
    table = root if root.tag == "table" else root.find(".//table")
    rows: list[list[GridCell]] = []
    implied: object = None
    for element in table.iter() if table is not None else ():
        if element.tag == "tr":
            rows.append([])
            implied = None
        elif element.tag in ("td", "th"):
            parent = element.getparent()
            if parent.tag != "tr" and parent is not implied:  # cells outside a row: one more
                rows.append([])
                implied = parent
            text = " ".join(element.itertext())
            spans = _span(element.get("colspan"), 1000), _span(element.get("rowspan"), 65534)
            rows[-1].append(GridCell(text, *spans))
    return table_grid(rows)


def page_tables(page: Mapping[str, Any]) -> list[str]:
    """The page's truth tables as written, in reading order, as the TEDS scoring reads them."""
    tables = in_reading_order(truth_elements(page).get("table", []))
    return [str(t.get("content") or t.get("html", "")) for t in tables]


def page_grits(truth: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    """``grits_con`` and ``grits_top`` of a page's predicted tables against its truth tables
    (both as written; read as their normalised HTML): none when the truth's have no cell."""
    truth_grids = [html_grid(_Read.of(t).scored) for t in truth]
    if not any(g.slots for g in truth_grids):
        return {}
    predicted_grids = [html_grid(_Read.of(p).scored) for p in predicted]
    return {
        f"grits_{aspect}": grits(truth_grids, predicted_grids, aspect).f1
        for aspect in ("con", "top")
    }
