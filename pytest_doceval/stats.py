"""Seeded, case-level statistics for comparing document-AI systems.

Every function here treats the *case* (one document, page or question) as the unit of
analysis: callers pass one value per case, and the bootstrap resamples cases, never tokens or
characters inside a case. Characters within one page are strongly correlated, so resampling them
would produce intervals that are far too narrow; resampling whole cases is the cluster bootstrap
(Davison & Hinkley 1997, section 3.8; Field & Welsh 2007, "Bootstrapping clustered data").

Conventions shared by the whole module:

* Randomness comes only from ``numpy.random.default_rng(seed)`` with ``seed=0`` by default, so the
  same inputs always give the same intervals (a report must not change between two runs).
* Results are plain Python ``float``/``int``/``bool`` values (never numpy scalars), because they
  travel through pytest-xdist's serialiser, which rejects numpy types. Every result dataclass is
  frozen and has ``to_dict()`` returning builtins only.
* A quantity that is undefined for the data (a p-value from fewer than two cases, a variance
  ratio of 0/0, ...) is ``nan``, never an exception; each function documents when. NaN inputs
  propagate to NaN outputs: drop cases whose metric is undefined before calling.
* Invalid *arguments* (mismatched lengths, confidence outside (0, 1), an unknown direction)
  raise ``ValueError``.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _sp

__all__ = [
    "AnovaResult",
    "GateDecision",
    "Interval",
    "McNemarResult",
    "PairedComparison",
    "TwoFactorResult",
    "binomial_test_p",
    "bonferroni",
    "bootstrap_mean_ci",
    "bootstrap_ratio_ci",
    "cohens_d_independent",
    "cohens_d_paired",
    "compare_paired",
    "mcnemar_exact",
    "one_way_anova",
    "paired_bootstrap_ci",
    "paired_ttest_p",
    "pairwise_comparisons",
    "significant_regression",
    "two_factor_anova",
    "wilcoxon_p",
]

NAN = float("nan")

# Upper bound on the entries of one resampling index matrix (rows = resamples, columns = cases).
# 2**21 int64 indices is 16 MiB, plus as much again for the gathered float64 values, so peak
# memory stays ~32 MiB whatever n * resamples is. Chunks are drawn one after another from the
# same generator in row-major order, and numpy's Generator.integers consumes its bit stream
# continuously across calls, so the result does not depend on this value (tests check it).
_MAX_CHUNK_ENTRIES = 2**21

# Sums of squares below this fraction of SS_total are rounding error of the OLS solve.
_SS_RELATIVE_TOLERANCE = 1e-12

# The gate compares a CI bound with the margin; current - baseline carries float noise
# (0.105 - 0.1 = 0.0050000000000000044), so a bound within this distance counts as on the margin.
_MARGIN_SLACK = 1e-9

# scipy.stats.wilcoxon runs an exact permutation test at or below this n when there are ties
# or zeros (2**13 patterns fit in its default 9999 resamples); `wilcoxon_p` mirrors that rule.
_WILCOXON_PERMUTATION_MAX_N = 13

_DIRECTIONS = ("lower", "higher")
_ALTERNATIVES = ("two-sided", "less", "greater")


# --------------------------------------------------------------------------------------------
# Result types
# --------------------------------------------------------------------------------------------


def _builtin(value: Any) -> Any:
    """Turn numpy scalars (and containers of them) into builtins, so results pickle anywhere."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, dict):
        return {str(k): _builtin(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_builtin(v) for v in value)
    return value


class _DictMixin:
    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict of builtins (``float``/``int``/``bool``/``str``)."""
        return _builtin(asdict(self))  # type: ignore[call-overload]


@dataclass(frozen=True)
class Interval(_DictMixin):
    """A point estimate with its percentile bootstrap confidence interval over ``n`` cases.

    ``mean`` is the estimate on the full sample (the mean, a ratio, or a mean difference
    depending on the function that built it). ``ci_low <= mean <= ci_high`` always holds when
    all three are finite (see `bootstrap_mean_ci`). All three are ``nan`` when ``n == 0``.
    """

    mean: float
    ci_low: float
    ci_high: float
    n: int

    def to_dict(self) -> dict[str, float | int]:
        return super().to_dict()


@dataclass(frozen=True)
class McNemarResult(_DictMixin):
    """Exact McNemar test: ``only_a`` cases right only under A, ``only_b`` only under B."""

    only_a: int
    only_b: int
    p: float


@dataclass(frozen=True)
class AnovaResult(_DictMixin):
    """One-way ANOVA: F statistic, its p-value, eta^2 = SS_between / SS_total, and the dfs."""

    f: float
    p: float
    eta_squared: float
    df_between: int
    df_within: int


@dataclass(frozen=True)
class TwoFactorResult(_DictMixin):
    """Two-factor ANOVA (factor A, factor B, their interaction) with Type II sums of squares.

    ``ss_*`` are sums of squares, ``df_*`` their degrees of freedom, ``eta_squared_*`` each
    effect's share of the *total* sum of squares (classical eta^2, not partial eta^2), and
    ``f_*``/``p_*`` the F test of each effect against the residual mean square.

    In a balanced design the four eta^2 values add up to 1 (the Type II sums of squares are an
    exact decomposition of SS_total). In an unbalanced design A and B are correlated, the Type II
    sums of squares leave out the variance A and B explain jointly, and the four values add up to
    less (occasionally more) than 1: the gap is variance that cannot be attributed to either
    factor alone. ``interaction=False`` fits the additive model; the interaction fields are then
    ``nan`` and its variance is part of the residual.
    """

    n: int
    levels_a: int
    levels_b: int
    ss_a: float
    ss_b: float
    ss_interaction: float
    ss_residual: float
    ss_total: float
    df_a: int
    df_b: int
    df_interaction: int
    df_residual: int
    eta_squared_a: float
    eta_squared_b: float
    eta_squared_interaction: float
    eta_squared_residual: float
    f_a: float
    p_a: float
    f_b: float
    p_b: float
    f_interaction: float
    p_interaction: float


@dataclass(frozen=True)
class PairedComparison(_DictMixin):
    """System ``a`` against system ``b`` on one metric, paired over the cases both were run on.

    ``mean_diff`` is mean(a - b) with its percentile bootstrap CI (``ci_low``, ``ci_high``);
    ``p_ttest`` is the paired t-test, ``p_wilcoxon`` the Wilcoxon signed-rank test,
    ``cohens_d`` is d_z of the differences, ``p_bonferroni`` is ``p_ttest`` adjusted for the
    number of comparisons made on this metric (equal to ``p_ttest`` for a single comparison), and
    ``p_mcnemar`` is the exact McNemar p-value for binary (0/1) metrics, else ``None``.
    """

    a: str
    b: str
    metric: str
    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_ttest: float
    p_wilcoxon: float
    cohens_d: float
    p_bonferroni: float
    p_mcnemar: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        if data["p_mcnemar"] is None:
            del data["p_mcnemar"]
        return data


@dataclass(frozen=True)
class GateDecision(_DictMixin):
    """Verdict of the suite-level significance gate (see `significant_regression`)."""

    metric: str
    direction: str
    margin: float
    mean_diff: float
    ci_low: float
    ci_high: float
    n: int
    failed: bool
    message: str


# --------------------------------------------------------------------------------------------
# Input helpers
# --------------------------------------------------------------------------------------------


def _vector(values: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per case), got {array.shape}")
    return array


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x, y = _vector(a, "a"), _vector(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired inputs differ in length: {x.size} and {y.size} cases")
    return x, y


def _check_bootstrap_args(resamples: int, confidence: float) -> None:
    if int(resamples) != resamples or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


def _index_chunks(n: int, resamples: int, seed: int) -> Iterator[NDArray[np.int64]]:
    """Resampling index matrices (resamples x n in total), at most `_MAX_CHUNK_ENTRIES` each.

    A single row larger than the budget is still drawn whole: a resample has to exist at once
    to be summarised, so memory is O(n) per row at minimum.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _MAX_CHUNK_ENTRIES // n)
    for start in range(0, resamples, rows):
        yield rng.integers(0, n, size=(min(rows, resamples - start), n), dtype=np.int64)


def _percentile_interval(
    estimate: float,
    n: int,
    replicate: Callable[[NDArray[np.int64]], NDArray[np.float64]],
    resamples: int,
    confidence: float,
    seed: int,
) -> Interval:
    if n == 0 or not math.isfinite(estimate):
        return Interval(NAN, NAN, NAN, n) if n == 0 else Interval(estimate, NAN, NAN, n)
    if n == 1:
        # Every resample of one case is that case: the bootstrap says nothing about spread.
        return Interval(estimate, estimate, estimate, 1)
    replicates = np.concatenate([replicate(idx) for idx in _index_chunks(n, resamples, seed)])
    alpha = 1.0 - confidence
    # nanquantile: only `bootstrap_ratio_ci` produces NaN replicates (resamples whose
    # denominator sums to zero); they carry no rate, so they are left out rather than poisoning
    # the interval.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(replicates, [alpha / 2.0, 1.0 - alpha / 2.0])
    low, high = float(low), float(high)
    if math.isfinite(low) and math.isfinite(high):
        # Floating-point summation order can put a degenerate interval an ulp off the estimate;
        # widening by that ulp keeps the documented invariant ci_low <= mean <= ci_high.
        low, high = min(low, estimate), max(high, estimate)
    return Interval(estimate, low, high, n)


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
    interval accounts for everything correlated inside a case.

    The draw is vectorised and chunked (at most ~2 million indices at a time) so memory stays
    bounded for any ``n * resamples``; the chunking does not change the result.

    ``n == 0`` gives an all-NaN interval; ``n == 1`` gives the degenerate interval ``[x, x]``
    (one case carries no information about spread). NaN values make every field NaN. The
    interval is widened, if needed, to contain the point estimate; this only ever matters at
    the level of floating-point rounding (e.g. a constant vector).
    """
    _check_bootstrap_args(resamples, confidence)
    x = _vector(values, "values")
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
    estimator as in Cochran 1977, *Sampling Techniques*, ch. 6).

    ``mean`` is the ratio on the full sample; it is NaN when ``n == 0`` or the denominators sum
    to 0 (the rate is undefined). Resamples whose denominators sum to 0 are left out of the
    quantiles; if every resample is such, the bounds are NaN.
    """
    _check_bootstrap_args(resamples, confidence)
    num, den = _vector(numerators, "numerators"), _vector(denominators, "denominators")
    if num.shape != den.shape:
        raise ValueError(f"numerators and denominators differ in length: {num.size}, {den.size}")
    n = int(num.size)
    total = float(den.sum())
    estimate = float(num.sum()) / total if n and total != 0.0 else NAN

    def replicate(idx: NDArray[np.int64]) -> NDArray[np.float64]:
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
    x, y = _pair(a, b)
    return bootstrap_mean_ci(x - y, resamples=resamples, confidence=confidence, seed=seed)


# --------------------------------------------------------------------------------------------
# Tests of paired differences and effect sizes
# --------------------------------------------------------------------------------------------


def paired_ttest_p(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sided p-value of the paired t-test (Student 1908) of H0: mean(a - b) = 0.

    t = mean(d) / (sd(d, ddof=1) / sqrt(n)) with n - 1 degrees of freedom, d = a - b; this is
    the one-sample t-test on the differences, as in ``scipy.stats.ttest_rel``.

    ``nan`` when n < 2 (no variance estimate). ``1.0`` when every difference is 0 (the systems
    agree exactly on every case: no evidence of a difference). ``0.0`` when the differences are
    all equal but not 0 (zero variance, t is infinite).
    """
    x, y = _pair(a, b)
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
    return float(min(1.0, 2.0 * _sp.t.sf(abs(t), n - 1)))


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
    x, y = _pair(a, b)
    d = x - y
    if d.size < 2 or not np.all(np.isfinite(d)):
        return NAN
    if np.all(d == 0.0):
        return 1.0
    nonzero = d[d != 0.0]
    has_ties = np.unique(np.abs(nonzero)).size < nonzero.size
    if (has_ties or nonzero.size < d.size) and d.size <= _WILCOXON_PERMUTATION_MAX_N:
        return _wilcoxon_sign_flip_p(nonzero)
    with warnings.catch_warnings():
        # scipy warns about small n or ties and switches method itself; the p-value is still
        # the documented one, so the warning is only noise in a test report.
        warnings.simplefilter("ignore")
        result = _sp.wilcoxon(d)
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
    ranks = _sp.rankdata(np.abs(nonzero))
    m = int(nonzero.size)
    signs = (np.arange(2**m)[:, None] >> np.arange(m)) & 1
    null = signs @ ranks
    observed = float(ranks[nonzero > 0].sum())
    gamma = abs(observed) * 100 * np.finfo(np.float64).eps
    less = np.mean(null <= observed + gamma)
    greater = np.mean(null >= observed - gamma)
    return float(min(1.0, 2.0 * min(less, greater)))


def cohens_d_paired(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's d_z for paired data: mean(d) / sd(d, ddof=1), d = a - b.

    The standardised mean difference of the paired differences (Cohen 1988, *Statistical Power
    Analysis for the Behavioral Sciences*, 2nd ed., ch. 2; Lakens 2013, "Calculating and
    reporting effect sizes", Front. Psychol. 4:863, d_z). Positive when a is larger than b.

    ``nan`` when n < 2; ``0.0`` when every difference is 0; ``+inf``/``-inf`` when the
    differences are all equal but not 0 (zero spread, so the standardised effect is unbounded).
    """
    x, y = _pair(a, b)
    d = x - y
    if d.size < 2 or not np.all(np.isfinite(d)):
        return NAN
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / sd


def cohens_d_independent(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's d for two independent groups: (mean(a) - mean(b)) / pooled sd.

    pooled sd = sqrt(((n_a - 1) var_a + (n_b - 1) var_b) / (n_a + n_b - 2)) with ddof=1
    variances (Cohen 1988, ch. 2; Lakens 2013, d_s). Positive when a is larger.

    ``nan`` when either group is empty or n_a + n_b < 3 (no pooled variance); ``0.0`` when the
    pooled sd is 0 and the means are equal; ``+inf``/``-inf`` when the pooled sd is 0 and the
    means differ.
    """
    x, y = _vector(a, "a"), _vector(b, "b")
    na, nb = int(x.size), int(y.size)
    if na == 0 or nb == 0 or na + nb < 3:
        return NAN
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return NAN
    ss = float(((x - x.mean()) ** 2).sum() + ((y - y.mean()) ** 2).sum())
    pooled = math.sqrt(ss / (na + nb - 2))
    diff = float(x.mean()) - float(y.mean())
    if pooled == 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return diff / pooled


# --------------------------------------------------------------------------------------------
# Binary outcomes
# --------------------------------------------------------------------------------------------


def _binary(values: ArrayLike, name: str) -> NDArray[np.bool_]:
    array = _vector(values, name)
    if not np.all((array == 0.0) | (array == 1.0)):
        raise ValueError(f"{name} must hold only 0/1 (or False/True) values")
    return array == 1.0


def mcnemar_exact(a_correct: ArrayLike, b_correct: ArrayLike) -> McNemarResult:
    """Exact McNemar test of paired binary outcomes (McNemar 1947).

    Only discordant cases carry information: ``only_a`` (A right, B wrong) and ``only_b``
    (B right, A wrong). Under H0 (equal accuracy) each discordant case is equally likely to go
    either way, so ``only_a ~ Binomial(only_a + only_b, 1/2)``; the p-value is the two-sided
    exact binomial test (``scipy.stats.binomtest``): the exact conditional McNemar test
    (Fagerland, Lydersen & Laake 2013, BMC Med. Res. Methodol. 13:91), which is conservative
    (its real size is below the nominal level) but never anti-conservative.

    ``p == 1.0`` when there are no discordant pairs (including n == 0).
    """
    a, b = _binary(a_correct, "a_correct"), _binary(b_correct, "b_correct")
    if a.shape != b.shape:
        raise ValueError(f"paired inputs differ in length: {a.size} and {b.size} cases")
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if only_a + only_b == 0:
        return McNemarResult(only_a, only_b, 1.0)
    p = _sp.binomtest(only_a, only_a + only_b, 0.5).pvalue
    return McNemarResult(only_a, only_b, float(min(1.0, p)))


def binomial_test_p(k: int, n: int, p: float = 0.5, alternative: str = "two-sided") -> float:
    """Exact binomial test of H0: success probability = ``p``, given ``k`` successes in ``n``.

    ``alternative`` is ``"two-sided"``, ``"less"`` or ``"greater"``; the two-sided p-value sums
    the probabilities of all outcomes no more likely than ``k`` under H0 (the "minimum
    likelihood" method of ``scipy.stats.binomtest``, which computes it; Hollander, Wolfe &
    Chicken 2014, *Nonparametric Statistical Methods*, sec. 2.1).

    ``nan`` when n == 0 (no trials, nothing to test).
    """
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    if int(k) != k or int(n) != n or n < 0 or not 0 <= k <= n:
        raise ValueError(f"need integers 0 <= k <= n, got k={k!r}, n={n!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    if n == 0:
        return NAN
    return float(min(1.0, _sp.binomtest(int(k), int(n), p, alternative=alternative).pvalue))


# --------------------------------------------------------------------------------------------
# Analysis of variance
# --------------------------------------------------------------------------------------------


def _f_test(
    ss_effect: float, df_effect: int, ss_resid: float, df_resid: int
) -> tuple[float, float]:
    """F = (SS_effect / df_effect) / (SS_resid / df_resid) and its upper-tail p-value."""
    if df_effect <= 0 or df_resid <= 0 or not (math.isfinite(ss_effect) and ss_resid >= 0):
        return NAN, NAN
    if ss_resid == 0.0:
        # A perfect fit: any effect is infinitely large relative to zero noise, no effect is 0/0.
        return (math.inf, 0.0) if ss_effect > 0.0 else (NAN, NAN)
    f = (ss_effect / df_effect) / (ss_resid / df_resid)
    return f, float(_sp.f.sf(f, df_effect, df_resid))


def _share(part: float, total: float) -> float:
    return part / total if total > 0.0 and math.isfinite(part) else NAN


def one_way_anova(groups: Mapping[str, Sequence[float]]) -> AnovaResult:
    """One-way ANOVA of per-case values grouped by a single factor (Fisher 1925).

    SS_between = sum_g n_g (mean_g - grand mean)^2, SS_within = sum_g sum_i (x_gi - mean_g)^2,
    F = (SS_between / (k - 1)) / (SS_within / (N - k)); the p-value is the F(k-1, N-k) upper
    tail (as ``scipy.stats.f_oneway``). ``eta_squared = SS_between / SS_total``, the share of the
    variance explained by the grouping (Cohen 1988, ch. 8).

    Empty groups are ignored. ``f``/``p`` are ``nan`` with fewer than two non-empty groups or
    no within-group degrees of freedom (N == k); ``f = inf, p = 0.0`` when every group is
    constant but the group means differ. ``eta_squared`` is ``nan`` when SS_total is 0 (all
    values equal).
    """
    arrays = [_vector(v, f"group {name!r}") for name, v in groups.items()]
    arrays = [g for g in arrays if g.size]
    k = len(arrays)
    n = sum(int(g.size) for g in arrays)
    df_between, df_within = max(k - 1, 0), max(n - k, 0)
    if k == 0:
        return AnovaResult(NAN, NAN, NAN, 0, 0)
    everything = np.concatenate(arrays)
    grand = float(everything.mean())
    ss_between = float(sum(g.size * (float(g.mean()) - grand) ** 2 for g in arrays))
    ss_within = float(sum(float(((g - g.mean()) ** 2).sum()) for g in arrays))
    ss_total = float(((everything - grand) ** 2).sum())
    f, p = _f_test(ss_between, df_between, ss_within, df_within)
    return AnovaResult(f, p, _share(ss_between, ss_total), df_between, df_within)


def _dummies(labels: Sequence[Any]) -> NDArray[np.float64]:
    """Indicator columns for every level (the intercept's redundancy is handled by `_fit`)."""
    _, codes = np.unique(np.array([str(label) for label in labels]), return_inverse=True)
    return np.eye(int(codes.max()) + 1)[codes] if codes.size else np.zeros((0, 0))


def _fit(y: NDArray[np.float64], *blocks: NDArray[np.float64]) -> tuple[float, int]:
    """Residual sum of squares and rank of the OLS fit of y on an intercept plus ``blocks``.

    Uses a least-squares solve that tolerates rank deficiency, so redundant indicator columns
    and empty cells of the design need no reference-level bookkeeping: the rank is the model's
    real number of parameters.
    """
    design = np.column_stack([np.ones_like(y), *blocks])
    coef, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    return float(resid @ resid), int(rank)


def two_factor_anova(
    values: ArrayLike,
    factor_a: Sequence[Any],
    factor_b: Sequence[Any],
    *,
    interaction: bool = True,
) -> TwoFactorResult:
    """Two-factor ANOVA of one value per case, e.g. accuracy per question by nation x task.

    Sums of squares are Type II, from OLS fits (Langsrud 2003, "ANOVA for unbalanced data: use
    Type II instead of Type III sums of squares", Stat. Comput. 13:163; Fox 2016, *Applied
    Regression Analysis and Generalized Linear Models*, 3rd ed., ch. 8), which respect
    marginality and remain meaningful in unbalanced designs::

        SS_A  = RSS(B)     - RSS(A + B)
        SS_B  = RSS(A)     - RSS(A + B)
        SS_AB = RSS(A + B) - RSS(A + B + A:B)
        SS_residual = RSS(A + B + A:B)

    (this is what ``statsmodels`` ``anova_lm(..., typ=2)`` reports). Degrees of freedom are the
    rank increments of the design, so empty cells are handled. Each ``eta_squared_*`` is
    SS_effect / SS_total with SS_total = sum (y - mean y)^2 (classical eta^2; Cohen 1988,
    ch. 8), which answers "how much of the variation is nation, how much is task"; see
    `TwoFactorResult` for why the shares need not add up to 1 in unbalanced designs.

    F tests use the residual mean square. With one case per cell the full model is saturated
    (no residual degrees of freedom), so every F and p is ``nan``; pass ``interaction=False`` to
    fit the additive model and test A and B against the interaction-plus-noise residual.
    ``eta_squared_*`` are ``nan`` when SS_total is 0.
    """
    y = _vector(values, "values")
    if not (len(factor_a) == len(factor_b) == y.size):
        raise ValueError(
            f"values, factor_a and factor_b differ in length: {y.size}, {len(factor_a)}, "
            f"{len(factor_b)}"
        )
    n = int(y.size)
    if n == 0:
        return TwoFactorResult(0, 0, 0, *([NAN] * 5), 0, 0, 0, 0, *([NAN] * 10))
    da, db = _dummies(factor_a), _dummies(factor_b)
    rss_a, rank_a = _fit(y, da)
    rss_b, rank_b = _fit(y, db)
    rss_ab, rank_ab = _fit(y, da, db)
    ss_a, df_a = rss_b - rss_ab, rank_ab - rank_b
    ss_b, df_b = rss_a - rss_ab, rank_ab - rank_a
    if interaction:
        cells = (da[:, :, None] * db[:, None, :]).reshape(n, -1)
        rss_full, rank_full = _fit(y, da, db, cells)
        ss_ab, df_ab = rss_ab - rss_full, rank_full - rank_ab
    else:
        rss_full, rank_full = rss_ab, rank_ab
        ss_ab, df_ab = NAN, 0
    ss_total = float(((y - y.mean()) ** 2).sum())

    def snap(ss: float) -> float:
        # Least squares leaves ~1e-30 where the exact answer is 0 (a null effect, a perfect
        # fit); without snapping, 1e-31 / 1e-32 would be reported as a large F.
        return 0.0 if ss <= _SS_RELATIVE_TOLERANCE * ss_total else ss

    ss_a, ss_b, rss_full = snap(ss_a), snap(ss_b), snap(rss_full)
    ss_ab = snap(ss_ab) if interaction else NAN
    df_resid = n - rank_full
    f_a, p_a = _f_test(ss_a, df_a, rss_full, df_resid)
    f_b, p_b = _f_test(ss_b, df_b, rss_full, df_resid)
    f_ab, p_ab = _f_test(ss_ab, df_ab, rss_full, df_resid) if interaction else (NAN, NAN)
    return TwoFactorResult(
        n=n,
        levels_a=int(da.shape[1]),
        levels_b=int(db.shape[1]),
        ss_a=ss_a,
        ss_b=ss_b,
        ss_interaction=ss_ab,
        ss_residual=rss_full,
        ss_total=ss_total,
        df_a=df_a,
        df_b=df_b,
        df_interaction=df_ab,
        df_residual=df_resid,
        eta_squared_a=_share(ss_a, ss_total),
        eta_squared_b=_share(ss_b, ss_total),
        eta_squared_interaction=_share(ss_ab, ss_total),
        eta_squared_residual=_share(rss_full, ss_total),
        f_a=f_a,
        p_a=p_a,
        f_b=f_b,
        p_b=p_b,
        f_interaction=f_ab,
        p_interaction=p_ab,
    )


# --------------------------------------------------------------------------------------------
# Multiple comparisons and system comparisons
# --------------------------------------------------------------------------------------------


def bonferroni(pvalues: Sequence[float]) -> list[float]:
    """Bonferroni-adjusted p-values: ``min(1, p * m)`` (Dunn 1961).

    ``m`` is the number of p-values that are not NaN: a NaN marks a test that could not be run
    (e.g. n < 2), which can produce no false positive, so it does not count towards m. NaN
    stays NaN. Controls the family-wise error rate at the nominal level for any dependence.
    """
    ps = [float(p) for p in pvalues]
    m = sum(1 for p in ps if not math.isnan(p))
    return [p if math.isnan(p) else min(1.0, p * m) for p in ps]


def compare_paired(
    a_values: Mapping[str, float],
    b_values: Mapping[str, float],
    *,
    a: str,
    b: str,
    metric: str,
    binary: bool = False,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedComparison:
    """Compare systems ``a`` and ``b`` on ``metric`` over the cases both were scored on.

    ``a_values``/``b_values`` map case id -> per-case value. Only the common case ids are used,
    in sorted order, so the result does not depend on the mappings' order. ``mean_diff`` is
    mean(a - b) with its paired bootstrap CI (`paired_bootstrap_ci`); the tests are
    `paired_ttest_p` and `wilcoxon_p`, the effect size `cohens_d_paired`. With ``binary=True``
    the values must be 0/1 (e.g. exact-match accuracy) and `mcnemar_exact` is added.
    ``p_bonferroni`` equals ``p_ttest``; `pairwise_comparisons` adjusts it.
    """
    common = sorted(set(a_values) & set(b_values))
    x = np.array([a_values[c] for c in common], dtype=np.float64)
    y = np.array([b_values[c] for c in common], dtype=np.float64)
    interval = paired_bootstrap_ci(x, y, resamples=resamples, confidence=confidence, seed=seed)
    p_ttest = paired_ttest_p(x, y)
    return PairedComparison(
        a=a,
        b=b,
        metric=metric,
        n=len(common),
        mean_diff=interval.mean,
        ci_low=interval.ci_low,
        ci_high=interval.ci_high,
        p_ttest=p_ttest,
        p_wilcoxon=wilcoxon_p(x, y),
        cohens_d=cohens_d_paired(x, y),
        p_bonferroni=p_ttest,
        p_mcnemar=mcnemar_exact(x, y).p if binary else None,
    )


def pairwise_comparisons(
    by_system: Mapping[str, Mapping[str, float]],
    *,
    metric: str,
    binary: bool = False,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[PairedComparison]:
    """`compare_paired` for every unordered pair of systems, Bonferroni-adjusted.

    ``by_system`` maps system name -> (case id -> value). Pairs are formed from the sorted
    system names with ``a < b``, in that order. ``p_bonferroni`` is `bonferroni` applied to the
    pairs' ``p_ttest`` values (m = number of pairs with a defined p-value), i.e. the family is
    "all pairwise comparisons on this metric"; the Wilcoxon and McNemar p-values are reported
    unadjusted. Every pair uses the same ``seed``, so pairs over the same cases are resampled
    with the same case indices (common random numbers).
    """
    names = sorted(by_system)
    results = [
        compare_paired(
            by_system[a],
            by_system[b],
            a=a,
            b=b,
            metric=metric,
            binary=binary,
            resamples=resamples,
            confidence=confidence,
            seed=seed,
        )
        for a, b in itertools.combinations(names, 2)
    ]
    adjusted = bonferroni([r.p_ttest for r in results])
    return [replace(r, p_bonferroni=p) for r, p in zip(results, adjusted, strict=True)]


# --------------------------------------------------------------------------------------------
# Suite-level regression gate
# --------------------------------------------------------------------------------------------


def _decimals(margin: float) -> int:
    """Enough decimals to print the margin exactly (at least 3), so messages never show 0.000."""
    decimals = 3
    while decimals < 8 and round(margin, decimals) != margin:
        decimals += 1
    return decimals


def significant_regression(
    current: Mapping[str, float],
    baseline: Mapping[str, float],
    *,
    metric: str,
    direction: str,
    margin: float,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> GateDecision:
    """Does ``current`` regress against ``baseline`` by more than ``margin``, significantly?

    Paired over the case ids present in both mappings (sorted), diff = current - baseline, with
    the percentile bootstrap CI of the mean diff (`paired_bootstrap_ci`). ``direction`` is
    ``"lower"`` when lower is better (e.g. ``cer``: a regression is a positive diff) or
    ``"higher"`` (e.g. ``structure_f1``: a regression is a negative diff). ``margin`` >= 0 is in
    metric units (0.005 for ``+0.5pp``).

    The gate fails only when the whole CI lies beyond the margin in the bad direction:
    ``ci_low > margin`` for lower-is-better, ``ci_high < -margin`` for higher-is-better. This is
    a one-sided test of H0: "the regression is at most ``margin``" at level
    ``(1 - confidence) / 2`` (an interval-inclusion test of the kind used for non-inferiority;
    Wellek 2010, *Testing Statistical Hypotheses of Equivalence and Noninferiority*, ch. 2), so
    noise alone rarely fails it while a real regression well beyond the margin does.

    A bound within 1e-9 of the margin counts as on it (floating-point noise of the
    subtraction), not beyond it. The gate never fails with fewer than 2 common cases: one
    case's bootstrap interval is degenerate and says nothing about significance (per-case gates
    still judge that case).
    """
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be 'lower' or 'higher', got {direction!r}")
    if not (math.isfinite(margin) and margin >= 0.0):
        raise ValueError(f"margin must be a finite number >= 0 in metric units, got {margin!r}")
    common = sorted(set(current) & set(baseline))
    n = len(common)
    cur = np.array([current[c] for c in common], dtype=np.float64)
    base = np.array([baseline[c] for c in common], dtype=np.float64)
    ci = paired_bootstrap_ci(cur, base, resamples=resamples, confidence=confidence, seed=seed)
    # "+ 0.0" turns -0.0 into 0.0 so a zero margin never prints as "-0.000".
    limit = (margin if direction == "lower" else -margin) + 0.0
    if n < 2 or not math.isfinite(ci.ci_low):
        failed = False
    elif direction == "lower":
        failed = ci.ci_low > margin + _MARGIN_SLACK
    else:
        failed = ci.ci_high < -margin - _MARGIN_SLACK

    d = _decimals(margin)
    level = f"{confidence * 100:g}% CI"
    if n == 0:
        message = f"{metric}: no cases in common with the baseline; significance gate not applied"
    elif n < 2 or not math.isfinite(ci.ci_low):
        message = (
            f"{metric}: mean change {ci.mean:+.{d}f} (n={n}) - too few cases with defined "
            f"values for a significance gate; not applied"
        )
    else:
        summary = (
            f"{metric}: mean change {ci.mean:+.{d}f} ({level} {ci.ci_low:+.{d}f} to "
            f"{ci.ci_high:+.{d}f}, n={n})"
        )
        verdict = "exceeds" if failed else "does not significantly exceed"
        message = f"{summary} {verdict} margin {limit:+.{d}f}"
    return GateDecision(
        metric=metric,
        direction=direction,
        margin=float(margin),
        mean_diff=ci.mean,
        ci_low=ci.ci_low,
        ci_high=ci.ci_high,
        n=n,
        failed=bool(failed),
        message=message,
    )
