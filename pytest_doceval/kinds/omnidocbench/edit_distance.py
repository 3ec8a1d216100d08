"""The edit distances OmniDocBench v1.6's matcher computes, with rapidfuzz (the C++ library the
GPL ``Levenshtein`` package wraps: the same distances).

* `edit_matrix`: ``compute_edit_distance_matrix_new``, Levenshtein / longer length per pair
  (0 for two empty strings), all pairs in one rapidfuzz call instead of a Python double loop;
  the division is the same IEEE division of the same integers, so every cell is the same float.
* `normalised_edit`: ``_normalized_edit_distance`` (0 for two empty strings, 1 for one).
* `window_within`: the matcher's sliding-window searches (``sub_pred_fuzzy_matching``,
  ``sub_gt_fuzzy_matching``) compute the least distance between a short text and every window
  of the same length in a longer one, then only compare it with a threshold. Here the question
  is asked as such: is there a window within `limit`? rapidfuzz prunes every window past the
  cut-off, and the answer is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

distance: Final = Levenshtein.distance


def edit_matrix(rows: Sequence[str], columns: Sequence[str]) -> NDArray[np.float64]:
    """Levenshtein distance over the longer length of every (row, column) pair."""
    if not rows or not columns:
        return np.zeros((len(rows), len(columns)), dtype=np.float64)
    counts = process.cdist(rows, columns, scorer=distance, workers=1).astype(np.float64)
    longer = np.maximum.outer(
        np.array([len(r) for r in rows], dtype=np.float64),
        np.array([len(c) for c in columns], dtype=np.float64),
    )
    out = np.zeros_like(counts)
    np.divide(counts, longer, out=out, where=longer > 0)
    return out


def ratio(a: str, b: str) -> float:
    """Distance over the longer length (the caller knows one is not empty)."""
    return distance(a, b) / max(len(a), len(b))


def normalised_edit(a: str, b: str) -> float:
    """0 for two empty strings, 1 for one empty string, else `ratio`."""
    if not a and not b:
        return 0
    if not a or not b:
        return 1
    return ratio(a, b)


def count_limit(limit: float, length: int, *, strict: bool) -> int:
    """The largest count k with k / length below `limit` (`strict`) or at most `limit`, as the
    floats compare; -1 when even 0 fails."""
    k = int(limit * length) + 1
    while k >= 0 and not (k / length < limit if strict else k / length <= limit):
        k -= 1
    return k


def window_within(text: str, piece: str, limit: float, *, strict: bool) -> bool:
    """Whether some window of `text` as long as `piece` is within `limit` of it: Levenshtein
    distance / len(piece) below (`strict`) or at most `limit`. False when `piece` is empty or
    longer than `text` (where OmniDocBench's searches return no distance)."""
    n = len(piece)
    if n == 0 or n > len(text):
        return False
    cutoff = count_limit(limit, n, strict=strict)
    if cutoff < 0:
        return False
    windows = [text[i : i + n] for i in range(len(text) - n + 1)]
    found = process.extractOne(piece, windows, scorer=distance, score_cutoff=cutoff, processor=None)
    return found is not None
