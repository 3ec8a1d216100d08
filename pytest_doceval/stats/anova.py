"""Analysis of variance: the additive Type II ANOVA of any number of factors (a block among
them) that seed 001's exam analysis uses, on one OLS fit (`_fit`), one F test and one snapping
rule."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pytest_doceval.stats._common import NAN, DictMixin

# Sums of squares below this fraction of SS_total are rounding error of the OLS solve.
_SS_RELATIVE_TOLERANCE = 1e-12


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
    of inflating it.

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
