"""Tests of the paired tests, effect sizes and binary-outcome tests of `pytest_doceval.stats`.

t-test, Wilcoxon signed-rank, Cohen's d, McNemar, binomial.

See tests/stats_support.py for the conventions shared by the stats tests.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar  # type: ignore[import-untyped]

from pytest_doceval import stats
from tests.stats_support import CER_A, CER_B

# ---------------------------------------------------------------------------------------------


def test_paired_ttest_matches_scipy() -> None:
    assert stats.paired_ttest_p(CER_A, CER_B) == pytest.approx(
        sps.ttest_rel(CER_A, CER_B).pvalue, rel=1e-12
    )
    x = np.random.default_rng(1).normal(size=30)
    y = x + np.random.default_rng(2).normal(0.1, 1, size=30)
    assert stats.paired_ttest_p(x, y) == pytest.approx(sps.ttest_rel(x, y).pvalue, rel=1e-12)


def test_paired_ttest_edge_cases() -> None:
    assert stats.paired_ttest_p([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]) == 1.0
    assert math.isnan(stats.paired_ttest_p([0.1], [0.2]))
    assert math.isnan(stats.paired_ttest_p([], []))
    assert stats.paired_ttest_p([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]) == 0.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # No ties, no zeros, n <= 50: scipy's exact distribution.
        (np.random.default_rng(3).normal(size=30), np.random.default_rng(4).normal(size=30)),
        # n > 50: normal approximation.
        (np.random.default_rng(3).normal(size=80), np.random.default_rng(4).normal(size=80)),
        # Ties and a zero difference, n <= 13: exact sign-flip permutation test (`wilcoxon_p`
        # computes it vectorised; scipy loops, so keep n small here).
        ([0.3, 0.2, 0.4, 0.1, 0.5, 0.2, 0.6, 0.3], [0.1, 0.2, 0.2, 0.3, 0.2, 0.5, 0.1, 0.4]),
        # Ties, n > 13: normal approximation with tie correction.
        ([0.1, 0.2, 0.3] * 6, [0.2, 0.2, 0.5] * 5 + [0.0, 0.1, 0.1]),
    ],
)
def test_wilcoxon_matches_scipy(a: Any, b: Any) -> None:
    assert stats.wilcoxon_p(a, b) == pytest.approx(sps.wilcoxon(a, b).pvalue, rel=1e-12)


def test_wilcoxon_exact_closed_form() -> None:
    # All n differences positive and distinct: only the all-plus and all-minus sign patterns are
    # as extreme, so the exact two-sided p is 2 / 2**n.
    assert stats.wilcoxon_p([1, 2, 3, 4, 5], [0, 0, 0, 0, 0]) == pytest.approx(2 / 2**5)
    assert stats.wilcoxon_p([0, 0, 0, 0, 0, 0], [1, 2, 3, 4, 5, 6]) == pytest.approx(2 / 2**6)


def test_wilcoxon_edge_cases() -> None:
    assert stats.wilcoxon_p([0.2, 0.3, 0.4], [0.2, 0.3, 0.4]) == 1.0
    assert math.isnan(stats.wilcoxon_p([0.2], [0.3]))
    assert math.isnan(stats.wilcoxon_p([0.2, float("nan")], [0.3, 0.1]))


def test_cohens_d_paired_closed_form() -> None:
    # Differences 1, 2, 3: mean 2, sd (ddof=1) 1.
    assert stats.cohens_d_paired([2, 4, 6], [1, 2, 3]) == pytest.approx(2.0)
    d = np.array(CER_A) - np.array(CER_B)
    assert stats.cohens_d_paired(CER_A, CER_B) == pytest.approx(d.mean() / d.std(ddof=1))
    assert stats.cohens_d_paired([1, 2, 3], [1, 2, 3]) == 0.0
    assert stats.cohens_d_paired([2, 3, 4], [1, 2, 3]) == math.inf
    assert stats.cohens_d_paired([1, 2, 3], [2, 3, 4]) == -math.inf
    assert math.isnan(stats.cohens_d_paired([1], [2]))


# ---------------------------------------------------------------------------------------------
# Binary outcomes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("only_a", "only_b", "both", "neither"),
    [(8, 2, 20, 5), (0, 6, 10, 1), (3, 3, 4, 4), (15, 4, 0, 0), (1, 0, 7, 2)],
)
def test_mcnemar_matches_statsmodels(only_a: int, only_b: int, both: int, neither: int) -> None:

    a = [1] * only_a + [0] * only_b + [1] * both + [0] * neither
    b = [0] * only_a + [1] * only_b + [1] * both + [0] * neither
    result = stats.mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (only_a, only_b)
    table = [[both, only_a], [only_b, neither]]
    assert result.p == pytest.approx(mcnemar(table, exact=True).pvalue)


def test_mcnemar_edge_cases() -> None:
    assert stats.mcnemar_exact([1, 0, 1], [1, 0, 1]) == stats.McNemarResult(0, 0, 1.0)
    assert stats.mcnemar_exact([], []) == stats.McNemarResult(0, 0, 1.0)
    assert stats.mcnemar_exact([True, False], [False, False]).only_a == 1
    with pytest.raises(ValueError, match="0/1"):
        stats.mcnemar_exact([0.5, 1], [1, 1])
    with pytest.raises(ValueError, match="differ in length"):
        stats.mcnemar_exact([1, 0], [1])


def test_binomial_closed_form_and_scipy() -> None:
    # P(X >= 9) = P(X <= 1) = 11/1024 for Binomial(10, 1/2); two-sided doubles it.
    assert stats.binomial_test_p(9, 10) == pytest.approx(22 / 1024)
    assert stats.binomial_test_p(9, 10, alternative="greater") == pytest.approx(11 / 1024)
    assert stats.binomial_test_p(9, 10, alternative="less") == pytest.approx(1 - 1 / 1024)
    assert stats.binomial_test_p(5, 10) == 1.0
    expected = sps.binomtest(7, 40, 0.3).pvalue
    assert stats.binomial_test_p(7, 40, p=0.3) == pytest.approx(expected)


def test_binomial_edge_cases() -> None:
    assert math.isnan(stats.binomial_test_p(0, 0))
    for bad in [(3, 2), (-1, 4), (1.5, 4)]:
        with pytest.raises(ValueError):
            stats.binomial_test_p(*bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        stats.binomial_test_p(1, 4, p=1.5)
    with pytest.raises(ValueError):
        stats.binomial_test_p(1, 4, alternative="two")
