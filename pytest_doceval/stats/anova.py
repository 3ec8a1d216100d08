"""Analysis of variance: one-way (F, eta^2), two-factor with Type II sums of squares, and the
additive Type II ANOVA of any number of factors (a block among them) that seed 001's exam
analysis uses. One home: every ANOVA of the package is here, on one OLS fit (`_fit`), one
F test and one snapping rule."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pytest_doceval.stats._common import NAN, DictMixin, vector

# Sums of squares below this fraction of SS_total are rounding error of the OLS solve.
_SS_RELATIVE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class AnovaResult(DictMixin):
    """One-way ANOVA: F statistic, its p-value, eta^2 = SS_between / SS_total, and the dfs."""

    f: float
    p: float
    eta_squared: float
    df_between: int
    df_within: int


@dataclass(frozen=True)
class TwoFactorResult(DictMixin):
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
    from scipy.special import fdtrc  # on use: scipy is slow to import (plugin start-up)

    # fdtrc is what scipy.stats.f.sf computes, without loading scipy.stats.
    return f, float(fdtrc(df_effect, df_resid, f))


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
    arrays = [vector(v, f"group {name!r}") for name, v in groups.items()]
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


def _empty_two_factor() -> TwoFactorResult:
    """No cases: zero counts and degrees of freedom, every sum of squares and statistic NaN."""
    counts = {"n", "levels_a", "levels_b", "df_a", "df_b", "df_interaction", "df_residual"}
    values: dict[str, Any] = {
        f.name: 0 if f.name in counts else NAN for f in fields(TwoFactorResult)
    }
    return TwoFactorResult(**values)


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
    y = vector(values, "values")
    if not (len(factor_a) == len(factor_b) == y.size):
        raise ValueError(
            f"values, factor_a and factor_b differ in length: {y.size}, {len(factor_a)}, "
            f"{len(factor_b)}"
        )
    n = int(y.size)
    if n == 0:
        return _empty_two_factor()
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


@dataclass(frozen=True)
class Effect(DictMixin):
    """One factor of an `AdditiveAnova`: its Type II sum of squares, df, F test and shares."""

    name: str
    ss: float
    df: int
    f: float
    p: float
    eta_squared: float
    partial_eta_squared: float


@dataclass(frozen=True)
class AdditiveAnova:
    """The decomposition: one `Effect` per factor (in the order given) and the residual."""

    n: int
    ss_total: float
    ss_residual: float
    df_residual: int
    effects: tuple[Effect, ...]

    def effect(self, name: str) -> Effect:
        return next(e for e in self.effects if e.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "ss_total": self.ss_total,
            "ss_residual": self.ss_residual,
            "df_residual": self.df_residual,
            "effects": [e.to_dict() for e in self.effects],
        }


def additive_anova(values: ArrayLike, factors: Mapping[str, Sequence[Any]]) -> AdditiveAnova:
    """Type II ANOVA of `values` on the additive model of `factors` (name -> one label per
    value), e.g. seed 001's item-level ``correct ~ model + nation + task``, with the model as
    a blocking factor (the randomised complete block design; Montgomery 2017, *Design and
    Analysis of Experiments*, ch. 4): a model's overall strength leaves the residual instead
    of inflating it. `two_factor_anova` has no third factor, hence this function.

    Each factor's sum of squares is Type II: SS_f = RSS(all but f) - RSS(all), with df the rank
    increment (Langsrud 2003; ``statsmodels`` ``anova_lm(..., typ=2)``), so a factor confounded
    with another (a task only one nation sets) gets the df it really has, possibly 0.
    eta^2 = SS_f / SS_total; partial eta^2 = SS_f / (SS_f + SS_res). On 0/1 data this is the
    linear probability model: the F tests are approximate, the eta^2 decomposition exact.

    F and p are NaN for an effect with no degrees of freedom or when no residual degrees of
    freedom are left; eta^2 values are NaN when every value is equal (SS_total = 0).
    """
    y = np.asarray(values, dtype=np.float64)
    if y.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {y.shape}")
    for name, labels in factors.items():
        if len(labels) != y.size:
            raise ValueError(f"factor {name!r} has {len(labels)} labels for {y.size} values")
    n = int(y.size)
    if n == 0:
        return AdditiveAnova(
            0, NAN, NAN, 0, tuple(Effect(name, NAN, 0, NAN, NAN, NAN, NAN) for name in factors)
        )
    columns = {name: _dummies(labels) for name, labels in factors.items()}
    rss_full, rank_full = _fit(y, *columns.values())
    ss_total = float(((y - y.mean()) ** 2).sum())

    def snap(ss: float) -> float:
        return 0.0 if ss <= _SS_RELATIVE_TOLERANCE * ss_total else ss

    rss_full = snap(rss_full)
    df_res = n - rank_full
    effects: list[Effect] = []
    for name in columns:
        rss_without, rank_without = _fit(y, *(c for o, c in columns.items() if o != name))
        ss, df = snap(rss_without - rss_full), rank_full - rank_without
        f, p = _f_test(ss, df, rss_full, df_res)
        partial = _share(ss, ss + rss_full) if ss_total > 0.0 else NAN
        effects.append(Effect(name, ss, df, f, p, _share(ss, ss_total), partial))
    return AdditiveAnova(n, ss_total, rss_full, df_res, tuple(effects))
