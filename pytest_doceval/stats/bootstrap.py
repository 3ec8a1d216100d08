"""Bootstrap intervals over cases: percentile (the seeds' method), BCa and bootstrap-t.

Cases are the resampling unit (the cluster bootstrap; Davison & Hinkley 1997, section 3.8):
characters inside a page are correlated, so resampling them would give intervals far too
narrow. All three methods draw their resamples from `resampling.replicates`, so with the same
seed they see the same resampled cases. Which method a report uses by default is decided in
`pytest_doceval.stats.intervals`, not here.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pytest_doceval.stats._common import NAN, check_interval_args, pair, sample_mean, vector
from pytest_doceval.stats.interval import BCA, BOOTSTRAP_T, PERCENTILE_BOOTSTRAP, Interval
from pytest_doceval.stats.resampling import replicates, stratified_replicates


def contain(estimate: float, low: float, high: float, n: int, method: str) -> Interval:
    """The interval, widened if needed so that it contains the estimate.

    Floating-point summation order can put a degenerate interval an ulp off the estimate (and
    bootstrap quantiles from very few resamples can miss it entirely); widening keeps the
    documented invariant ``ci_low <= mean <= ci_high``. Non-finite bounds become NaN together:
    an interval with one unknown end is not an interval.
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return Interval(estimate, NAN, NAN, n, method)
    return Interval(estimate, min(low, estimate), max(high, estimate), n, method)


def _percentile_interval(
    estimate: float,
    n: int,
    replicate: Callable[[NDArray[np.integer]], NDArray[np.float64]],
    resamples: int,
    confidence: float,
    seed: int,
) -> Interval:
    if n == 0 or not math.isfinite(estimate):
        return Interval(NAN if n == 0 else estimate, NAN, NAN, n, PERCENTILE_BOOTSTRAP)
    if n == 1:
        # Every resample of one case is that case: the bootstrap says nothing about spread.
        return Interval(estimate, estimate, estimate, 1, PERCENTILE_BOOTSTRAP)
    values = replicates(n, replicate, resamples, seed)
    alpha = 1.0 - confidence
    # nanquantile: only `bootstrap_ratio_ci` produces NaN replicates (resamples whose
    # denominator sums to zero); they carry no rate, so they are left out rather than poisoning
    # the interval.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(values, [alpha / 2.0, 1.0 - alpha / 2.0])
    return contain(estimate, float(low), float(high), n, PERCENTILE_BOOTSTRAP)


def bootstrap_mean_ci(
    values: ArrayLike,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Mean of per-case values with its percentile bootstrap confidence interval.

    The percentile bootstrap (Efron & Tibshirani 1993, *An Introduction to the Bootstrap*,
    ch. 13): draw ``resamples`` samples of n cases with replacement, take each sample's mean,
    and report the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (numpy's
    default linear interpolation) of those means. Cases are the resampling unit, so the
    interval accounts for everything correlated inside a case. ``method`` is
    ``"percentile-bootstrap"``.

    This is the interval the seeds specify. It is too narrow for small suites (82% coverage
    at n = 5 and 87% at n = 10 for skewed per-case CER, 95% nominal; see
    benchmarks/bench_bootstrap_coverage.py); `mean_interval` chooses a better one.

    The draw is vectorised and chunked (at most ~2 million indices at a time) so memory stays
    bounded for any ``n * resamples``; the chunking does not change the result.

    ``n == 0`` gives an all-NaN interval; ``n == 1`` gives the degenerate interval ``[x, x]``
    (one case carries no information about spread). NaN values make every field NaN. The
    interval is widened, if needed, to contain the point estimate; this only ever matters at
    the level of floating-point rounding (e.g. a constant vector).
    """
    check_interval_args(resamples, confidence)
    x = vector(values, "values")
    n = int(x.size)
    estimate = float(np.mean(x)) if n else NAN
    return _percentile_interval(
        estimate, n, lambda idx: x[idx].mean(axis=1), resamples, confidence, seed
    )


def bootstrap_ratio_ci(
    numerators: ArrayLike,
    denominators: ArrayLike,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Corpus-level rate ``sum(numerators) / sum(denominators)`` with a case bootstrap CI.

    This is a ratio estimator, e.g. corpus CER = total edit operations / total reference
    characters, which weights each case by its length (unlike the mean of per-case CERs). The
    numerator and denominator of a case are resampled together, so the interval is the
    percentile bootstrap of the ratio of sums (Efron & Tibshirani 1993, ch. 13; the ratio
    estimator as in Cochran 1977, *Sampling Techniques*, ch. 6); ``method`` is
    ``"percentile-bootstrap"``.

    ``mean`` is the ratio on the full sample; it is NaN when ``n == 0`` or the denominators sum
    to 0 (the rate is undefined). Resamples whose denominators sum to 0 are left out of the
    quantiles; if every resample is such, the bounds are NaN.
    """
    check_interval_args(resamples, confidence)
    num, den = vector(numerators, "numerators"), vector(denominators, "denominators")
    if num.shape != den.shape:
        raise ValueError(f"numerators and denominators differ in length: {num.size}, {den.size}")
    n = int(num.size)
    total = float(den.sum())
    estimate = float(num.sum()) / total if n and total != 0.0 else NAN

    def replicate(idx: NDArray[np.integer]) -> NDArray[np.float64]:
        sums = den[idx].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(sums != 0.0, num[idx].sum(axis=1) / sums, np.nan)

    return _percentile_interval(estimate, n, replicate, resamples, confidence, seed)


def paired_bootstrap_ci(
    a: ArrayLike,
    b: ArrayLike,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Mean paired difference ``mean(a - b)`` with its percentile bootstrap CI over cases.

    ``a[i]`` and ``b[i]`` must belong to the same case; pairs are resampled together, which is
    the paired (case-level) bootstrap. Same edge cases as `bootstrap_mean_ci`.
    """
    x, y = pair(a, b)
    return bootstrap_mean_ci(x - y, resamples=resamples, confidence=confidence, seed=seed)


def stratified_bootstrap_ci(
    strata: Sequence[ArrayLike],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """The unweighted mean of the strata's means with its percentile interval, resampling
    within each stratum (`resampling.stratified_replicates`): the interval of a score defined
    as a mean over fixed groups (olmOCR-bench's pass rate over fact files). Empty strata are
    left out; ``n`` counts the values. No value gives all NaN. ``method`` is
    ``"percentile-bootstrap"``; the quantiles are numpy's default (linear) percentiles."""
    check_interval_args(resamples, confidence)
    arrays = [a for a in (vector(s, "stratum") for s in strata) if a.size]
    n = sum(int(a.size) for a in arrays)
    if not arrays:
        return Interval(NAN, NAN, NAN, 0, PERCENTILE_BOOTSTRAP)
    estimate = float(np.mean([np.mean(a) for a in arrays]))
    totals = stratified_replicates(arrays, resamples, seed)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(totals, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return contain(estimate, float(low), float(high), n, PERCENTILE_BOOTSTRAP)


def _spread_or_edge(x: NDArray[np.float64], method: str) -> tuple[float, Interval | None]:
    """The sample mean, and the result itself when the data leave nothing to estimate.

    No cases: all NaN. A NaN or infinite value: the (non-finite) mean with NaN bounds. One
    case: NaN bounds (a spread cannot be estimated from one value). Constant values: the
    zero-width interval at that value (there is no sampling variation to show).
    """
    n = int(x.size)
    if n == 0:
        return NAN, Interval(NAN, NAN, NAN, 0, method)
    mean = sample_mean(x)
    if not np.all(np.isfinite(x)):
        return mean, Interval(mean, NAN, NAN, n, method)
    if n == 1:
        return mean, Interval(mean, NAN, NAN, 1, method)
    if float(np.ptp(x)) == 0.0:
        return mean, contain(mean, mean, mean, n, method)
    return mean, None


def bca_interval(
    values: ArrayLike,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Mean of per-case values with the bias-corrected and accelerated (BCa) bootstrap CI.

    Efron 1987 (JASA 82:171); Efron & Tibshirani 1993, ch. 14. The percentile interval's
    quantile levels are moved by the bias correction z0 = Phi^-1(share of resampled means
    below the mean, ties counted half) and the acceleration a, which for the mean is
    ``sum((x - m)^3) / (6 * sum((x - m)^2)^1.5)`` (the jackknife formula, eq. 14.15, written
    out for the mean). This is what ``scipy.stats.bootstrap(method="BCa")`` computes, from this
    package's seeded case resamples. ``method`` is ``"bca"``.

    BCa corrects the percentile interval's skewness but not its narrowness, so it
    under-covers at small n about as badly (benchmarks/bench_bootstrap_coverage.py).

    Edge cases: no cases gives all NaN; NaN/inf values, a single case, or levels that cannot be
    computed (every resampled mean on one side of the mean) give NaN bounds; constant values
    give the zero-width interval.
    """
    check_interval_args(resamples, confidence)
    x = vector(values, "values")
    mean, edge = _spread_or_edge(x, BCA)
    if edge is not None:
        return edge
    n = int(x.size)
    means = replicates(n, lambda idx: x[idx].mean(axis=1), resamples, seed)
    below = np.count_nonzero(means < mean) + np.count_nonzero(means <= mean)
    from scipy import special  # on use: scipy is slow to import (plugin start-up)

    z0 = float(special.ndtri(below / (2.0 * means.size)))
    dev = x - mean
    # Deviations so small that their squares underflow to 0 give 0/0: NaN levels, NaN bounds.
    with np.errstate(invalid="ignore", divide="ignore"):
        acceleration = float(np.sum(dev**3) / (6.0 * np.sum(dev**2) ** 1.5))
    z = float(special.ndtri((1.0 - confidence) / 2.0))
    levels = [float(special.ndtr(z0 + (z0 + q) / (1.0 - acceleration * (z0 + q)))) for q in (z, -z)]
    if not all(math.isfinite(level) for level in levels):
        return Interval(mean, NAN, NAN, n, BCA)
    low, high = np.quantile(means, levels)
    return contain(mean, float(low), float(high), n, BCA)


def bootstrap_t_interval(
    values: ArrayLike,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Mean of per-case values with the bootstrap-t (studentised bootstrap) CI.

    Efron & Tibshirani 1993, ch. 12.5; Hall 1988 (Ann. Statist. 16:927) shows it second-order
    accurate. Each resample b gives ``t_b = (mean_b - m) / (sd_b / sqrt(n))`` (sd with
    ddof=1); the interval is ``[m - q_hi * se, m - q_lo * se]`` with ``se = sd / sqrt(n)`` and
    q_lo, q_hi the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of t_b
    (numpy's linear interpolation). Studentising corrects the percentile interval's narrowness
    at small n, and the asymmetric quantiles correct for skewness, which a t interval ignores.
    ``method`` is ``"bootstrap-t"``.

    A resample whose cases all have the same value has no spread, so its t_b is +-inf (0 when
    that value is the mean). When such resamples reach a quantile the interval is unbounded,
    and the bounds are NaN: this happens with heavily tied data (e.g. most per-case CERs
    exactly 0) or very few cases. Other edge cases: no cases gives all NaN; NaN/inf values or
    a single case give NaN bounds; constant values give the zero-width interval.
    """
    check_interval_args(resamples, confidence)
    x = vector(values, "values")
    mean, edge = _spread_or_edge(x, BOOTSTRAP_T)
    if edge is not None:
        return edge
    n = int(x.size)
    root_n = math.sqrt(n)
    # No resample whose sd exceeds this is flat: n copies of one value v sum to n * v within
    # about log2(n) rounding errors, so their mean is v within as many ulps and their sd
    # within twice that; 4 n eps max|x| bounds it for every n >= 2.
    flat_bound = 4.0 * n * np.finfo(np.float64).eps * float(np.max(np.abs(x)))
    flat_bound += np.finfo(np.float64).tiny

    def studentised(idx: NDArray[np.integer]) -> NDArray[np.float64]:
        sample = x[idx]
        # numpy's mean and ddof=1 std, step by step as numpy computes them (the same sum,
        # the same rounding: equal to the last bit), sharing the row sums between the two.
        means = np.add.reduce(sample, axis=1) / n
        deviations = sample - means[:, np.newaxis]
        np.multiply(deviations, deviations, out=deviations)
        sd = np.sqrt(np.add.reduce(deviations, axis=1) / (n - 1))
        shift = means - mean
        with np.errstate(divide="ignore", invalid="ignore"):
            t: NDArray[np.float64] = shift / (sd / root_n)
        # Exact test for "no spread": the ddof=1 sd of identical values can be an ulp above 0,
        # which would turn an undefined statistic into an arbitrary huge one. Only resamples
        # with a spread that small can be flat; their values are compared.
        near_flat = np.flatnonzero(sd <= flat_bound)
        if near_flat.size:
            rows = sample[near_flat]
            flat = rows.max(axis=1) == rows.min(axis=1)
            # copysign(inf, 0.0) is +inf; a flat resample sitting exactly on the mean is
            # 0 / 0, centred by definition, so it counts as 0.
            near = shift[near_flat]
            infinite = np.where(near == 0.0, 0.0, np.copysign(np.inf, near))
            t[near_flat] = np.where(flat, infinite, t[near_flat])
        return t

    t = replicates(n, studentised, resamples, seed)
    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore"):
        q_low, q_high = (float(q) for q in np.quantile(t, [alpha / 2.0, 1.0 - alpha / 2.0]))
    se = float(np.std(x, ddof=1)) / root_n
    return contain(mean, mean - q_high * se, mean - q_low * se, n, BOOTSTRAP_T)
