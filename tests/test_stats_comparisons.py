"""Tests of system comparisons and the suite-level regression gate of `pytest_doceval.stats`.

Also: every result is builtin-typed and picklable, and properties of comparisons and the gate.

See tests/stats_support.py for the conventions shared by the stats tests.
"""

from __future__ import annotations

import math
import pickle
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_doceval import stats
from pytest_doceval.stats import gate
from tests.stats_support import (
    CER_A,
    CER_B,
    FAST,
    assert_builtin,
    by_case,
    finite,
)

# ---------------------------------------------------------------------------------------------
# System comparisons
# ---------------------------------------------------------------------------------------------


def test_compare_paired_uses_common_sorted_cases() -> None:
    a = by_case(CER_A)
    b = by_case(CER_B)
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
    a = by_case([1, 1, 1, 0, 1, 1, 0, 1, 1, 1])
    b = by_case([0, 1, 0, 0, 1, 0, 0, 1, 0, 1])
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
        "zeta": by_case(list(base + rng.normal(0.03, 0.02, 20))),
        "alpha": by_case(list(base)),
        "mid": by_case(list(base + rng.normal(0.0, 0.02, 20))),
    }
    results = stats.pairwise_comparisons(systems, metric="cer")
    assert [(r.a, r.b) for r in results] == [("alpha", "mid"), ("alpha", "zeta"), ("mid", "zeta")]
    for r in results:
        single = stats.compare_paired(systems[r.a], systems[r.b], a=r.a, b=r.b, metric="cer")
        assert r.p_ttest == single.p_ttest
        assert r.p_bonferroni == pytest.approx(min(1.0, 3 * r.p_ttest))


def test_compare_paired_interval_comes_from_paired_interval() -> None:
    a, b = by_case(CER_A), by_case(CER_B)
    result = stats.compare_paired(a, b, a="x", b="y", metric="cer")
    expected = stats.paired_interval(CER_A, CER_B)
    assert (result.ci_low, result.ci_high, result.method) == (
        expected.ci_low,
        expected.ci_high,
        "t",
    )
    assert result.to_dict()["method"] == "t"
    forced = stats.compare_paired(
        a, b, a="x", b="y", metric="cer", method="percentile-bootstrap", seed=3
    )
    diffs = sorted(np.array(CER_A) - np.array(CER_B))
    seed_interval = stats.bootstrap_mean_ci(diffs, seed=3)
    assert (forced.ci_low, forced.ci_high) == (seed_interval.ci_low, seed_interval.ci_high)
    assert forced.method == "percentile-bootstrap"
    pairs = stats.pairwise_comparisons({"x": a, "y": b}, metric="cer", method="bca")
    assert [r.method for r in pairs] == ["bca"]


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
    return by_case(list(current)), by_case(list(baseline))


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
    baseline = by_case([0.1, 0.2, 0.3, 0.25])
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
    baseline = by_case([0.1, 0.2, 0.3])
    current = {k: v + 0.001 for k, v in baseline.items()}
    decision = stats.significant_regression(
        current, baseline, metric="cer", direction="lower", margin=0.0005
    )
    assert decision.failed
    assert decision.message.endswith("exceeds margin +0.0005")


@pytest.mark.parametrize("shift", [0.0, 0.004, 0.008, 0.012, 0.02])
@pytest.mark.parametrize("cases", [6, 12, 40])
def test_gate_is_the_one_sided_paired_t_test(shift: float, cases: int) -> None:
    # With the default t interval, "ci_low > margin" is scipy's one-sided t-test of
    # H0: mean(current - baseline) <= margin at level (1 - confidence) / 2.
    rng = np.random.default_rng(cases)
    baseline = rng.beta(2, 30, size=cases)
    current = baseline + shift + rng.normal(0, 0.01, size=cases)
    decision = stats.significant_regression(
        by_case(list(current)),
        by_case(list(baseline)),
        metric="cer",
        direction="lower",
        margin=0.005,
    )
    p = sps.ttest_1samp(current - baseline - 0.005, 0.0, alternative="greater").pvalue
    assert decision.failed == (p < 0.025)
    assert decision.method == "t"
    higher = stats.significant_regression(
        by_case(list(-current)),
        by_case(list(-baseline)),
        metric="f1",
        direction="higher",
        margin=0.005,
    )
    assert higher.failed == decision.failed


def test_gate_with_a_forced_method() -> None:
    current, baseline = _suite(0.02, 0.01)
    decision = stats.significant_regression(
        current,
        baseline,
        metric="cer",
        direction="lower",
        margin=0.005,
        method="percentile-bootstrap",
    )
    cur = [current[c] for c in sorted(current)]
    base = [baseline[c] for c in sorted(baseline)]
    expected = stats.bootstrap_mean_ci(sorted(np.array(cur) - np.array(base)))
    assert (decision.ci_low, decision.ci_high) == (expected.ci_low, expected.ci_high)
    assert decision.method == "percentile-bootstrap" and decision.failed


# ---------------------------------------------------------------------------------------------
# Serialisation and properties
# ---------------------------------------------------------------------------------------------


def test_every_result_is_builtin_and_picklable() -> None:
    a, b = by_case(CER_A), by_case(CER_B)
    results: list[Any] = [
        stats.bootstrap_mean_ci(CER_A),
        stats.bootstrap_ratio_ci(CER_A, CER_B),
        stats.paired_bootstrap_ci(CER_A, CER_B),
        stats.paired_ttest_p(CER_A, CER_B),
        stats.wilcoxon_p(CER_A, CER_B),
        stats.cohens_d_paired(CER_A, CER_B),
        stats.mcnemar_exact([1, 0, 1, 1], [0, 0, 1, 0]),
        stats.binomial_test_p(3, 10),
        stats.bonferroni([0.01, 0.5]),
        stats.compare_paired(a, b, a="x", b="y", metric="cer"),
        stats.pairwise_comparisons({"x": a, "y": b, "z": a}, metric="cer"),
        stats.significant_regression(a, b, metric="cer", direction="lower", margin=0.005),
        stats.bootstrap_mean_ci([]),
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
    slack = gate._MARGIN_SLACK
    beyond = d.ci_low > margin + slack if direction == "lower" else d.ci_high < -margin - slack
    assert d.failed == (beyond and d.n >= 2)
    assert_builtin(d)
