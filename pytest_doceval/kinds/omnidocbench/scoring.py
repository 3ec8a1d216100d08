"""OmniDocBench v1.6's per-page end-to-end scoring, reimplemented (the contract with the kind).

`score_page` scores one annotated page against the page's predicted markdown the way
OmniDocBench's own `End2EndDataset` (``match_method: quick_match``) and `End2EndEval` score it;
`leaderboard` aggregates pages the way its report does. The numbers equal the reference's
(tests/test_omnidocbench_parity.py runs its code on the demo pages); nothing here imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_doceval.errors import CaseInputError

SCORING_ID = "omnidocbench-v1.6@9dc1dec"
PAGE_METRICS: tuple[str, ...] = (
    "text_edit",
    "formula_edit",
    "table_teds",
    "table_teds_s",
    "reading_order_edit",
)


class OmniDocBenchInputError(CaseInputError):
    """An annotation page (or prediction) not in OmniDocBench's format; the message names the cause."""


@dataclass(frozen=True)
class MatchedBlock:
    """One pair as quick_match paired it, for the HTML view."""

    category: str  # "text_block", "display_formula", "table", ...
    truth: str  # normalised truth text ("" when the truth block went unmatched)
    prediction: str  # normalised predicted text ("" when unmatched)
    edit: int  # edit distance of the pair
    max_len: int  # max(len(truth), len(prediction))
    order_truth: int | None  # reading-order positions, when known
    order_prediction: int | None


@dataclass(frozen=True)
class PageScore:
    """One page's metrics, with the sums behind the rates and the pairs behind the sums."""

    metrics: Mapping[str, float]  # only the metrics this page has (no text blocks -> no text_edit)
    counts: Mapping[str, tuple[float, float]]  # "text_edit": (Σ edits, Σ max_len), corpus rates
    blocks: tuple[MatchedBlock, ...]
    notes: tuple[str, ...]  # e.g. "empty prediction: scored as OmniDocBench scores it"


def score_page(page: Mapping[str, Any], prediction: str) -> PageScore:
    """Score one page of OmniDocBench's annotation JSON against its predicted markdown.

    Raises OmniDocBenchInputError naming the cause on an annotation not in the format.
    """
    raise NotImplementedError("odb-core: in progress")


def leaderboard(pages: Sequence[PageScore]) -> dict[str, float]:
    """The numbers OmniDocBench prints for these pages, by its own aggregation."""
    raise NotImplementedError("odb-core: in progress")
