"""Additive ANOVA with Type II sums of squares for any number of factors, one of them a block.

Seed 001 (4.5) decomposes correctness into nation and task effects with eta squared. Every
model answers the same items, so the analysis is at the item level -- one observation per
(question, model), correct = 0 or 1 -- with the model as a blocking factor: the fit is

    correct ~ model + nation + task

and a model's overall strength leaves the residual instead of inflating it (the randomised
complete block design; Montgomery 2017, *Design and Analysis of Experiments*, ch. 4).
`pytest_doceval.stats.two_factor_anova` has no third factor, hence this module.

Each factor's sum of squares is Type II: the drop in residual sum of squares when it joins a
model holding every other factor, SS_f = RSS(all but f) - RSS(all), with df the rank increment
(Langsrud 2003; what ``statsmodels`` ``anova_lm(..., typ=2)`` reports). Ranks come from the
least-squares solve, so a factor confounded with another (a task only one nation sets) gets the
df it really has, possibly 0. eta^2 = SS_f / SS_total; partial eta^2 = SS_f / (SS_f + SS_res).
On 0/1 data this is the linear probability model; the F tests are approximate, the eta^2
decomposition is exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

NAN = float("nan")
# A sum of squares below this share of SS_total is rounding error of the solve, not an effect.
_SS_RELATIVE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Effect:
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
        data = asdict(self)
        data["effects"] = [asdict(e) for e in self.effects]
        return data


def _indicators(labels: Sequence[str]) -> NDArray[np.float64]:
    """One 0/1 column per level (the intercept's redundancy is left to the rank)."""
    _, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    out = np.zeros((len(labels), int(codes.max()) + 1 if len(labels) else 0))
    out[np.arange(len(labels)), codes] = 1.0
    return out


def _rss(y: NDArray[np.float64], blocks: Sequence[NDArray[np.float64]]) -> tuple[float, int]:
    """Residual sum of squares and rank of the OLS fit of y on an intercept plus `blocks`."""
    design = np.column_stack([np.ones_like(y), *blocks])
    coef, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    return float(resid @ resid), int(rank)


def _f_test(ss: float, df: int, ss_res: float, df_res: int) -> tuple[float, float]:
    if df <= 0 or df_res <= 0:
        return NAN, NAN
    if ss_res == 0.0:
        # A perfect fit: an effect is infinitely large against zero noise; no effect is 0/0.
        return (math.inf, 0.0) if ss > 0.0 else (NAN, NAN)
    f = (ss / df) / (ss_res / df_res)
    from scipy.special import fdtrc  # on use: scipy is slow to import (plugin start-up)

    # fdtrc is what scipy.stats.f.sf computes, without loading scipy.stats.
    return f, float(fdtrc(df, df_res, f))


def _share(part: float, whole: float) -> float:
    return part / whole if whole > 0.0 else NAN


def additive_anova(values: ArrayLike, factors: Mapping[str, Sequence[str]]) -> AdditiveAnova:
    """Type II ANOVA of `values` on the additive model of `factors` (name -> one label per
    value). Put the block (the model) among the factors; it is tested like the others.

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
        return AdditiveAnova(0, NAN, NAN, 0, tuple(_empty(name) for name in factors))
    columns = {name: _indicators([str(v) for v in labels]) for name, labels in factors.items()}
    rss_full, rank_full = _rss(y, list(columns.values()))
    ss_total = float(((y - y.mean()) ** 2).sum())

    def snap(ss: float) -> float:
        return 0.0 if ss <= _SS_RELATIVE_TOLERANCE * ss_total else ss

    rss_full = snap(rss_full)
    df_res = n - rank_full
    effects: list[Effect] = []
    for name in columns:
        others = [c for other, c in columns.items() if other != name]
        rss_without, rank_without = _rss(y, others)
        ss, df = snap(rss_without - rss_full), rank_full - rank_without
        f, p = _f_test(ss, df, rss_full, df_res)
        partial = _share(ss, ss + rss_full) if ss_total > 0.0 else NAN
        effects.append(Effect(name, ss, df, f, p, _share(ss, ss_total), partial))
    return AdditiveAnova(n, ss_total, rss_full, df_res, tuple(effects))


def _empty(name: str) -> Effect:
    return Effect(name, NAN, 0, NAN, NAN, NAN, NAN)
