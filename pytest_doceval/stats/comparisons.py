"""Paired changes: one condition against another over the same cases (`paired_change`, the one
home of a paired difference's record), system against system over common cases
(`compare_paired`), Bonferroni over pairs."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pytest_doceval.stats._common import DictMixin
from pytest_doceval.stats.contingency import mcnemar_exact
from pytest_doceval.stats.interval import Interval
from pytest_doceval.stats.intervals import paired_interval
from pytest_doceval.stats.paired_tests import cohens_d_paired, paired_ttest_p, wilcoxon_p
from pytest_doceval.stats.power import paired_mde


def verdict(ci_low: float, ci_high: float, direction: str, margin: float = 0.0) -> str:
    """``worse`` / ``better`` when the CI of a change lies entirely beyond `margin` in the
    metric's bad / good direction, else ``unchanged``."""
    if direction == "lower":
        return "worse" if ci_low > margin else "better" if ci_high < -margin else "unchanged"
    return "worse" if ci_high < -margin else "better" if ci_low > margin else "unchanged"


@dataclass(frozen=True)
class PairedChange(DictMixin):
    """``a - b`` over the same cases (``a[i]``, ``b[i]`` one case): the two means, the mean
    difference with its interval (``ci_low``, ``ci_high`` made by ``method``), the paired t and
    Wilcoxon p-values, Cohen's d_z, the minimum detectable effect at 80% power (``mde``,
    two-sided at ``alpha``; McNemar's for binary values) and, for binary (0/1) values, the
    exact McNemar test (``p_mcnemar``; ``only_a`` / ``only_b`` the discordant cases), else
    None. Every paired comparison in a report is one of these: baseline deltas, system pairs,
    a kind's conditions (exam tracks, OCR variants)."""

    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    ci_low: float
    ci_high: float
    method: str
    p_ttest: float
    p_wilcoxon: float
    cohens_d: float
    mde: float
    p_mcnemar: float | None
    only_a: int | None
    only_b: int | None


def paired_change(
    a: Sequence[float] | np.ndarray[Any, Any],
    b: Sequence[float] | np.ndarray[Any, Any],
    *,
    binary: bool = False,
    alpha: float = 0.05,
    interval: Interval | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedChange:
    """The `PairedChange` of `a` against `b`. Its interval is `paired_interval`'s default
    (the t interval of the differences) unless the caller passes the ``interval`` its
    analysis specifies (seed 001's delta table: the paired percentile bootstrap,
    `paired_bootstrap_ci`); the interval's mean is then the mean difference."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if interval is None:
        interval = paired_interval(x, y, resamples=resamples, confidence=confidence, seed=seed)
    mcnemar = mcnemar_exact(x, y) if binary else None
    return PairedChange(
        n=interval.n,
        mean_a=float(x.mean()) if x.size else float("nan"),
        mean_b=float(y.mean()) if y.size else float("nan"),
        mean_diff=interval.mean,
        ci_low=interval.ci_low,
        ci_high=interval.ci_high,
        method=interval.method,
        p_ttest=paired_ttest_p(x, y),
        p_wilcoxon=wilcoxon_p(x, y),
        cohens_d=cohens_d_paired(x, y),
        mde=paired_mde(x, y, binary=binary, alpha=alpha),
        p_mcnemar=None if mcnemar is None else mcnemar.p,
        only_a=None if mcnemar is None else mcnemar.only_a,
        only_b=None if mcnemar is None else mcnemar.only_b,
    )


@dataclass(frozen=True)
class PairedComparison(DictMixin):
    """System ``a`` against system ``b`` on one metric, paired over the cases both were run on.

    ``mean_diff`` is mean(a - b) with its confidence interval (``ci_low``, ``ci_high``) made by
    ``method`` (see `paired_interval`); ``p_ttest`` is the paired t-test, ``p_wilcoxon`` the
    Wilcoxon signed-rank test, ``cohens_d`` is d_z of the differences, ``p_bonferroni`` is
    ``p_ttest`` adjusted for the number of comparisons made on this metric (equal to
    ``p_ttest`` for a single comparison), ``mde`` the smallest difference the comparison
    detects with 80% power (two-sided at 1 - confidence, unadjusted), and ``p_mcnemar`` is
    the exact McNemar p-value for binary (0/1) metrics, else ``None``.
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
    method: str
    mde: float
    p_mcnemar: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        if data["p_mcnemar"] is None:
            del data["p_mcnemar"]
        return data


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
    method: str | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedComparison:
    """Compare systems ``a`` and ``b`` on ``metric`` over the cases both were scored on.

    ``a_values``/``b_values`` map case id -> per-case value. Only the common case ids are used,
    in sorted order, so the result does not depend on the mappings' order. ``mean_diff`` is
    mean(a - b) with the CI of `paired_interval` (``method=None``: its measured default, the t
    interval; pass ``method`` to force another); the tests are `paired_ttest_p` and
    `wilcoxon_p`, the effect size `cohens_d_paired`. With ``binary=True`` the values must be
    0/1 (e.g. exact-match accuracy) and `mcnemar_exact` is added. ``p_bonferroni`` equals
    ``p_ttest``; `pairwise_comparisons` adjusts it.
    """
    common = sorted(set(a_values) & set(b_values))
    x = np.array([a_values[c] for c in common], dtype=np.float64)
    y = np.array([b_values[c] for c in common], dtype=np.float64)
    interval = paired_interval(
        x, y, method=method, resamples=resamples, confidence=confidence, seed=seed
    )
    change = paired_change(x, y, binary=binary, alpha=1 - confidence, interval=interval)
    return PairedComparison(
        a=a,
        b=b,
        metric=metric,
        n=len(common),
        mean_diff=change.mean_diff,
        ci_low=change.ci_low,
        ci_high=change.ci_high,
        p_ttest=change.p_ttest,
        p_wilcoxon=change.p_wilcoxon,
        cohens_d=change.cohens_d,
        p_bonferroni=change.p_ttest,
        method=change.method,
        mde=change.mde,
        p_mcnemar=change.p_mcnemar,
    )


def pairwise_comparisons(
    by_system: Mapping[str, Mapping[str, float]],
    *,
    metric: str,
    binary: bool = False,
    method: str | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[PairedComparison]:
    """`compare_paired` for every unordered pair of systems, Bonferroni-adjusted.

    ``by_system`` maps system name -> (case id -> value). Pairs are formed from the sorted
    system names with ``a < b``, in that order. ``p_bonferroni`` is `bonferroni` applied to the
    pairs' ``p_ttest`` values (m = number of pairs with a defined p-value), i.e. the family is
    "all pairwise comparisons on this metric"; the Wilcoxon and McNemar p-values are reported
    unadjusted, and so are the intervals. Every pair uses the same ``seed``, so a resampling
    ``method`` resamples pairs over the same cases with the same case indices (common random
    numbers).
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
            method=method,
            resamples=resamples,
            confidence=confidence,
            seed=seed,
        )
        for a, b in itertools.combinations(names, 2)
    ]
    adjusted = bonferroni([r.p_ttest for r in results])
    return [replace(r, p_bonferroni=p) for r, p in zip(results, adjusted, strict=True)]
