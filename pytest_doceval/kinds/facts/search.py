"""Approximate substring search: where the occurrences of a pattern within k edits start.

An approximate occurrence of `pattern` in `text` is any substring ``text[s:e]`` whose Levenshtein
distance to the pattern is at most `max_diffs`. The ``order`` check needs only the earliest start
of one string's occurrences and the latest start of another's, so that is what is computed.

olmOCR-bench uses ``fuzzysearch.find_near_matches``, which reports one best match per cluster of
overlapping matches. Every fuzzysearch match is an occurrence in the sense above, so wherever
olmOCR finds "before" starting before "after", so does this. The converse can differ only
when the two strings' occurrences overlap in the output: an occurrence may start up to
`max_diffs` characters before or after the best match of its cluster, and olmOCR-bench keeps
``max_diffs`` at most half of each string's length, so two strings that do not overlap in the
output are ordered the same way by both.

The search is exact and fast: with k edits, one of k+1 disjoint pieces of the pattern appears
unchanged (pigeonhole), so only starts within k of a piece's exact hit are verified, each with
rapidfuzz's Levenshtein distance over the 2k+1 possible lengths.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from rapidfuzz.distance import Levenshtein

__all__ = ["first_occurrence", "last_occurrence", "occurs_at"]


def occurs_at(pattern: str, text: str, start: int, max_diffs: int) -> bool:
    """Whether some substring of `text` starting at `start` is within `max_diffs` of `pattern`."""
    m, n = len(pattern), len(text)
    for length in range(max(0, m - max_diffs), m + max_diffs + 1):
        if start + length > n:
            break
        window = text[start : start + length]
        if Levenshtein.distance(pattern, window, score_cutoff=max_diffs) <= max_diffs:
            return True
    return False


def _exact_hits(piece: str, text: str) -> Iterator[int]:
    at = text.find(piece)
    while at != -1:
        yield at
        at = text.find(piece, at + 1)


def _candidate_starts(pattern: str, text: str, max_diffs: int) -> list[int]:
    """Every start an occurrence could have (a superset), sorted."""
    m, n, k = len(pattern), len(text), max_diffs
    bounds = [round(i * m / (k + 1)) for i in range(k + 2)]
    starts: set[int] = set()
    for offset, end in pairwise(bounds):
        for hit in _exact_hits(pattern[offset:end], text):
            base = hit - offset
            starts.update(range(max(0, base - k), min(n, base + k) + 1))
    return sorted(starts)


def _starts(pattern: str, text: str, max_diffs: int, *, reverse: bool) -> int | None:
    if max_diffs == 0:
        at = text.rfind(pattern) if reverse else text.find(pattern)
        return None if at == -1 else at
    if max_diffs >= len(pattern):
        return len(text) if reverse else 0  # the empty substring is close enough anywhere
    candidates = _candidate_starts(pattern, text, max_diffs)
    for start in reversed(candidates) if reverse else candidates:
        if occurs_at(pattern, text, start, max_diffs):
            return start
    return None


def first_occurrence(pattern: str, text: str, max_diffs: int) -> int | None:
    """Earliest start of an occurrence of `pattern` within `max_diffs` edits; None if none."""
    return _starts(pattern, text, max_diffs, reverse=False)


def last_occurrence(pattern: str, text: str, max_diffs: int) -> int | None:
    """Latest start of an occurrence of `pattern` within `max_diffs` edits; None if none."""
    return _starts(pattern, text, max_diffs, reverse=True)
