"""Bonferroni's adjustment of `pytest_doceval.stats`, against statsmodels.

(The additive ANOVA the exam kind uses is tested in tests/test_exam_anova.py.)
"""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.multitest import multipletests  # type: ignore[import-untyped]

from pytest_doceval import stats


def test_bonferroni_matches_statsmodels() -> None:
    ps = [0.001, 0.02, 0.04, 0.3, 0.9]
    assert stats.bonferroni(ps) == pytest.approx(list(multipletests(ps, method="bonferroni")[1]))
    adjusted = stats.bonferroni([0.01, float("nan"), 0.2])
    assert adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.4)
    assert math.isnan(adjusted[1])
    assert stats.bonferroni([]) == []
