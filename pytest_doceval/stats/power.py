"""Power: the smallest change a comparison detects with 80% power, for its n and observed spread.

A gate or comparison that cannot see a change of the size it is meant to catch says nothing when
it passes: ``significant:+0.5pp`` on five pages of CER spread ±3pp passes a 2-point regression
most of the time. Every suite gate and paired comparison therefore reports its *minimum
detectable effect* (MDE): the true mean change that its test detects with probability `POWER`.

* **Means** (the paired t test the gates and comparisons run, on per-case differences): the
  effect size d solving ``power(d) = 0.8`` under the noncentral t distribution with n - 1
  degrees of freedom and noncentrality ``d * sqrt(n)`` (scipy's ``nct``), times the observed
  standard deviation of the differences. It is the MDE statsmodels' ``TTestPower.solve_power``
  gives (the tests check it). Where the differences have no spread (a deterministic system
  against its own baseline: every difference 0), the sd of the per-case values themselves
  stands in for it -- a regression would move cases unequally, about as much as they differ.
* **Binary metrics** (0/1 per case; exact McNemar): n pairs, of which a share psi are
  discordant (one side right, the other wrong); a change delta = p10 - p01 with psi fixed. The
  power is exact: the number of discordant pairs D ~ Binomial(n, psi), and given D = d the test
  rejects when the count of one kind reaches the exact two-sided binomial critical value (scipy's
  ``binom``); summed over d. The MDE is the smallest delta reaching 80% power (bisection;
  the power grows with delta at fixed psi), or infinity when even delta = psi cannot. With no
  discordant pair observed, psi = 2p(1 - p) for the observed accuracy p (independent errors).

Levels: a suite gate is a one-sided test at ``(1 - confidence) / 2`` of a regression beyond its
margin, so it reliably fails on regressions of ``margin + MDE`` or more; a comparison is
two-sided at ``1 - confidence`` (before any Bonferroni adjustment). The simulation in the tests
checks the McNemar power by drawing pairs at the MDE.
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np
import numpy.typing as npt

POWER = 0.8
Alternative = Literal["two-sided", "larger"]
INF = math.inf
NAN = math.nan


def t_power(effect: float, n: int, alpha: float, alternative: Alternative = "two-sided") -> float:
    """Power of the one-sample (paired) t test at level `alpha` for a standardised effect."""
    from scipy import stats as sps

    df = n - 1
    nc = effect * math.sqrt(n)
    if alternative == "larger":
        return float(sps.nct.sf(sps.t.ppf(1 - alpha, df), df, nc))
    crit = sps.t.ppf(1 - alpha / 2, df)
    # The far tail (the wrong sign) is negligible; scipy's nct returns NaN for it at large
    # noncentrality with few degrees of freedom.
    wrong_sign = float(np.nan_to_num(sps.nct.cdf(-crit, df, nc), nan=0.0))
    return float(sps.nct.sf(crit, df, nc)) + wrong_sign


def t_mde(
    n: int,
    sd: float,
    alpha: float,
    *,
    power: float = POWER,
    alternative: Alternative = "two-sided",
) -> float:
    """The smallest mean difference the paired t test detects with `power` (metric units);
    NaN for fewer than two cases or an undefined spread, 0 for no spread at all."""
    if n < 2 or not math.isfinite(sd):
        return NAN
    if sd == 0:
        return 0.0
    return t_effect(n, alpha, alternative, power) * sd


@functools.lru_cache(maxsize=4096)
def t_effect(n: int, alpha: float, alternative: Alternative, power: float) -> float:
    """The standardised effect the paired t test detects with `power`: it depends on n and
    the level only, so a report's hundreds of comparisons solve it once per n (each solve is
    dozens of noncentral t evaluations)."""
    from scipy import optimize

    high = 1.0
    while t_power(high, n, alpha, alternative) < power:
        high *= 2
    effect = optimize.brentq(
        lambda d: t_power(d, n, alpha, alternative) - power, 0.0, high, xtol=1e-10
    )
    return float(effect)


@functools.lru_cache(maxsize=64)
def _critical_counts(n: int, alpha: float) -> npt.NDArray[np.int64]:
    """For every number d = 0..n of discordant pairs, the smallest count k of one kind at which
    the exact two-sided binomial test (p = 1/2) rejects at `alpha` (d + 1: never)."""
    from scipy import stats as sps

    d = np.arange(n + 1)
    half = alpha / 2  # the two-sided p of a count k > d/2 is 2 P(K >= k) (capped at 1)
    # binom.isf: the smallest x with P(K > x) <= half, so k = x + 1; one step either way
    # corrects the discrete quantile's floating-point edge.
    k = np.asarray(sps.binom.isf(half, d, 0.5), dtype=np.float64) + 1
    k = np.where(np.isnan(k), d + 1, k)
    k = np.where(sps.binom.sf(k - 2, d, 0.5) <= half, k - 1, k)
    k = np.where(sps.binom.sf(k - 1, d, 0.5) > half, k + 1, k)
    return np.minimum(k, d + 1).astype(np.int64)


def mcnemar_power(n: int, discordant: float, change: float, alpha: float) -> float:
    """Exact power of the two-sided exact McNemar test at `alpha` to find a change of
    `change` (= p10 - p01 >= 0) when a share `discordant` (= p10 + p01) of the n pairs differ."""
    from scipy import stats as sps

    if n < 1 or discordant <= 0:
        return 0.0
    share = min(1.0, 0.5 + change / (2 * discordant))  # p10 / (p10 + p01)
    d = np.arange(n + 1)
    critical = _critical_counts(n, alpha)
    reject = sps.binom.sf(critical - 1, d, share)
    return float(np.sum(sps.binom.pmf(d, n, discordant) * reject))


@functools.lru_cache(maxsize=4096)  # a share of n pairs: few distinct values in a report
def mcnemar_mde(n: int, discordant: float, alpha: float, *, power: float = POWER) -> float:
    """The smallest change p10 - p01 the exact McNemar test detects with `power` at a fixed
    discordant share; infinity when none can (too few pairs or discordances)."""
    if n < 1 or not discordant > 0:
        return INF
    if mcnemar_power(n, discordant, discordant, alpha) < power:
        return INF
    low, high = 0.0, discordant
    for _ in range(40):
        middle = (low + high) / 2
        if mcnemar_power(n, discordant, middle, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


def paired_mde(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    binary: bool,
    alpha: float,
    alternative: Alternative = "two-sided",
) -> float:
    """The MDE of a paired comparison of `a` with `b` (same cases, in order), as the module
    docstring says: McNemar for binary metrics, else the t test; `alpha` two-sided (for
    ``alternative="larger"``, one-sided)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    n = int(x.size)
    if n < 2:
        return NAN
    if binary:
        discordant = float(np.mean(x != y))
        if discordant == 0:
            p = float(np.mean(np.concatenate([x, y])))
            discordant = 2 * p * (1 - p)
        level = alpha if alternative == "two-sided" else 2 * alpha
        return mcnemar_mde(n, discordant, level)
    sd = float(np.std(x - y, ddof=1))
    if sd == 0:
        sd = float(np.std(x, ddof=1))
    return t_mde(n, sd, alpha, alternative=alternative)
