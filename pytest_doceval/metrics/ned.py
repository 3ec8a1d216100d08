"""Normalised edit distance (NED), OmniDocBench's bounded text metric, beside CER.

    ned = Levenshtein(truth, output) / max(len(truth), len(output))

on the same normalised texts CER reads, so its edits are CER's (S + D + I of one minimal
alignment). CER divides by the truth's length only, so it has no upper bound: insertions on a
short truth swamp it (a page number against a 40-character line scores CER 20). NED divides by
the longer text and stays in [0, 1]: 0 for identical texts, 1 when nothing is shared. Two empty
texts have nothing to edit: NED 0 (rapidfuzz's ``normalized_distance("", "")`` agrees;
OmniDocBench skips such a sample).

Aggregation, as OmniDocBench v1.6 (`call_Edit_dist`) does it with a page as one sample: the mean
of per-case values is its page average (``ALL_page_avg``); the corpus value is Σ edits / Σ
max(len) (its ``edit_whole``). The counts carry that denominator as ``reference_length`` so the
generic corpus rate (Σ edits / Σ reference_length) computes exactly this.
"""

from __future__ import annotations

from dataclasses import replace

from pytest_doceval.metrics.text import ErrorCounts


def ned_counts(character_counts: ErrorCounts, output_length: int) -> ErrorCounts:
    """CER's character counts over max(len(truth), len(output)): their ``rate`` is NED."""
    longer = max(character_counts.reference_length, output_length)
    return replace(character_counts, reference_length=longer)
