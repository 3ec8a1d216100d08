"""The blocked additive ANOVA, against statsmodels' ``anova_lm(typ=2)`` and by hand."""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
import pytest
import statsmodels.formula.api as smf
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.anova import anova_lm

from pytest_doceval.stats.anova import additive_anova

FACTORS = ("model", "nation", "task")


Data = dict[str, list[Any]]


def exam_data(seed: int, *, n_questions: int = 60, models: int = 3) -> Data:
    """0/1 correctness of `models` models on unbalanced questions with nation and task effects."""
    rng = np.random.default_rng(seed)
    nations = rng.choice(["KR", "JP", "IN"], size=n_questions, p=[0.5, 0.3, 0.2])
    tasks = rng.choice(["law", "maths", "history", "science"], size=n_questions)
    data: Data = {"model": [], "nation": [], "task": [], "y": []}
    for m in range(models):
        for q in range(n_questions):
            p = 0.3 + 0.15 * m + 0.2 * (nations[q] == "KR") + 0.1 * (tasks[q] == "law")
            data["model"].append(f"m{m}")
            data["nation"].append(str(nations[q]))
            data["task"].append(str(tasks[q]))
            data["y"].append(float(rng.random() < min(p, 0.95)))
    return data


def statsmodels_type2(data: Data) -> Any:
    pd = pytest.importorskip("pandas")  # statsmodels' formulas take DataFrames
    fit = smf.ols("y ~ C(model) + C(nation) + C(task)", data=pd.DataFrame(data)).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return anova_lm(fit, typ=2)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_matches_statsmodels_type2(seed: int) -> None:
    data = exam_data(seed)
    ours = additive_anova(data["y"], {f: data[f] for f in FACTORS})
    reference = statsmodels_type2(data)
    y = np.asarray(data["y"])
    ss_total = float(((y - y.mean()) ** 2).sum())
    assert ours.n == y.size
    assert ours.ss_total == pytest.approx(ss_total)
    assert ours.ss_residual == pytest.approx(reference.loc["Residual", "sum_sq"])
    assert ours.df_residual == reference.loc["Residual", "df"]
    for factor in FACTORS:
        effect, row = ours.effect(factor), reference.loc[f"C({factor})"]
        assert effect.ss == pytest.approx(row["sum_sq"], rel=1e-9, abs=1e-12)
        assert effect.df == row["df"]
        assert effect.f == pytest.approx(row["F"], rel=1e-9)
        assert effect.p == pytest.approx(row["PR(>F)"], rel=1e-7)
        assert effect.eta_squared == pytest.approx(row["sum_sq"] / ss_total)
        expected_partial = row["sum_sq"] / (row["sum_sq"] + ours.ss_residual)
        assert effect.partial_eta_squared == pytest.approx(expected_partial)


def test_the_block_takes_model_differences_out_of_the_residual() -> None:
    data = exam_data(5, models=4)
    y, labels = data["y"], {f: data[f] for f in FACTORS}
    blocked = additive_anova(y, labels)
    unblocked = additive_anova(y, {"nation": labels["nation"], "task": labels["task"]})
    model = blocked.effect("model")
    assert blocked.ss_residual == pytest.approx(unblocked.ss_residual - model.ss)
    assert blocked.effect("nation").f > unblocked.effect("nation").f


def test_a_factor_confounded_with_another_has_no_degrees_of_freedom() -> None:
    # Every task is set by one nation only: given the task, the nation adds nothing.
    y = [1, 0, 1, 1, 0, 0, 1, 0]
    nation = ["KR", "KR", "KR", "KR", "JP", "JP", "JP", "JP"]
    task = ["law", "law", "maths", "maths", "geo", "geo", "art", "art"]
    result = additive_anova(y, {"nation": nation, "task": task})
    effect = result.effect("nation")
    assert (effect.ss, effect.df) == (0.0, 0)
    assert math.isnan(effect.f) and math.isnan(effect.p)
    # Task alone: a one-way ANOVA over the 4 tasks, worked by hand.
    # Task means 0.5, 1, 0, 0.5; grand mean 0.5: SS_task = 2 * (0 + .25 + .25 + 0) = 1.
    task_effect = result.effect("task")
    assert task_effect.df == 2  # 3 for task, minus the 1 nation already accounts for
    assert result.ss_total == pytest.approx(2.0)
    assert result.ss_residual == pytest.approx(1.0)  # within-task: 4 cells with 0.5 each


def test_edge_cases() -> None:
    empty = additive_anova([], {"model": [], "nation": []})
    assert empty.n == 0 and math.isnan(empty.ss_total) and len(empty.effects) == 2
    constant = additive_anova([1.0, 1.0, 1.0, 1.0], {"nation": ["a", "a", "b", "b"]})
    assert constant.effect("nation").ss == 0.0
    assert math.isnan(constant.effect("nation").eta_squared)
    perfect = additive_anova([1.0, 1.0, 0.0, 0.0], {"nation": ["a", "a", "b", "b"]})
    assert perfect.effect("nation").f == math.inf and perfect.effect("nation").p == 0.0
    assert perfect.effect("nation").eta_squared == 1.0
    with pytest.raises(ValueError, match="factor 'nation' has 1 labels for 2 values"):
        additive_anova([1, 0], {"nation": ["a"]})
    with pytest.raises(ValueError, match="one-dimensional"):
        additive_anova([[1, 0]], {})


@given(
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=2, max_value=3),
    st.integers(min_value=2, max_value=3),
    st.integers(min_value=1, max_value=2),
    st.integers(min_value=0, max_value=2**32 - 1),
)
@settings(max_examples=40, deadline=None)
def test_a_balanced_design_decomposes_exactly(
    models: int, nations: int, tasks: int, replicates: int, seed: int
) -> None:
    # Every (model, nation, task) cell equally often: the factors are orthogonal, so the Type
    # II sums of squares and the residual add up to the total.
    cells = list(itertools.product(range(models), range(nations), range(tasks))) * replicates
    y = np.random.default_rng(seed).integers(0, 2, size=len(cells)).astype(float)
    labels = {name: [str(c[i]) for c in cells] for i, name in enumerate(FACTORS)}
    result = additive_anova(y, labels)
    parts = sum(e.ss for e in result.effects) + result.ss_residual
    assert parts == pytest.approx(result.ss_total, abs=1e-9)
    assert [e.df for e in result.effects] == [models - 1, nations - 1, tasks - 1]
    if result.ss_total > 0:
        shares = sum(e.eta_squared for e in result.effects)
        assert shares == pytest.approx(1 - result.ss_residual / result.ss_total, abs=1e-9)
