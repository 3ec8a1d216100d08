"""Tests of the small-n interval methods and the entry points that choose between them.

`t_interval` against scipy and statsmodels, `wilson_interval` against statsmodels,
`bca_interval` against ``scipy.stats.bootstrap(method="BCa")`` and a hand-rolled BCa,
`bootstrap_t_interval` against a hand-rolled loop; `mean_interval` / `paired_interval` choose
as documented; hypothesis properties for every method. See tests/stats_support.py.
"""

from __future__ import annotations

import math
import pickle
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint  # type: ignore[import-untyped]
from statsmodels.stats.weightstats import DescrStatsW  # type: ignore[import-untyped]

from pytest_doceval import stats
from pytest_doceval.stats import bootstrap as bootstrap_module
from pytest_doceval.stats import resampling
from pytest_doceval.stats._common import sample_mean
from tests.stats_support import CER_A, CER_B, FAST, assert_builtin, finite

SKEWED = np.random.default_rng(21).beta(2, 30, size=25)  # per-case CER-like, n = 25
# Most pages read perfectly: an all-zero resample has probability 0.8**10 = 11%, so the
# bootstrap-t's lower t quantile is -inf.
TIED = [0.0] * 8 + [0.1, 0.3]


# ---------------------------------------------------------------------------------------------
# t interval
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("values", [CER_A, list(SKEWED), [0.1, 0.4]])
def test_t_interval_matches_scipy_and_statsmodels(values: list[float], confidence: float) -> None:

    x = np.array(values)
    ci = stats.t_interval(x, confidence=confidence)
    low, high = sps.t.interval(confidence, x.size - 1, loc=x.mean(), scale=sps.sem(x))
    assert (ci.ci_low, ci.ci_high) == pytest.approx((low, high), rel=1e-12)
    sm_low, sm_high = DescrStatsW(x).tconfint_mean(alpha=1 - confidence)
    assert (ci.ci_low, ci.ci_high) == pytest.approx((sm_low, sm_high), rel=1e-12)
    assert ci.mean == pytest.approx(x.mean(), rel=1e-15)
    assert (ci.n, ci.method, ci.small_n) == (x.size, "t", x.size < stats.SMALL_N)


def test_t_interval_edge_cases() -> None:
    empty = stats.t_interval([])
    assert empty.n == 0 and all(math.isnan(v) for v in (empty.mean, empty.ci_low, empty.ci_high))
    single = stats.t_interval([0.3])
    assert single.mean == 0.3 and math.isnan(single.ci_low) and math.isnan(single.ci_high)
    constant = stats.t_interval([0.2] * 4)
    assert constant.ci_low == constant.mean == constant.ci_high == 0.2
    nan = stats.t_interval([0.1, float("nan")])
    assert math.isnan(nan.mean) and math.isnan(nan.ci_low)
    with pytest.raises(ValueError, match="confidence"):
        stats.t_interval(CER_A, confidence=1.0)


def test_paired_t_interval_agrees_with_the_paired_t_test() -> None:

    d = np.array(CER_B) - np.array(CER_A)
    ci = stats.paired_interval(CER_B, CER_A)
    assert ci.method == "t"
    assert (ci.ci_low, ci.ci_high) == pytest.approx(DescrStatsW(d).tconfint_mean(), rel=1e-12)
    # The 1 - p interval has 0 exactly on its edge.
    p = stats.paired_ttest_p(CER_B, CER_A)
    edge = stats.paired_interval(CER_B, CER_A, confidence=1 - p)
    assert edge.ci_low == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Wilson
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(0, 5), (5, 5), (7, 10), (1, 1), (31, 40), (250, 300)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k: int, n: int, confidence: float) -> None:

    ci = stats.wilson_interval([1] * k + [0] * (n - k), confidence=confidence)
    expected = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    assert (ci.ci_low, ci.ci_high) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert (ci.mean, ci.n, ci.method) == (k / n, n, "wilson")


def test_wilson_closed_form_and_edge_cases() -> None:
    # 10 of 10 at 95%: lower bound n / (n + z^2), upper bound exactly 1.
    ci = stats.wilson_interval([True] * 10)
    z = sps.norm.ppf(0.975)
    assert ci.ci_low == pytest.approx(10 / (10 + z * z))
    assert ci.ci_high == 1.0
    assert math.isnan(stats.wilson_interval([]).mean)
    assert math.isnan(stats.wilson_interval([1.0, float("nan")]).ci_low)
    with pytest.raises(ValueError, match="0/1"):
        stats.wilson_interval([0.5, 1.0])


# ---------------------------------------------------------------------------------------------
# BCa
# ---------------------------------------------------------------------------------------------


def reference_bca(x: np.ndarray, resamples: int, confidence: float, seed: int) -> tuple[float, ...]:
    """BCa as in Efron & Tibshirani 1993, 14.3, with the jackknife written out as a loop."""
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    theta = x.mean()
    z0 = sps.norm.ppf((np.sum(means < theta) + np.sum(means <= theta)) / (2 * resamples))
    jack = np.array([np.delete(x, i).mean() for i in range(x.size)])
    d = jack.mean() - jack
    a = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    z = sps.norm.ppf((1 - confidence) / 2)
    levels = [sps.norm.cdf(z0 + (z0 + q) / (1 - a * (z0 + q))) for q in (z, -z)]
    return tuple(float(v) for v in np.quantile(means, levels))


def test_bca_matches_hand_rolled_bca_on_the_same_resamples() -> None:
    ci = stats.bca_interval(SKEWED, resamples=2000, seed=4)
    expected = reference_bca(SKEWED, 2000, 0.95, 4)
    assert (ci.ci_low, ci.ci_high) == pytest.approx(expected, rel=1e-9)
    assert ci.method == "bca"


@pytest.mark.parametrize("values", [CER_A, list(SKEWED)])
def test_bca_agrees_with_scipy_within_monte_carlo_error(values: list[float]) -> None:
    x = np.array(values)
    ci = stats.bca_interval(x, resamples=20000, seed=1)
    ref = sps.bootstrap(
        (x,), np.mean, method="BCa", n_resamples=20000, rng=np.random.default_rng(99)
    ).confidence_interval
    # Two independent 20000-resample runs: their bounds differ by Monte Carlo error only
    # (a few percent of the width); a wrong z0 or acceleration moves them by more.
    width = ref.high - ref.low
    assert ci.ci_low == pytest.approx(ref.low, abs=0.03 * width)
    assert ci.ci_high == pytest.approx(ref.high, abs=0.03 * width)
    # ...and BCa differs measurably from the percentile interval on this skewed data.
    percentile = stats.bootstrap_mean_ci(x, resamples=20000, seed=1)
    assert abs(percentile.ci_high - ci.ci_high) > 0.03 * width


def test_bca_edge_cases() -> None:
    assert math.isnan(stats.bca_interval([0.4]).ci_low)
    constant = stats.bca_interval([0.1] * 6)
    assert constant.ci_low == constant.ci_high == constant.mean


# ---------------------------------------------------------------------------------------------
# Bootstrap-t
# ---------------------------------------------------------------------------------------------


def reference_bootstrap_t(
    x: list[float], resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """The bootstrap-t written out one resample at a time with the statistics module."""
    n = len(x)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n), dtype=np.int64)
    mean, se = statistics.fmean(x), statistics.stdev(x) / math.sqrt(n)
    ts = []
    for row in idx:
        sample = [x[i] for i in row]
        ts.append((statistics.fmean(sample) - mean) / (statistics.stdev(sample) / math.sqrt(n)))
    alpha = 1 - confidence
    q_low, q_high = np.quantile(ts, [alpha / 2, 1 - alpha / 2])
    return mean - q_high * se, mean - q_low * se


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_bootstrap_t_matches_hand_rolled_loop(confidence: float) -> None:
    # 12 distinct values: no resample of 12 draws is flat with any real probability.
    ci = stats.bootstrap_t_interval(CER_A, resamples=1500, confidence=confidence, seed=8)
    expected = reference_bootstrap_t(CER_A, 1500, confidence, 8)
    assert (ci.ci_low, ci.ci_high) == pytest.approx(expected, rel=1e-9)
    assert ci.method == "bootstrap-t"


def test_bootstrap_t_is_asymmetric_for_right_skewed_data() -> None:
    ci = stats.bootstrap_t_interval(SKEWED, resamples=4000)
    t = stats.t_interval(SKEWED)
    # The long right tail stretches the upper side beyond the symmetric t interval.
    assert ci.ci_high - ci.mean > t.ci_high - t.mean
    assert ci.ci_high - ci.mean > ci.mean - ci.ci_low


def test_bootstrap_t_with_too_many_flat_resamples_has_no_bounds() -> None:
    ci = stats.bootstrap_t_interval(TIED)
    assert ci.mean == pytest.approx(0.04)
    assert math.isnan(ci.ci_low) and math.isnan(ci.ci_high)
    assert ci.method == "bootstrap-t"


@pytest.mark.parametrize("budget", [1, 7, 120, 49_999])
@pytest.mark.parametrize("method", [stats.bootstrap_t_interval, stats.bca_interval])
def test_chunking_does_not_change_new_bootstrap_methods(
    monkeypatch: pytest.MonkeyPatch, budget: int, method: Callable[..., stats.Interval]
) -> None:
    whole = method(SKEWED, resamples=700, seed=5)
    monkeypatch.setattr(resampling, "_MAX_CHUNK_ENTRIES", budget)
    assert method(SKEWED, resamples=700, seed=5) == whole


# ---------------------------------------------------------------------------------------------
# Entry points: which method, and the Interval type
# ---------------------------------------------------------------------------------------------


def test_mean_interval_default_is_t_below_small_n_and_bootstrap_t_from_it() -> None:
    small = stats.mean_interval(CER_A[: stats.SMALL_N - 1])
    assert small == stats.t_interval(CER_A[: stats.SMALL_N - 1])
    assert small.method == "t" and small.small_n
    sorted_values = sorted(SKEWED)  # the entry point resamples the values in sorted order
    large = stats.mean_interval(SKEWED, resamples=500, seed=3)
    assert large == stats.bootstrap_t_interval(sorted_values, resamples=500, seed=3)
    assert large.method == "bootstrap-t" and not large.small_n


def test_mean_interval_falls_back_to_t_when_bootstrap_t_is_unbounded() -> None:
    ci = stats.mean_interval(TIED)
    assert ci == stats.t_interval(TIED)
    assert ci.method == "t" and math.isfinite(ci.ci_low)


def test_mean_interval_binary_and_forced_methods() -> None:
    answers = [1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
    assert stats.mean_interval(answers, binary=True) == stats.wilson_interval(answers)
    seed_interval = stats.mean_interval(answers, binary=True, method="percentile-bootstrap")
    assert seed_interval == stats.bootstrap_mean_ci(sorted(answers))
    for method in stats.INTERVAL_METHODS:
        assert stats.mean_interval(answers, method=method).method == method
    with pytest.raises(ValueError, match="method must be one of"):
        stats.mean_interval(answers, method="jackknife")
    with pytest.raises(ValueError, match="0/1"):
        stats.mean_interval([0.5, 1.0], binary=True)


def test_paired_interval_methods_and_errors() -> None:
    d = sorted(np.array(CER_A) - np.array(CER_B))
    forced = stats.paired_interval(CER_A, CER_B, method="bootstrap-t", seed=2)
    assert forced == stats.bootstrap_t_interval(d, seed=2)
    with pytest.raises(ValueError, match="Wilson"):
        stats.paired_interval([1, 0], [0, 0], method="wilson")
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_interval([1.0, 2.0], [1.0])


def test_interval_type_small_n_and_to_dict() -> None:
    ci = stats.Interval(0.5, 0.25, 0.75, 9, "t")
    assert ci.small_n
    assert not stats.Interval(0.5, 0.25, 0.75, stats.SMALL_N, "t").small_n
    assert ci.to_dict() == {
        "mean": 0.5,
        "ci_low": 0.25,
        "ci_high": 0.75,
        "n": 9,
        "method": "t",
        "small_n": True,
    }
    empty = stats.mean_interval([]).to_dict()
    assert empty["n"] == 0 and empty["small_n"] is True and math.isnan(empty["mean"])
    results = [
        stats.mean_interval(SKEWED),
        stats.mean_interval([]),
        stats.mean_interval([1, 0, 1], binary=True),
        stats.paired_interval(CER_A, CER_B),
        stats.bca_interval(CER_A),
        stats.bootstrap_t_interval(TIED),
    ]
    for result in results:
        assert_builtin(result)
        assert repr(pickle.loads(pickle.dumps(result))) == repr(result)


# ---------------------------------------------------------------------------------------------
# Properties of every method
# ---------------------------------------------------------------------------------------------

MEAN_METHODS = ["percentile-bootstrap", "bca", "bootstrap-t", "t", None]
spread_out = st.lists(finite, min_size=2, max_size=30).filter(lambda v: max(v) > min(v))


def _interval(values: list[float], method: str | None, confidence: float = 0.95) -> stats.Interval:
    return stats.mean_interval(values, method=method, resamples=200, confidence=confidence)


@FAST
@given(spread_out, st.sampled_from(MEAN_METHODS))
def test_property_interval_contains_the_mean(values: list[float], method: str | None) -> None:
    ci = _interval(values, method)
    assert ci.mean == pytest.approx(statistics.fmean(values), abs=1e-9)
    if not math.isnan(ci.ci_low):
        assert ci.ci_low <= ci.mean <= ci.ci_high
    # Only the bootstrap-t (flat resamples) and BCa (every resample on one side) may have no
    # bounds; the default falls back to the t interval rather than return none.
    assert method in ("bootstrap-t", "bca") or math.isfinite(ci.ci_low)
    assert_builtin(ci)


@FAST
@given(
    st.lists(finite, min_size=2, max_size=30, unique=True),
    st.sampled_from(["percentile-bootstrap", "bootstrap-t", "t", None]),
)
def test_property_interval_widens_with_confidence(values: list[float], method: str | None) -> None:
    # (Not BCa: its adjusted levels are not monotone in the confidence for extreme skewness.)
    narrow, wide = _interval(values, method, 0.8), _interval(values, method, 0.99)
    if math.isnan(wide.ci_low) or math.isnan(narrow.ci_low):
        return  # a bootstrap-t without bounds at either level
    assert wide.ci_low <= narrow.ci_low <= narrow.ci_high <= wide.ci_high


@FAST
@given(st.lists(st.integers(0, 1), min_size=1, max_size=40))
def test_property_wilson_widens_with_confidence_and_stays_in_unit_range(
    answers: list[int],
) -> None:
    narrow = stats.mean_interval(answers, binary=True, confidence=0.8)
    wide = stats.mean_interval(answers, binary=True, confidence=0.99)
    assert 0.0 <= wide.ci_low <= narrow.ci_low <= narrow.mean <= narrow.ci_high
    assert narrow.ci_high <= wide.ci_high <= 1.0
    assert wide.ci_high > wide.ci_low  # never degenerate, even for all-right or all-wrong


@FAST
@given(finite, st.integers(2, 30), st.sampled_from(MEAN_METHODS))
def test_property_constant_values_give_zero_width(value: float, n: int, method: str | None) -> None:
    ci = _interval([value] * n, method)
    assert ci.ci_low == ci.mean == ci.ci_high
    assert ci.mean == pytest.approx(value)


@FAST
@given(spread_out, st.randoms(use_true_random=False), st.sampled_from(MEAN_METHODS))
def test_property_order_of_cases_does_not_matter(
    values: list[float], random: object, method: str | None
) -> None:
    shuffled = list(values)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    # repr, not ==: a bootstrap-t without bounds has NaN fields, which never compare equal.
    assert repr(_interval(shuffled, method)) == repr(_interval(values, method))


@FAST
@given(st.lists(st.tuples(finite, finite), min_size=2, max_size=25))
def test_property_paired_interval_matches_the_t_test(pairs: list[tuple[float, float]]) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    ci, p = stats.paired_interval(a, b), stats.paired_ttest_p(a, b)
    swapped = stats.paired_interval(b, a)
    assert swapped.mean == -ci.mean
    assert swapped.ci_low == pytest.approx(-ci.ci_high, abs=1e-9 * (1 + abs(ci.ci_high)))
    if ci.ci_low == ci.ci_high:
        return  # identical differences: a zero-width interval, p is 0 or 1
    if abs(p - 0.05) > 1e-9:  # away from the boundary, the CI and the test agree
        assert (ci.ci_low <= 0.0 <= ci.ci_high) == (p >= 0.05)


def _studentised_as_numpy_says(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The bootstrap-t statistic with numpy's own mean, std and an exact flat test."""
    n = x.size
    sample = x[idx]
    shift = sample.mean(axis=1) - sample_mean(x)  # the interval's own estimate
    flat = sample.max(axis=1) == sample.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = shift / (sample.std(axis=1, ddof=1) / math.sqrt(n))
    infinite = np.where(shift == 0.0, 0.0, np.copysign(np.inf, shift))
    return np.where(flat, infinite, t)


_values = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from([0.0, 0.1, 0.1 + 2**-55, 1.0, 1.0 + 2**-52, 1e-300]),
)


@settings(deadline=None, max_examples=200)
@given(
    x=st.lists(_values, min_size=2, max_size=40).filter(lambda v: len(set(v)) > 1),
    seed=st.integers(0, 2**32 - 1),
)
def test_bootstrap_t_statistic_is_numpys_to_the_last_bit(x: list[float], seed: int) -> None:
    """The interval's statistic (row sums shared, the flat test only where the spread is
    tiny) equals numpy's mean / std / max == min written out, bit for bit: ties, values an
    ulp apart and flat resamples included."""
    values = np.asarray(x, dtype=np.float64)
    idx = np.random.default_rng(seed).integers(0, values.size, size=(300, values.size))
    captured: list[np.ndarray] = []

    def capture(n: int, statistic: Callable[..., Any], resamples: int, seed: int) -> Any:
        captured.append(statistic(idx))
        return captured[-1]

    original = bootstrap_module.replicates
    bootstrap_module.replicates = capture
    try:
        stats.bootstrap_t_interval(values)
    finally:
        bootstrap_module.replicates = original
    assert captured, "the interval drew no resamples"
    np.testing.assert_array_equal(captured[0], _studentised_as_numpy_says(values, idx))


@pytest.mark.parametrize("block", [1, 3, 64, 2**18])
def test_statistics_in_blocks_of_any_size_give_the_same_intervals(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """`replicates` applies a statistic to blocks of resamples (for the cache's sake): each
    row's value is its own, so every interval is the same whatever the block."""
    counts = np.arange(1, len(SKEWED) + 1, dtype=np.float64)

    def every() -> list[stats.Interval]:
        return [
            stats.bootstrap_t_interval(SKEWED, resamples=700, seed=5),
            stats.bca_interval(SKEWED, resamples=700, seed=5),
            stats.bootstrap_mean_ci(SKEWED, resamples=700, seed=5),
            stats.bootstrap_ratio_ci(np.asarray(SKEWED) * counts, counts, resamples=700),
        ]

    whole = every()
    monkeypatch.setattr(resampling, "_BLOCK_ENTRIES", block)
    assert every() == whole
