"""Tests of the ANOVA and Bonferroni functions of `pytest_doceval.stats`.

See tests/stats_support.py for the conventions shared by the stats tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.formula.api as smf  # type: ignore[import-untyped]
from scipy import stats as sps
from statsmodels.stats.anova import anova_lm  # type: ignore[import-untyped]
from statsmodels.stats.multitest import multipletests  # type: ignore[import-untyped]

from pytest_doceval import stats
from tests.stats_support import GROUPS, two_factor_data

# ---------------------------------------------------------------------------------------------
# ANOVA
# ---------------------------------------------------------------------------------------------


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


@pytest.mark.parametrize("balanced", [True, False])
def test_two_factor_anova_matches_statsmodels_type2(balanced: bool) -> None:
    pd = pytest.importorskip("pandas")

    y, a, b = two_factor_data(balanced)
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

    y, a, b = two_factor_data(balanced=False)
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

    ps = [0.001, 0.02, 0.04, 0.3, 0.9]
    assert stats.bonferroni(ps) == pytest.approx(list(multipletests(ps, method="bonferroni")[1]))
    adjusted = stats.bonferroni([0.01, float("nan"), 0.2])
    assert adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.4)
    assert math.isnan(adjusted[1])
    assert stats.bonferroni([]) == []
