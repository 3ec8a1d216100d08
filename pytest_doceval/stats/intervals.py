"""The two entry points reports call for intervals, and the one rule for which method to use.

`mean_interval` (one system's mean of per-case values) and `paired_interval` (mean of paired
per-case differences, current - baseline or a - b) choose the method that measured best in
benchmarks/bench_bootstrap_coverage.py (simulated suites of per-case CER-like values with a
known mean, 95% nominal, seeds and figures in that file), and record it in `Interval.method`.
Pass ``method=`` to force one of `INTERVAL_METHODS` (e.g. ``"percentile-bootstrap"``, the
interval the seeds specify).

Both sort the per-case values (differences) before resampling, so an interval depends only on
the values and never on the order the cases arrive in; the point estimate is the correctly
rounded mean (``math.fsum``), so swapping a and b negates it exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pytest_doceval.stats._common import check_interval_args, pair, vector
from pytest_doceval.stats.bootstrap import bca_interval, bootstrap_mean_ci, bootstrap_t_interval
from pytest_doceval.stats.closed_form import t_interval, wilson_interval
from pytest_doceval.stats.interval import (
    BCA,
    BOOTSTRAP_T,
    INTERVAL_METHODS,
    PERCENTILE_BOOTSTRAP,
    SMALL_N,
    WILSON,
    Interval,
    T,
)

# Method used by `paired_interval` when none is given (why: see its docstring).
DEFAULT_PAIRED_METHOD = T

_Method = Callable[[ArrayLike, int, float, int], Interval]

_METHODS: dict[str, _Method] = {
    PERCENTILE_BOOTSTRAP: lambda x, r, c, s: bootstrap_mean_ci(
        x, resamples=r, confidence=c, seed=s
    ),
    BCA: lambda x, r, c, s: bca_interval(x, resamples=r, confidence=c, seed=s),
    BOOTSTRAP_T: lambda x, r, c, s: bootstrap_t_interval(x, resamples=r, confidence=c, seed=s),
    T: lambda x, r, c, s: t_interval(x, confidence=c),
    WILSON: lambda x, r, c, s: wilson_interval(x, confidence=c),
}


def _run(method: str, values: ArrayLike, resamples: int, confidence: float, seed: int) -> Interval:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")
    return _METHODS[method](values, resamples, confidence, seed)


def _canonical(values: ArrayLike) -> NDArray[np.float64]:
    """The values in sorted order: a resampled interval then depends only on the values, not
    on the order the cases came in (renaming or reordering cases never changes a report)."""
    return np.sort(vector(values, "values"))


def mean_interval(
    values: ArrayLike,
    *,
    binary: bool = False,
    method: str | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Mean of per-case values with the confidence interval that covers best for its n.

    The default (``method=None``):

    * ``binary=True`` (0/1 per case, e.g. exact-match accuracy): the Wilson score interval
      (`wilson_interval`). It keeps near-nominal coverage at small n, and it is not
      degenerate when every answer is right: the percentile bootstrap the seed 001 spec
      describes gives [1, 1] for 10 of 10 correct. Pass ``method="percentile-bootstrap"`` to
      get the seed's interval instead.
    * otherwise, with n >= `SMALL_N` cases: the bootstrap-t (`bootstrap_t_interval`), the
      best-covering method measured on skewed per-case CER (Beta(2, 30), n = 10 / 20 / 50:
      94 / 95 / 95%, where the percentile bootstrap gets 87 / 92 / 94%, BCa 88 / 92 / 94%,
      the t interval 92 / 94 / 95%), as good as the t interval on symmetric data (95%), and the
      least bad on heavy-tailed data (LogNormal with sd 1 on the log scale: 90 / 91 / 93%;
      percentile 81 / 85 / 90%, t 84 / 87 / 90%). No method that is not deliberately wider
      than necessary on ordinary data reaches 93% on that LogNormal at n = 10-20: the samples
      that miss are those without any case from the long tail, and nothing in them shows it.
      When the bootstrap-t has no finite bounds (heavily tied data, e.g. most CERs exactly 0,
      where too many resamples have no spread), the t interval is used instead: with half the
      CERs exactly 0 at n = 10 that is 14% of suites, and the combination covers 93%.
    * otherwise, with 2 <= n < `SMALL_N`: the t interval (`t_interval`). At n = 5 it covers
      94% on symmetric and 92% on skewed data (the percentile bootstrap: 82%); the bootstrap-t
      covers a little better on skewed data there, but its resampling distribution is too
      coarse to trust: at n = 5 one interval in 20 is over three times as wide as the t
      interval even on symmetric data, and at n = 2 it always has zero width.

    ``values`` must be 0/1 for ``binary=True`` (``ValueError`` otherwise, unless NaN).
    `Interval.method` says which method made the interval and `Interval.small_n` flags
    n < `SMALL_N`. Edge cases are those of the method used: no cases gives all NaN; NaN values
    give NaN bounds; one case gives NaN bounds (``[x, x]`` for the percentile bootstrap, a
    wide interval for Wilson); constant values give a zero-width interval (not for Wilson).
    Pass ``binary=True`` for every 0/1 metric: on 0/1 values the bootstrap-t is poor (many
    resamples have no spread) and the t interval can leave [0, 1].
    """
    check_interval_args(resamples, confidence)
    x = _canonical(values)
    if method is not None:
        return _run(method, x, resamples, confidence, seed)
    if binary:
        return wilson_interval(x, confidence=confidence)
    if x.size < SMALL_N:
        return t_interval(x, confidence=confidence)
    interval = bootstrap_t_interval(x, resamples=resamples, confidence=confidence, seed=seed)
    if math.isnan(interval.ci_low) and np.all(np.isfinite(x)):
        return t_interval(x, confidence=confidence)
    return interval


def paired_interval(
    a: ArrayLike,
    b: ArrayLike,
    *,
    method: str | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Mean paired difference ``mean(a - b)`` over cases with its confidence interval.

    ``a[i]`` and ``b[i]`` belong to the same case (e.g. current and baseline CER of one page).
    The default (``method=None``) is the t interval of the differences (`t_interval`), for
    every n and for 0/1 metrics too, because on paired differences it measured as well as or
    better than every resampling method: differences between two systems are often mostly
    exact zeros (pages both read identically) with heavy tails on both sides, where the
    bootstrap-t degenerates and under-covers (70% zeros, n = 10 / 20: t 83 / 91%, percentile
    78 / 88%, bootstrap-t 37 / 82%), and for 0/1 metrics (n = 10: t 88%, percentile 80%,
    bootstrap-t 28%); on a heavy-tailed multiplicative change the t interval still covers
    best (86-90% for n = 5-50; percentile 69-88%, bootstrap-t 83-89%, BCa 76-87%).
    It also agrees with `paired_ttest_p` by construction: the interval excludes 0 exactly when
    the paired t-test rejects at level ``1 - confidence``, so a report's CI and p-value never
    contradict each other.

    Edge cases as `t_interval` (or the forced method): no cases gives all NaN, one case or a
    NaN difference NaN bounds, identical differences a zero-width interval.
    """
    x, y = pair(a, b)
    check_interval_args(resamples, confidence)
    if method == WILSON:
        raise ValueError("the Wilson interval is for 0/1 values, not for paired differences")
    return _run(method or DEFAULT_PAIRED_METHOD, _canonical(x - y), resamples, confidence, seed)
