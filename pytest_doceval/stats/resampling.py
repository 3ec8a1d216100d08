"""Case resampling shared by every bootstrap interval: seeded, vectorised, memory-bounded."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

# Upper bound on the entries of one resampling index matrix (rows = resamples, columns = cases).
# 2**21 int64 indices is 16 MiB, plus as much again for the gathered float64 values, so peak
# memory stays ~32 MiB whatever n * resamples is. Chunks are drawn one after another from the
# same generator in row-major order, and numpy's Generator.integers consumes its bit stream
# continuously across calls, so the result does not depend on this value (tests check it).
_MAX_CHUNK_ENTRIES = 2**21
# Entries of the blocks a statistic is applied to, one after another: 2 MiB of float64, which
# stays in a core's cache through the statistic's passes over it (a mean, a spread) where a
# whole 16 MiB chunk went to memory and back on each: three times the time. A statistic maps
# each row to its own value, so the blocks change nothing but the speed (tests check it).
_BLOCK_ENTRIES = 2**18


# Inside `shared_draws`: index matrices drawn in this block, by (n, resamples, seed).
_SHARED: contextvars.ContextVar[dict[tuple[int, int, int], list[NDArray[np.int32]]] | None] = (
    contextvars.ContextVar("doceval_shared_draws", default=None)
)
# The most index entries `shared_draws` keeps (as int32: 4 bytes each, 128 MiB): 1,000 resamples
# of 33,000 cases; beyond, each interval draws its own. At 100,000 cases the shared matrix was
# 400 MB on top of the controller's peak, where drawing anew costs 0.4 s an interval.
SHARED_ENTRIES = 2**25
_DRAWING = threading.Lock()


@contextlib.contextmanager
def shared_draws() -> Iterator[None]:
    """Within the block, the index matrix of one (n, resamples, seed) is drawn once and kept
    for every interval that asks for it (as int32, up to `SHARED_ENTRIES` entries), then let
    go. A report's suite asks for the same matrix for every metric of every system of one n:
    at 100,000 cases drawing it was half an interval's time, forty times over. The indices
    are those drawn anew, so the intervals are the same."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _index_chunks(n: int, resamples: int, seed: int) -> Iterator[NDArray[np.integer]]:
    """Resampling index matrices (resamples x n in total), at most `_MAX_CHUNK_ENTRIES` each.

    A single row larger than the budget is still drawn whole: a resample has to exist at once
    to be summarised, so memory is O(n) per row at minimum. When the whole matrix is one
    chunk it is drawn once and kept (`_one_chunk`): a report asks for the same (n, resamples,
    seed) for every metric of a system, and drawing it was a third of an interval's time.
    Bigger matrices are kept for the length of a `shared_draws` block.
    """
    if n * resamples <= _MAX_CHUNK_ENTRIES:
        return iter((_one_chunk(n, resamples, seed),))
    shared = _SHARED.get()
    if shared is None or n * resamples > SHARED_ENTRIES or n >= 2**31:
        return _chunks_from(np.random.default_rng(seed), n, resamples)
    key = (n, resamples, seed)
    with _DRAWING:  # intervals on threads share one draw, not one each at once
        if key not in shared:
            drawn = _chunks_from(np.random.default_rng(seed), n, resamples)
            shared[key] = [chunk.astype(np.int32) for chunk in drawn]
    return iter(shared[key])


@functools.lru_cache(maxsize=2)  # at most 2 x 16 MiB; the same numbers as drawing anew
def _one_chunk(n: int, resamples: int, seed: int) -> NDArray[np.int64]:
    (chunk,) = _chunks_from(np.random.default_rng(seed), n, resamples)
    chunk.flags.writeable = False  # shared by every caller: nobody may change it
    return chunk


def _chunks_from(rng: np.random.Generator, n: int, resamples: int) -> Iterator[NDArray[np.int64]]:
    rows = max(1, _MAX_CHUNK_ENTRIES // n)
    for start in range(0, resamples, rows):
        yield rng.integers(0, n, size=(min(rows, resamples - start), n), dtype=np.int64)


def replicates(
    n: int,
    statistic: Callable[[NDArray[np.integer]], NDArray[np.float64]],
    resamples: int,
    seed: int,
) -> NDArray[np.float64]:
    """``statistic`` of ``resamples`` case resamples of n cases (with replacement).

    ``statistic`` maps a (rows x n) index matrix to one value per row. Every bootstrap in the
    package draws its indices here, so two intervals with the same ``seed`` over the same n
    resample the same cases (common random numbers), whatever their method.
    """
    rows = max(1, _BLOCK_ENTRIES // max(n, 1))
    return np.concatenate(
        [
            statistic(idx[start : start + rows])
            for idx in _index_chunks(n, resamples, seed)
            for start in range(0, len(idx), rows)
        ]
    )


def stratified_replicates(
    strata: Sequence[NDArray[np.float64]], resamples: int, seed: int
) -> NDArray[np.float64]:
    """The unweighted mean over strata of each stratum's resampled mean, for ``resamples``
    resamples: within every stratum independently, as many values as it holds are drawn with
    replacement; strata are never resampled themselves (olmOCR-bench's
    ``calculate_bootstrap_ci(..., splits=...)``). One generator serves the strata in the given
    order, each drawing all its resamples before the next, so the result depends on that order
    and on ``seed`` alone (not on the chunk size). Every stratum must be non-empty."""
    rng = np.random.default_rng(seed)
    per_stratum = [
        np.concatenate(
            [values[idx].mean(axis=1) for idx in _chunks_from(rng, values.size, resamples)]
        )
        for values in strata
    ]
    means: NDArray[np.float64] = np.mean(per_stratum, axis=0)
    return means
