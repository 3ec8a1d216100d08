"""Tests of a paired difference (t, Wilcoxon signed-rank) and effect sizes (Cohen's d)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pytest_doceval.stats._common import NAN, pair

# scipy.stats.wilcoxon runs an exact permutation test at or below this n when there are ties
# or zeros (2**13 patterns fit in its default 9999 resamples); `wilcoxon_p` mirrors that rule.
_WILCOXON_PERMUTATION_MAX_N = 13


def paired_ttest_p(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided p-value of the paired t-test (Student 1908) of H0: mean(a - b) = 0.

    t = mean(d) / (sd(d, ddof=1) / sqrt(n)) with n - 1 degrees of freedom, d = a - b; this is
    the one-sample t-test on the differences, as in ``scipy.stats.ttest_rel``.

    ``nan`` when n < 2 (no variance estimate). ``1.0`` when every difference is 0 (the systems
    agree exactly on every case: no evidence of a difference). ``0.0`` when the differences are
    all equal but not 0 (zero variance, t is infinite).
    """
    x, y = pair(a, b)
    d = x - y
    n = int(d.size)
    if n < 2 or not np.all(np.isfinite(d)):
        return NAN
    if np.all(d == 0.0):
        return 1.0
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0
    t = mean / (sd / math.sqrt(n))
    from scipy.special import stdtr  # on use: scipy is slow to import (plugin start-up)

    # stdtr(df, -|t|) is what scipy.stats.t.sf(|t|, df) computes, without scipy.stats.
    return float(min(1.0, 2.0 * stdtr(n - 1, -abs(t))))


def wilcoxon_p(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test (Wilcoxon 1945) of a - b.

    The p-value is the one ``scipy.stats.wilcoxon`` gives with its defaults (``method="auto"``):
    zero differences are dropped from the ranking (Wilcoxon's original treatment); with no
    ties or zeros and n <= 50 the exact null distribution is used; with ties or zeros and
    n <= 13 the exact sign-flip permutation distribution; otherwise the normal approximation
    with continuity and tie correction. This is the rank-based alternative to
    `paired_ttest_p`, robust to the heavy tails common in per-case CER.

    ``nan`` when n < 2 (checked first) or any value is NaN; ``1.0`` when every difference is 0.
    """
    x, y = pair(a, b)
    d = x - y
    if d.size < 2 or not np.all(np.isfinite(d)):
        return NAN
    if np.all(d == 0.0):
        return 1.0
    nonzero = d[d != 0.0]
    has_ties = np.unique(np.abs(nonzero)).size < nonzero.size
    if (has_ties or nonzero.size < d.size) and d.size <= _WILCOXON_PERMUTATION_MAX_N:
        return _wilcoxon_sign_flip_p(nonzero)
    from scipy.stats import wilcoxon  # on use: scipy.stats is slow to import (start-up)

    with warnings.catch_warnings():
        # scipy warns about small n or ties and switches method itself; the p-value is still
        # the documented one, so the warning is only noise in a test report.
        warnings.simplefilter("ignore")
        result = wilcoxon(d)
    return float(result.pvalue)


def _wilcoxon_sign_flip_p(nonzero: NDArray[np.float64]) -> float:
    """Exact two-sided signed-rank p-value by enumerating all 2**m sign patterns.

    This is the permutation test ``scipy.stats.wilcoxon`` runs for small samples with ties or
    zeros, computed the same way (statistic: sum of the positive ranks, ``2 * min`` of the two
    tail proportions, scipy's relative tolerance for ties of the statistic) but vectorised: scipy
    evaluates its statistic once per pattern in Python, which takes seconds at m = 13.
    Sign flips of zero differences leave the statistic unchanged, so enumerating the non-zero
    ones gives the same proportions.
    """
    from scipy.stats import rankdata  # on use: scipy.stats is slow to import (start-up)

    ranks = rankdata(np.abs(nonzero))
    m = int(nonzero.size)
    signs = (np.arange(2**m)[:, None] >> np.arange(m)) & 1
    null = signs @ ranks
    observed = float(ranks[nonzero > 0].sum())
    gamma = abs(observed) * 100 * np.finfo(np.float64).eps
    less = float(np.mean(null <= observed + gamma))
    greater = float(np.mean(null >= observed - gamma))
    return min(1.0, 2.0 * min(less, greater))


def cohens_d_paired(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's d_z for paired data: mean(d) / sd(d, ddof=1), d = a - b.

    The standardised mean difference of the paired differences (Cohen 1988, *Statistical Power
    Analysis for the Behavioral Sciences*, 2nd ed., ch. 2; Lakens 2013, "Calculating and
    reporting effect sizes", Front. Psychol. 4:863, d_z). Positive when a is larger than b.

    ``nan`` when n < 2; ``0.0`` when every difference is 0; ``+inf``/``-inf`` when the
    differences are all equal but not 0 (zero spread, so the standardised effect is unbounded).
    """
    x, y = pair(a, b)
    d = x - y
    if d.size < 2 or not np.all(np.isfinite(d)):
        return NAN
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / sd
