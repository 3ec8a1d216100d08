"""Minimum detectable effects (issue 19): t against statsmodels, exact McNemar by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.power import TTestPower

from pytest_doceval.stats import mcnemar_exact
from pytest_doceval.stats.power import (
    _critical_counts,
    mcnemar_mde,
    mcnemar_power,
    paired_mde,
    t_mde,
)


@settings(max_examples=40, deadline=None)
def _t_power(effect: float, n: int, alpha: float, alternative: str) -> float:
    """A one-sample t test's power from the noncentral t, written out (scipy's nct)."""
    df, nc = n - 1, effect * math.sqrt(n)
    if alternative == "larger":
        return float(sps.nct.sf(sps.t.ppf(1 - alpha, df), df, nc))
    critical = sps.t.ppf(1 - alpha / 2, df)
    return float(sps.nct.sf(critical, df, nc) + sps.nct.cdf(-critical, df, nc))


@example(3, 1.75, 0.01, "two-sided")  # statsmodels' power is NaN there
@given(
    st.integers(3, 400),  # statsmodels' own solver gives up at n = 2 (it returns 10.0)
    st.floats(0.001, 2.0),
    st.sampled_from([0.01, 0.025, 0.05, 0.1]),
    st.sampled_from(["two-sided", "larger"]),
)
def test_t_mde_is_statsmodels_solve_power(
    n: int, sd: float, alpha: float, alternative: str
) -> None:
    ours = t_mde(n, sd, alpha, alternative=alternative)
    # statsmodels' power at our MDE is 80%
    power = TTestPower().power(ours / sd, n, alpha, alternative=alternative)
    if math.isnan(power):  # its two-sided power is NaN at large effects (n=3, alpha=0.01)
        power = _t_power(ours / sd, n, alpha, alternative)
    assert power == pytest.approx(0.8, abs=1e-6)
    expected = TTestPower().solve_power(
        effect_size=None, nobs=n, alpha=alpha, power=0.8, alternative=alternative
    )
    # and its solver agrees wherever it converged (at n = 3, alpha = 0.01 it stops at 78.7%);
    # a two-sided power is even in the effect, and its solver may land on the negative root
    if TTestPower().power(expected, n, alpha, alternative=alternative) == pytest.approx(0.8):
        assert ours == pytest.approx(abs(expected) * sd, rel=1e-5)


def test_t_mde_edges() -> None:
    assert math.isnan(t_mde(1, 0.1, 0.05))
    assert t_mde(10, 0.0, 0.05) == 0.0
    # the example: five pages, differences spread 3pp, one-sided 2.5%: about 5pp
    assert t_mde(5, 0.03, 0.025, alternative="larger") == pytest.approx(0.0505, abs=1e-3)


def _slow_critical(n: int, alpha: float) -> list[int]:
    out = []
    for d in range(n + 1):
        ks = [k for k in range(d + 1) if 2 * k > d and sps.binomtest(k, d, 0.5).pvalue <= alpha]
        out.append(ks[0] if ks else d + 1)
    return out


@pytest.mark.parametrize(("n", "alpha"), [(40, 0.05), (25, 0.01), (60, 0.1)])
def test_critical_counts_are_scipys_binomial_test(n: int, alpha: float) -> None:
    assert _critical_counts(n, alpha).tolist() == _slow_critical(n, alpha)


def _simulated_power(n: int, p10: float, p01: float, alpha: float, runs: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    rejected = 0
    for _ in range(runs):
        kinds = rng.choice(3, size=n, p=[p10, p01, 1 - p10 - p01])
        a = (kinds == 0).astype(float)  # a right, b wrong
        b = (kinds == 1).astype(float)  # b right, a wrong; else both wrong
        rejected += mcnemar_exact(a, b).p <= alpha and a.sum() > b.sum()
    return rejected / runs


@pytest.mark.slow
def test_mcnemar_power_and_mde_by_simulation() -> None:
    n, discordant, alpha = 60, 0.3, 0.05
    mde = mcnemar_mde(n, discordant, alpha)
    assert 0 < mde < discordant
    assert mcnemar_power(n, discordant, mde, alpha) == pytest.approx(0.8, abs=1e-6)
    p10, p01 = (discordant + mde) / 2, (discordant - mde) / 2
    simulated = _simulated_power(n, p10, p01, alpha, runs=3000, seed=5)
    assert simulated == pytest.approx(0.8, abs=0.03)  # 3000 runs: sd 0.007
    half = mde / 2
    assert _simulated_power(
        n, (discordant + half) / 2, (discordant - half) / 2, alpha, 2000, 6
    ) == pytest.approx(mcnemar_power(n, discordant, half, alpha), abs=0.035)


def test_mcnemar_mde_edges() -> None:
    assert mcnemar_mde(3, 0.5, 0.05) == math.inf  # three pairs can never reach p <= 0.05
    assert mcnemar_mde(50, 0.0, 0.05) == math.inf
    assert mcnemar_mde(400, 0.2, 0.05) < mcnemar_mde(100, 0.2, 0.05)


def test_paired_mde_chooses_its_test() -> None:
    a = [0.10, 0.12, 0.11, 0.15, 0.13, 0.09]
    b = [0.11, 0.12, 0.10, 0.13, 0.13, 0.10]
    sd = float(np.std(np.subtract(a, b), ddof=1))
    assert paired_mde(a, b, binary=False, alpha=0.05) == pytest.approx(t_mde(6, sd, 0.05))
    # no spread in the differences: the values' own spread stands in
    assert paired_mde(a, a, binary=False, alpha=0.05) == pytest.approx(
        t_mde(6, float(np.std(a, ddof=1)), 0.05)
    )
    right = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0] * 10
    other = [1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0] * 10
    assert paired_mde(right, other, binary=True, alpha=0.05) == mcnemar_mde(80, 0.25, 0.05)
    p = 0.625
    assert paired_mde(right, right, binary=True, alpha=0.05) == mcnemar_mde(
        80, 2 * p * (1 - p), 0.05
    )
