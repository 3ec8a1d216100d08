"""Intervals with a formula instead of resamples: Student's t for a mean, Wilson for a rate."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from pytest_doceval.stats._common import NAN, binary, check_interval_args, sample_mean, vector
from pytest_doceval.stats.bootstrap import contain
from pytest_doceval.stats.interval import WILSON, Interval, T


def t_interval(values: ArrayLike, *, confidence: float = 0.95) -> Interval:
    """Mean of per-case values with Student's t interval: ``m +- t_{n-1} * sd / sqrt(n)``.

    ``sd`` has ddof=1 and ``t_{n-1}`` is the ``(1 + confidence) / 2`` quantile of Student's t
    with n - 1 degrees of freedom (Student 1908), i.e. ``scipy.stats.t.interval`` around the
    mean with the standard error as scale. Applied to paired differences it is the interval
    that matches `paired_ttest_p`: it excludes 0 exactly when the two-sided p-value is below
    ``1 - confidence``. ``method`` is ``"t"``.

    Exact for normal data; for skewed data the two tails miss unequally (the interval is
    symmetric, the sampling distribution of the mean is not), see
    benchmarks/bench_bootstrap_coverage.py. Edge cases: no cases gives all NaN; NaN/inf
    values or a single case give NaN bounds; constant values give the zero-width interval.
    """
    check_interval_args(1, confidence)
    x = vector(values, "values")
    n = int(x.size)
    if n == 0:
        return Interval(NAN, NAN, NAN, 0, T)
    mean = sample_mean(x)
    if n == 1 or not np.all(np.isfinite(x)):
        return Interval(mean, NAN, NAN, n, T)
    if float(np.ptp(x)) == 0.0:
        return contain(mean, mean, mean, n, T)
    from scipy.special import stdtrit  # on use: scipy is slow to import (plugin start-up)

    # stdtrit is what scipy.stats.t.ppf computes, without loading scipy.stats.
    half = float(stdtrit(n - 1, 0.5 + confidence / 2.0)) * float(np.std(x, ddof=1))
    half /= math.sqrt(n)
    return contain(mean, mean - half, mean + half, n, T)


def wilson_interval(values: ArrayLike, *, confidence: float = 0.95) -> Interval:
    """Share of 1s among 0/1 per-case values with the Wilson score interval (Wilson 1927).

    With k ones in n cases, p = k / n and z the ``(1 + confidence) / 2`` normal quantile::

        centre = (k + z^2 / 2) / (n + z^2)
        half   = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)

    (as ``statsmodels.stats.proportion.proportion_confint(method="wilson")``). Unlike any
    interval built from the observed spread, it is not degenerate when every answer is right
    (or wrong): 10 of 10 correct gives about [0.72, 1] at 95%, where a bootstrap gives
    [1, 1]. Its coverage stays near nominal down to small n (Brown, Cai & DasGupta 2001,
    Statist. Sci. 16:101, who recommend it for n < 40). ``method`` is ``"wilson"``.

    Values other than 0/1 raise ``ValueError``; NaN values give a NaN mean with NaN bounds; no
    cases gives all NaN.
    """
    check_interval_args(1, confidence)
    x = vector(values, "values")
    n = int(x.size)
    if n == 0:
        return Interval(NAN, NAN, NAN, 0, WILSON)
    if np.any(np.isnan(x)):
        return Interval(NAN, NAN, NAN, n, WILSON)
    k = int(np.count_nonzero(binary(x, "values")))
    from scipy.special import ndtri  # on use: scipy is slow to import (plugin start-up)

    z = float(ndtri(0.5 + confidence / 2.0))  # what scipy.stats.norm.ppf computes
    z2 = z * z
    centre = (k + z2 / 2.0) / (n + z2)
    half = z / (n + z2) * math.sqrt(k * (n - k) / n + z2 / 4.0)
    # Clipped to [0, 1]: at k = 0 or k = n the formula lands on the boundary up to rounding.
    return contain(k / n, max(0.0, centre - half), min(1.0, centre + half), n, WILSON)
