"""Tests of the percentile bootstrap the seeds specify and of the case resampling under it.

`bootstrap_mean_ci`, `bootstrap_ratio_ci`, `paired_bootstrap_ci`; the chunked draw in
`pytest_doceval.stats.resampling` that every bootstrap method shares.

See tests/stats_support.py for the conventions shared by the stats tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_doceval import stats
from pytest_doceval.stats import resampling
from tests.stats_support import CER_A, CER_B


def reference_percentile_ci(
    x: np.ndarray, resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """The percentile bootstrap written out naively: one big index matrix, no chunking."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(resamples, x.size), dtype=np.int64)
    alpha = 1 - confidence
    low, high = np.quantile(x[idx].mean(axis=1), [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


# ---------------------------------------------------------------------------------------------
# Bootstrap
# ---------------------------------------------------------------------------------------------


def test_bootstrap_matches_naive_single_draw() -> None:
    x = np.array(CER_A)
    ci = stats.bootstrap_mean_ci(x, resamples=1000, seed=3)
    assert ci.mean == pytest.approx(float(np.mean(x)))
    assert (ci.ci_low, ci.ci_high) == pytest.approx(reference_percentile_ci(x, 1000, 0.95, 3))
    assert ci.n == 12


@pytest.mark.parametrize("budget", [1, 7, 50, 120, 49_999])
def test_chunking_does_not_change_the_interval(
    monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    x = np.random.default_rng(11).lognormal(-2.5, 0.8, size=50)
    whole = stats.bootstrap_mean_ci(x, resamples=1000, seed=5)
    monkeypatch.setattr(resampling, "_MAX_CHUNK_ENTRIES", budget)
    assert stats.bootstrap_mean_ci(x, resamples=1000, seed=5) == whole


def test_chunks_stay_within_the_memory_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, ...]] = []
    original = resampling._index_chunks

    def spy(n: int, resamples: int, seed: int):  # type: ignore[no-untyped-def]
        for chunk in original(n, resamples, seed):
            seen.append(chunk.shape)
            yield chunk

    monkeypatch.setattr(resampling, "_index_chunks", spy)
    x = np.random.default_rng(0).random(1000)
    stats.bootstrap_mean_ci(x, resamples=5000)
    assert sum(rows for rows, _ in seen) == 5000
    assert len(seen) > 1
    assert max(rows * cols for rows, cols in seen) <= resampling._MAX_CHUNK_ENTRIES


def test_a_one_chunk_index_matrix_is_drawn_once_read_only_and_as_drawn_anew() -> None:
    """Every metric of a report resamples the same cases (same n, resamples and seed): the
    matrix is drawn once, shared read-only, and equal to a fresh draw, so intervals do not
    depend on which came first."""
    resampling._one_chunk.cache_clear()
    x = np.random.default_rng(4).random(300)
    first = stats.bootstrap_t_interval(x, seed=9)
    shared = resampling._one_chunk(300, 1000, 9)
    assert resampling._one_chunk.cache_info().hits == 1
    assert not shared.flags.writeable
    (fresh,) = resampling._chunks_from(np.random.default_rng(9), 300, 1000)
    assert np.array_equal(shared, fresh)
    resampling._one_chunk.cache_clear()
    assert stats.bootstrap_t_interval(x, seed=9) == first


def test_shared_draws_draw_a_big_matrix_once_and_change_no_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside `shared_draws` a matrix too big for `_one_chunk` (3,000 cases x 1,000 resamples)
    is drawn once for every interval of that n; each interval is the one drawn anew."""
    x = np.random.default_rng(7).beta(2, 30, size=3000)
    y = np.random.default_rng(8).integers(50, 400, size=3000).astype(float)

    def intervals() -> list[stats.Interval]:
        return [
            stats.bootstrap_t_interval(x, seed=2),
            stats.bootstrap_mean_ci(x, seed=2),
            stats.bootstrap_ratio_ci(x * y, y, seed=2),
            stats.bootstrap_t_interval(x[:-1], seed=2),  # another n: its own matrix
        ]

    alone = intervals()
    draws: list[int] = []
    original = resampling._chunks_from

    def counted(rng: np.random.Generator, n: int, resamples: int):  # type: ignore[no-untyped-def]
        draws.append(n)
        return original(rng, n, resamples)

    monkeypatch.setattr(resampling, "_chunks_from", counted)
    with resampling.shared_draws():
        assert intervals() == alone
    assert sorted(draws) == [2999, 3000]
    draws.clear()
    assert intervals() == alone  # outside the block, each draws its own
    assert draws == [3000, 3000, 3000, 2999]


def test_constant_vector_gives_degenerate_interval() -> None:
    ci = stats.bootstrap_mean_ci([0.1] * 7)
    assert ci.ci_low == ci.mean == ci.ci_high
    assert ci.mean == pytest.approx(0.1)


def test_empty_and_single_case() -> None:
    empty = stats.bootstrap_mean_ci([])
    assert empty.n == 0
    assert all(math.isnan(v) for v in (empty.mean, empty.ci_low, empty.ci_high))
    single = stats.bootstrap_mean_ci([0.25])
    assert single == stats.Interval(0.25, 0.25, 0.25, 1, "percentile-bootstrap")


def test_nan_input_propagates() -> None:
    ci = stats.bootstrap_mean_ci([0.1, float("nan"), 0.3])
    assert math.isnan(ci.mean) and math.isnan(ci.ci_low) and math.isnan(ci.ci_high)


def test_large_normal_sample_approaches_normal_theory_interval() -> None:
    x = np.random.default_rng(42).normal(0.2, 0.05, size=4000)
    ci = stats.bootstrap_mean_ci(x, resamples=2000)
    half = 1.959964 * x.std(ddof=1) / math.sqrt(x.size)
    assert ci.ci_low == pytest.approx(x.mean() - half, abs=0.1 * half)
    assert ci.ci_high == pytest.approx(x.mean() + half, abs=0.1 * half)


def test_seed_determines_interval() -> None:
    first = stats.bootstrap_mean_ci(CER_A, seed=1)
    assert stats.bootstrap_mean_ci(CER_A, seed=1) == first
    assert stats.bootstrap_mean_ci(np.array(CER_A), seed=1) == first
    assert stats.bootstrap_mean_ci(CER_A, seed=2) != first


def test_confidence_controls_width() -> None:
    narrow = stats.bootstrap_mean_ci(CER_A, confidence=0.8)
    wide = stats.bootstrap_mean_ci(CER_A, confidence=0.99)
    assert wide.ci_low < narrow.ci_low < narrow.ci_high < wide.ci_high


@pytest.mark.parametrize(
    "kwargs", [{"resamples": 0}, {"resamples": 2.5}, {"confidence": 1.0}, {"confidence": 0.0}]
)
def test_invalid_bootstrap_arguments(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        stats.bootstrap_mean_ci(CER_A, **kwargs)  # type: ignore[arg-type]


def test_two_dimensional_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="one-dimensional"):
        stats.bootstrap_mean_ci([[0.1, 0.2], [0.3, 0.4]])


def test_ratio_ci_is_corpus_rate_with_cases_resampled() -> None:
    edits = np.array([3, 0, 12, 5, 1, 7, 2, 9], dtype=float)
    lengths = np.array([100, 40, 300, 90, 20, 150, 60, 210], dtype=float)
    ci = stats.bootstrap_ratio_ci(edits, lengths, resamples=1000, seed=4)
    assert ci.mean == pytest.approx(edits.sum() / lengths.sum())
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 8, size=(1000, 8))
    expected = np.quantile(edits[idx].sum(1) / lengths[idx].sum(1), [0.025, 0.975])
    assert (ci.ci_low, ci.ci_high) == pytest.approx(tuple(expected))


def test_ratio_with_constant_denominator_is_scaled_mean() -> None:
    ratio = stats.bootstrap_ratio_ci(CER_A, [2.0] * len(CER_A), seed=9)
    mean = stats.bootstrap_mean_ci(CER_A, seed=9)
    assert ratio.mean == pytest.approx(mean.mean / 2)
    assert ratio.ci_low == pytest.approx(mean.ci_low / 2)
    assert ratio.ci_high == pytest.approx(mean.ci_high / 2)


def test_ratio_edge_cases() -> None:
    assert math.isnan(stats.bootstrap_ratio_ci([1.0, 2.0], [0.0, 0.0]).mean)
    # Resamples that draw only the zero-length case are left out, not NaN-poisoning the CI.
    ci = stats.bootstrap_ratio_ci([0.0, 1.0, 2.0], [0.0, 10.0, 10.0])
    assert all(math.isfinite(v) for v in (ci.mean, ci.ci_low, ci.ci_high))
    with pytest.raises(ValueError, match="differ in length"):
        stats.bootstrap_ratio_ci([1.0], [1.0, 2.0])


def test_paired_bootstrap_is_bootstrap_of_differences() -> None:
    diff = np.array(CER_A) - np.array(CER_B)
    assert stats.paired_bootstrap_ci(CER_A, CER_B) == stats.bootstrap_mean_ci(diff)
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_bootstrap_ci([1.0, 2.0], [1.0])


# ---------------------------------------------------------------------------------------------
# Paired tests and effect sizes
