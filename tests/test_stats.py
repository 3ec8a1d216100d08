"""Tests of `pytest_doceval.stats`.

Every statistic is checked against an independent computation on fixed data: scipy.stats,
statsmodels, or a closed form worked out by hand. Property-based tests (hypothesis) check the
invariants reports rely on, and that every result is made of builtin types (pytest-xdist's
serialiser rejects numpy scalars).
"""

from __future__ import annotations

import math
import pickle
import re
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_doceval import stats

# Fixed data: per-case CER of two systems on 12 cases (b is a little worse on most cases).
CER_A = [0.12, 0.05, 0.30, 0.08, 0.15, 0.02, 0.22, 0.09, 0.11, 0.40, 0.07, 0.18]
CER_B = [0.14, 0.06, 0.29, 0.11, 0.19, 0.02, 0.27, 0.10, 0.15, 0.47, 0.06, 0.21]

FAST = settings(max_examples=40, deadline=None)
finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


def assert_builtin(value: Any) -> None:
    """Every leaf is exactly a builtin type (np.float64 subclasses float, so use `type`)."""
    if is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            assert_builtin(getattr(value, f.name))
        assert_builtin(value.to_dict())
    elif isinstance(value, dict):
        for k, v in value.items():
            assert type(k) is str
            assert_builtin(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            assert_builtin(v)
    else:
        assert type(value) in (float, int, bool, str, type(None)), (value, type(value))


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
    monkeypatch.setattr(stats, "_MAX_CHUNK_ENTRIES", budget)
    assert stats.bootstrap_mean_ci(x, resamples=1000, seed=5) == whole


def test_chunks_stay_within_the_memory_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, ...]] = []
    original = stats._index_chunks

    def spy(n: int, resamples: int, seed: int):  # type: ignore[no-untyped-def]
        for chunk in original(n, resamples, seed):
            seen.append(chunk.shape)
            yield chunk

    monkeypatch.setattr(stats, "_index_chunks", spy)
    x = np.random.default_rng(0).random(1000)
    stats.bootstrap_mean_ci(x, resamples=5000)
    assert sum(rows for rows, _ in seen) == 5000
    assert len(seen) > 1
    assert max(rows * cols for rows, cols in seen) <= stats._MAX_CHUNK_ENTRIES


def test_constant_vector_gives_degenerate_interval() -> None:
    ci = stats.bootstrap_mean_ci([0.1] * 7)
    assert ci.ci_low == ci.mean == ci.ci_high
    assert ci.mean == pytest.approx(0.1)


def test_empty_and_single_case() -> None:
    empty = stats.bootstrap_mean_ci([])
    assert empty.n == 0
    assert all(math.isnan(v) for v in (empty.mean, empty.ci_low, empty.ci_high))
    single = stats.bootstrap_mean_ci([0.25])
    assert single == stats.Interval(0.25, 0.25, 0.25, 1)


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


def test_cohens_d_independent_closed_form() -> None:
    # Means 2 and 5, both variances 1, pooled sd 1.
    assert stats.cohens_d_independent([1, 2, 3], [4, 5, 6]) == pytest.approx(-3.0)
    a, b = np.array([0.1, 0.4, 0.35, 0.2]), np.array([0.5, 0.6, 0.45, 0.7, 0.65, 0.5])
    pooled = math.sqrt((3 * a.var(ddof=1) + 5 * b.var(ddof=1)) / 8)
    assert stats.cohens_d_independent(a, b) == pytest.approx((a.mean() - b.mean()) / pooled)
    assert stats.cohens_d_independent([1, 1], [1, 1, 1]) == 0.0
    assert stats.cohens_d_independent([2, 2], [1, 1]) == math.inf
    assert math.isnan(stats.cohens_d_independent([], [1, 2]))
    assert math.isnan(stats.cohens_d_independent([1], [2]))


# ---------------------------------------------------------------------------------------------
# Binary outcomes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("only_a", "only_b", "both", "neither"),
    [(8, 2, 20, 5), (0, 6, 10, 1), (3, 3, 4, 4), (15, 4, 0, 0), (1, 0, 7, 2)],
)
def test_mcnemar_matches_statsmodels(only_a: int, only_b: int, both: int, neither: int) -> None:
    from statsmodels.stats.contingency_tables import mcnemar

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


# ---------------------------------------------------------------------------------------------
# ANOVA
# ---------------------------------------------------------------------------------------------

GROUPS = {
    "de": [0.81, 0.77, 0.90, 0.85, 0.79],
    "fr": [0.70, 0.74, 0.69, 0.80],
    "ko": [0.60, 0.66, 0.71, 0.58, 0.62, 0.65],
}


def test_one_way_anova_matches_scipy_and_hand_eta_squared() -> None:
    result = stats.one_way_anova(GROUPS)
    reference = sps.f_oneway(*GROUPS.values())
    assert result.f == pytest.approx(reference.statistic)
    assert result.p == pytest.approx(reference.pvalue)
    assert (result.df_between, result.df_within) == (2, 12)
    everything = np.concatenate([np.array(g) for g in GROUPS.values()])
    grand = everything.mean()
    ss_between = sum(len(g) * (np.mean(g) - grand) ** 2 for g in GROUPS.values())
    ss_total = ((everything - grand) ** 2).sum()
    assert result.eta_squared == pytest.approx(ss_between / ss_total)


def test_one_way_anova_edge_cases() -> None:
    one = stats.one_way_anova({"a": [1.0, 2.0, 3.0], "empty": []})
    assert math.isnan(one.f) and math.isnan(one.p) and one.df_between == 0
    assert one.eta_squared == 0.0
    constant = stats.one_way_anova({"a": [1.0, 1.0], "b": [2.0, 2.0]})
    assert (constant.f, constant.p, constant.eta_squared) == (math.inf, 0.0, 1.0)
    same = stats.one_way_anova({"a": [1.0, 1.0], "b": [1.0, 1.0]})
    assert math.isnan(same.f) and math.isnan(same.eta_squared)
    assert math.isnan(stats.one_way_anova({}).f)


def _two_factor_data(balanced: bool) -> tuple[np.ndarray, list[str], list[str]]:
    rng = np.random.default_rng(7)
    nations, tasks = ["de", "fr", "ko"], ["form", "table"]
    counts = [[6, 6], [6, 6], [6, 6]] if balanced else [[3, 9], [7, 4], [5, 8]]
    a, b, y = [], [], []
    for i, nation in enumerate(nations):
        for j, task in enumerate(tasks):
            for _ in range(counts[i][j]):
                a.append(nation)
                b.append(task)
                y.append(0.7 + 0.08 * i - 0.05 * j + 0.04 * i * j + rng.normal(0, 0.05))
    return np.array(y), a, b


@pytest.mark.parametrize("balanced", [True, False])
def test_two_factor_anova_matches_statsmodels_type2(balanced: bool) -> None:
    pd = pytest.importorskip("pandas")
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    y, a, b = _two_factor_data(balanced)
    result = stats.two_factor_anova(y, a, b)
    frame = pd.DataFrame({"y": y, "a": a, "b": b})
    table = anova_lm(smf.ols("y ~ C(a) * C(b)", data=frame).fit(), typ=2)
    rows = {"a": "C(a)", "b": "C(b)", "interaction": "C(a):C(b)", "residual": "Residual"}
    ss_total = ((y - y.mean()) ** 2).sum()
    for name, row in rows.items():
        ss = getattr(result, f"ss_{name}")
        assert ss == pytest.approx(table.loc[row, "sum_sq"], rel=1e-9, abs=1e-12)
        assert getattr(result, f"df_{name}") == int(table.loc[row, "df"])
        assert getattr(result, f"eta_squared_{name}") == pytest.approx(ss / ss_total)
        if name != "residual":
            assert getattr(result, f"f_{name}") == pytest.approx(table.loc[row, "F"])
            assert getattr(result, f"p_{name}") == pytest.approx(table.loc[row, "PR(>F)"])
    shares = (
        result.eta_squared_a
        + result.eta_squared_b
        + result.eta_squared_interaction
        + result.eta_squared_residual
    )
    if balanced:
        assert shares == pytest.approx(1.0)
    assert (result.n, result.levels_a, result.levels_b) == (len(y), 3, 2)


def test_two_factor_additive_model_matches_statsmodels() -> None:
    pd = pytest.importorskip("pandas")
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    y, a, b = _two_factor_data(balanced=False)
    result = stats.two_factor_anova(y, a, b, interaction=False)
    frame = pd.DataFrame({"y": y, "a": a, "b": b})
    table = anova_lm(smf.ols("y ~ C(a) + C(b)", data=frame).fit(), typ=2)
    assert result.f_a == pytest.approx(table.loc["C(a)", "F"])
    assert result.p_b == pytest.approx(table.loc["C(b)", "PR(>F)"])
    assert result.df_residual == int(table.loc["Residual", "df"])
    assert math.isnan(result.ss_interaction) and math.isnan(result.eta_squared_interaction)


def test_two_factor_pure_main_effect_by_hand() -> None:
    # y depends on the nation only, balanced, no noise within a nation: all variance is nation.
    a = ["x", "x", "y", "y"] * 2
    b = ["p", "q", "p", "q"] * 2
    y = [1.0, 1.0, 3.0, 3.0] * 2
    result = stats.two_factor_anova(y, a, b)
    assert result.eta_squared_a == pytest.approx(1.0)
    assert result.eta_squared_b == pytest.approx(0.0, abs=1e-12)
    assert result.ss_total == pytest.approx(8.0)
    assert (result.f_a, result.p_a) == (math.inf, 0.0)


def test_two_factor_saturated_and_invalid() -> None:
    saturated = stats.two_factor_anova([1.0, 2.0, 3.0, 5.0], ["x", "x", "y", "y"], "pqpq")
    assert saturated.df_residual == 0
    assert math.isnan(saturated.f_a) and math.isnan(saturated.p_interaction)
    assert stats.two_factor_anova([], [], []).n == 0
    with pytest.raises(ValueError, match="differ in length"):
        stats.two_factor_anova([1.0, 2.0], ["x"], ["p", "q"])


def test_bonferroni_matches_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    ps = [0.001, 0.02, 0.04, 0.3, 0.9]
    assert stats.bonferroni(ps) == pytest.approx(list(multipletests(ps, method="bonferroni")[1]))
    adjusted = stats.bonferroni([0.01, float("nan"), 0.2])
    assert adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.4)
    assert math.isnan(adjusted[1])
    assert stats.bonferroni([]) == []


# ---------------------------------------------------------------------------------------------
# System comparisons
# ---------------------------------------------------------------------------------------------


def _by_case(values: list[float], prefix: str = "case") -> dict[str, float]:
    return {f"{prefix}{i:02d}": v for i, v in enumerate(values)}


def test_compare_paired_uses_common_sorted_cases() -> None:
    a = _by_case(CER_A)
    b = _by_case(CER_B)
    b["only-in-b"] = 0.9
    a["only-in-a"] = 0.0
    result = stats.compare_paired(a, b, a="pymupdf", b="rapidocr", metric="cer")
    assert result.n == 12
    assert result.mean_diff == pytest.approx(np.mean(np.array(CER_A) - np.array(CER_B)))
    assert result.p_ttest == pytest.approx(sps.ttest_rel(CER_A, CER_B).pvalue)
    # (scipy agreement of the Wilcoxon p-value is `test_wilcoxon_matches_scipy`'s job: scipy takes
    # seconds on 12 cases with a zero difference.)
    assert result.p_wilcoxon == stats.wilcoxon_p(CER_A, CER_B)
    assert result.p_bonferroni == result.p_ttest
    assert result.p_mcnemar is None
    assert "p_mcnemar" not in result.to_dict()
    shuffled = dict(reversed(list(a.items())))
    again = stats.compare_paired(shuffled, b, a="pymupdf", b="rapidocr", metric="cer")
    assert again == result


def test_compare_paired_binary_adds_mcnemar() -> None:
    a = _by_case([1, 1, 1, 0, 1, 1, 0, 1, 1, 1])
    b = _by_case([0, 1, 0, 0, 1, 0, 0, 1, 0, 1])
    result = stats.compare_paired(a, b, a="x", b="y", metric="exact_match", binary=True)
    assert result.p_mcnemar == pytest.approx(stats.binomial_test_p(4, 4))
    assert result.to_dict()["p_mcnemar"] == result.p_mcnemar


def test_compare_paired_without_common_cases() -> None:
    result = stats.compare_paired({"x": 1.0}, {"y": 1.0}, a="a", b="b", metric="cer")
    assert result.n == 0
    assert math.isnan(result.mean_diff) and math.isnan(result.p_ttest)


def test_pairwise_comparisons_bonferroni_over_pairs() -> None:
    rng = np.random.default_rng(8)
    base = rng.uniform(0.05, 0.3, size=20)
    systems = {
        "zeta": _by_case(list(base + rng.normal(0.03, 0.02, 20))),
        "alpha": _by_case(list(base)),
        "mid": _by_case(list(base + rng.normal(0.0, 0.02, 20))),
    }
    results = stats.pairwise_comparisons(systems, metric="cer")
    assert [(r.a, r.b) for r in results] == [("alpha", "mid"), ("alpha", "zeta"), ("mid", "zeta")]
    for r in results:
        single = stats.compare_paired(systems[r.a], systems[r.b], a=r.a, b=r.b, metric="cer")
        assert r.p_ttest == single.p_ttest
        assert r.p_bonferroni == pytest.approx(min(1.0, 3 * r.p_ttest))


# ---------------------------------------------------------------------------------------------
# Suite gate
# ---------------------------------------------------------------------------------------------

MESSAGE = re.compile(
    r"^cer: mean change \+0\.\d{3} \(95% CI \+0\.\d{3} to \+0\.\d{3}, n=50\) "
    r"exceeds margin \+0\.005$"
)


def _suite(shift: float, noise: float, seed: int = 0) -> tuple[dict[str, float], ...]:
    rng = np.random.default_rng(seed)
    baseline = rng.beta(2, 30, size=50)
    current = baseline + shift + rng.normal(0, noise, size=50)
    return _by_case(list(current)), _by_case(list(baseline))


def test_gate_fails_on_clear_regression_with_readable_message() -> None:
    current, baseline = _suite(0.02, 0.01)
    decision = stats.significant_regression(
        current, baseline, metric="cer", direction="lower", margin=0.005
    )
    assert decision.failed
    assert decision.ci_low > 0.005
    assert MESSAGE.match(decision.message), decision.message
    assert decision.n == 50


def test_gate_passes_without_change_and_on_improvement() -> None:
    current, baseline = _suite(0.0, 0.01)
    decision = stats.significant_regression(
        current, baseline, metric="cer", direction="lower", margin=0.005
    )
    assert not decision.failed
    assert "does not significantly exceed margin +0.005" in decision.message
    better, baseline = _suite(-0.05, 0.01)
    assert not stats.significant_regression(
        better, baseline, metric="cer", direction="lower", margin=0.005
    ).failed


def test_gate_higher_is_better() -> None:
    worse, baseline = _suite(-0.03, 0.01)
    decision = stats.significant_regression(
        worse, baseline, metric="structure_f1", direction="higher", margin=0.005
    )
    assert decision.failed and decision.ci_high < -0.005
    assert decision.message.endswith("exceeds margin -0.005")
    regressed_cer, baseline = _suite(0.03, 0.01)
    assert not stats.significant_regression(
        regressed_cer, baseline, metric="f1", direction="higher", margin=0.005
    ).failed


@pytest.mark.parametrize(("shift", "failed"), [(0.004, False), (0.005, False), (0.006, True)])
def test_gate_boundary_with_constant_shift(shift: float, failed: bool) -> None:
    baseline = _by_case([0.1, 0.2, 0.3, 0.25])
    current = {k: v + shift for k, v in baseline.items()}
    decision = stats.significant_regression(
        current, baseline, metric="cer", direction="lower", margin=0.005
    )
    assert decision.failed is failed


def test_gate_needs_two_cases_and_valid_arguments() -> None:
    one = stats.significant_regression(
        {"a": 0.9}, {"a": 0.1}, metric="cer", direction="lower", margin=0.005
    )
    assert not one.failed and "too few" in one.message
    none = stats.significant_regression(
        {"a": 0.9}, {"b": 0.1}, metric="cer", direction="lower", margin=0.005
    )
    assert not none.failed and none.n == 0 and "no cases in common" in none.message
    with pytest.raises(ValueError, match="direction"):
        stats.significant_regression({}, {}, metric="cer", direction="down", margin=0.005)
    with pytest.raises(ValueError, match="margin"):
        stats.significant_regression({}, {}, metric="cer", direction="lower", margin=-0.01)


def test_gate_message_shows_small_margins() -> None:
    baseline = _by_case([0.1, 0.2, 0.3])
    current = {k: v + 0.001 for k, v in baseline.items()}
    decision = stats.significant_regression(
        current, baseline, metric="cer", direction="lower", margin=0.0005
    )
    assert decision.failed
    assert decision.message.endswith("exceeds margin +0.0005")


# ---------------------------------------------------------------------------------------------
# Serialisation and properties
# ---------------------------------------------------------------------------------------------


def test_every_result_is_builtin_and_picklable() -> None:
    a, b = _by_case(CER_A), _by_case(CER_B)
    y, fa, fb = _two_factor_data(balanced=False)
    results: list[Any] = [
        stats.bootstrap_mean_ci(CER_A),
        stats.bootstrap_ratio_ci(CER_A, CER_B),
        stats.paired_bootstrap_ci(CER_A, CER_B),
        stats.paired_ttest_p(CER_A, CER_B),
        stats.wilcoxon_p(CER_A, CER_B),
        stats.cohens_d_paired(CER_A, CER_B),
        stats.cohens_d_independent(CER_A, CER_B),
        stats.mcnemar_exact([1, 0, 1, 1], [0, 0, 1, 0]),
        stats.binomial_test_p(3, 10),
        stats.one_way_anova(GROUPS),
        stats.two_factor_anova(y, fa, fb),
        stats.two_factor_anova(y, fa, fb, interaction=False),
        stats.bonferroni([0.01, 0.5]),
        stats.compare_paired(a, b, a="x", b="y", metric="cer"),
        stats.pairwise_comparisons({"x": a, "y": b, "z": a}, metric="cer"),
        stats.significant_regression(a, b, metric="cer", direction="lower", margin=0.005),
        stats.bootstrap_mean_ci([]),
        stats.one_way_anova({}),
        stats.two_factor_anova([], [], []),
    ]
    for result in results:
        assert_builtin(result)
        # repr, not ==: NaN fields never compare equal.
        assert repr(pickle.loads(pickle.dumps(result))) == repr(result)


@FAST
@given(st.lists(finite, min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_property_mean_inside_interval(values: list[float], seed: int) -> None:
    ci = stats.bootstrap_mean_ci(values, resamples=200, seed=seed)
    assert ci.ci_low <= ci.mean <= ci.ci_high
    assert min(values) - 1e-9 <= ci.ci_low and ci.ci_high <= max(values) + 1e-9
    assert_builtin(ci)


@FAST
@given(st.lists(finite, min_size=0, max_size=30))
def test_property_paired_with_itself_is_zero(values: list[float]) -> None:
    ci = stats.paired_bootstrap_ci(values, values, resamples=200)
    if values:
        assert (ci.mean, ci.ci_low, ci.ci_high) == (0.0, 0.0, 0.0)
        if len(values) >= 2:
            assert stats.paired_ttest_p(values, values) == 1.0
            assert stats.wilcoxon_p(values, values) == 1.0
            assert stats.cohens_d_paired(values, values) == 0.0


@FAST
@given(
    st.lists(st.tuples(finite, finite), min_size=2, max_size=25),
    st.booleans(),
)
def test_property_swapping_systems_negates_difference(
    pairs: list[tuple[float, float]], shuffle: bool
) -> None:
    a = {f"c{i}": x for i, (x, _) in enumerate(pairs)}
    b = {f"c{i}": y for i, (_, y) in enumerate(pairs)}
    if shuffle:
        a = dict(reversed(list(a.items())))
    ab = stats.compare_paired(a, b, a="a", b="b", metric="m", resamples=200)
    ba = stats.compare_paired(b, a, a="b", b="a", metric="m", resamples=200)
    assert ba.mean_diff == -ab.mean_diff
    scale = 1e-9 * (1 + max(abs(v) for pair in pairs for v in pair))
    assert ba.ci_low == pytest.approx(-ab.ci_high, abs=scale)
    assert ba.ci_high == pytest.approx(-ab.ci_low, abs=scale)
    assert ba.p_ttest == pytest.approx(ab.p_ttest, nan_ok=True)
    assert ba.p_wilcoxon == pytest.approx(ab.p_wilcoxon, nan_ok=True)
    assert ba.cohens_d == pytest.approx(-ab.cohens_d, nan_ok=True)
    assert_builtin(ab)
    assert_builtin(ba)


@FAST
@given(st.lists(st.one_of(st.floats(0, 1), st.just(float("nan"))), max_size=12))
def test_property_bonferroni_bounds(ps: list[float]) -> None:
    adjusted = stats.bonferroni(ps)
    assert len(adjusted) == len(ps)
    for p, q in zip(ps, adjusted, strict=True):
        if math.isnan(p):
            assert math.isnan(q)
        else:
            assert p <= q <= 1.0
            assert type(q) is float


@FAST
@given(
    st.lists(st.tuples(st.booleans(), st.booleans()), max_size=40),
)
def test_property_mcnemar_counts_and_symmetry(pairs: list[tuple[bool, bool]]) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    ab, ba = stats.mcnemar_exact(a, b), stats.mcnemar_exact(b, a)
    assert (ab.only_a, ab.only_b) == (ba.only_b, ba.only_a)
    assert ab.p == pytest.approx(ba.p)
    assert 0.0 <= ab.p <= 1.0
    assert_builtin(ab)


@FAST
@given(
    st.lists(st.tuples(finite, finite), min_size=0, max_size=20),
    st.sampled_from(["lower", "higher"]),
    st.floats(0, 1),
)
def test_property_gate_consistent_with_its_interval(
    pairs: list[tuple[float, float]], direction: str, margin: float
) -> None:
    current = {f"c{i}": x for i, (x, _) in enumerate(pairs)}
    baseline = {f"c{i}": y for i, (_, y) in enumerate(pairs)}
    d = stats.significant_regression(
        current, baseline, metric="m", direction=direction, margin=margin, resamples=200
    )
    slack = stats._MARGIN_SLACK
    beyond = d.ci_low > margin + slack if direction == "lower" else d.ci_high < -margin - slack
    assert d.failed == (beyond and d.n >= 2)
    assert_builtin(d)
