"""`MatchedBlock`: one pair of a page's truth and predicted blocks, as OmniDocBench paired them.

Its own module so that both scorings, ours (`scoring`) and OmniDocBench's own code run from a
checkout (`reference`), give the HTML view the same record.
"""

from __future__ import annotations

from dataclasses import dataclass


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
