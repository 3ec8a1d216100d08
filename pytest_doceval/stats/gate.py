"""The suite-level regression gate: fail only on a significant regression beyond a margin."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pytest_doceval.stats._common import DictMixin
from pytest_doceval.stats.intervals import paired_interval

# The gate compares a CI bound with the margin; current - baseline carries float noise
# (0.105 - 0.1 = 0.0050000000000000044), so a bound within this distance counts as on the margin.
_MARGIN_SLACK = 1e-9

_DIRECTIONS = ("lower", "higher")


@dataclass(frozen=True)
class GateDecision(DictMixin):
    """Verdict of the suite-level significance gate (see `significant_regression`).

    ``mean_diff`` is mean(current - baseline) with its CI (``ci_low``, ``ci_high``) made by
    ``method``; ``failed`` is the verdict and ``message`` says why, readably.
    """

    metric: str
    direction: str
    margin: float
    mean_diff: float
    ci_low: float
    ci_high: float
    n: int
    failed: bool
    message: str
    method: str


def _decimals(margin: float) -> int:
    """Enough decimals to print the margin exactly (at least 3), so messages never show 0.000."""
    decimals = 3
    while decimals < 8 and round(margin, decimals) != margin:
        decimals += 1
    return decimals


def significant_regression(
    current: Mapping[str, float],
    baseline: Mapping[str, float],
    *,
    metric: str,
    direction: str,
    margin: float,
    method: str | None = None,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> GateDecision:
    """Does ``current`` regress against ``baseline`` by more than ``margin``, significantly?

    Paired over the case ids present in both mappings (sorted), diff = current - baseline, with
    the CI of the mean diff from `paired_interval` (``method=None``: its measured default, the
    t interval; ``method`` forces another, e.g. ``"percentile-bootstrap"``). ``direction`` is
    ``"lower"`` when lower is better (e.g. ``cer``: a regression is a positive diff) or
    ``"higher"`` (e.g. ``structure_f1``: a regression is a negative diff). ``margin`` >= 0 is in
    metric units (0.005 for ``+0.5pp``).

    The gate fails only when the whole CI lies beyond the margin in the bad direction:
    ``ci_low > margin`` for lower-is-better, ``ci_high < -margin`` for higher-is-better. This is
    a one-sided test of H0: "the regression is at most ``margin``" at level
    ``(1 - confidence) / 2`` (an interval-inclusion test of the kind used for non-inferiority;
    Wellek 2010, *Testing Statistical Hypotheses of Equivalence and Noninferiority*, ch. 2); with
    the t interval it is exactly the one-sided paired t-test of that H0. Noise alone rarely
    fails it while a real regression well beyond the margin does.

    A bound within 1e-9 of the margin counts as on it (floating-point noise of the
    subtraction), not beyond it. The gate never fails with fewer than 2 common cases: one
    case says nothing about significance (per-case gates still judge that case).
    """
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be 'lower' or 'higher', got {direction!r}")
    if not (math.isfinite(margin) and margin >= 0.0):
        raise ValueError(f"margin must be a finite number >= 0 in metric units, got {margin!r}")
    common = sorted(set(current) & set(baseline))
    n = len(common)
    cur = np.array([current[c] for c in common], dtype=np.float64)
    base = np.array([baseline[c] for c in common], dtype=np.float64)
    ci = paired_interval(
        cur, base, method=method, resamples=resamples, confidence=confidence, seed=seed
    )
    # "+ 0.0" turns -0.0 into 0.0 so a zero margin never prints as "-0.000".
    limit = (margin if direction == "lower" else -margin) + 0.0
    if n < 2 or not math.isfinite(ci.ci_low):
        failed = False
    elif direction == "lower":
        failed = ci.ci_low > margin + _MARGIN_SLACK
    else:
        failed = ci.ci_high < -margin - _MARGIN_SLACK

    d = _decimals(margin)
    level = f"{confidence * 100:g}% CI"
    if n == 0:
        message = f"{metric}: no cases in common with the baseline; significance gate not applied"
    elif n < 2 or not math.isfinite(ci.ci_low):
        message = (
            f"{metric}: mean change {ci.mean:+.{d}f} (n={n}) - too few cases with defined "
            f"values for a significance gate; not applied"
        )
    else:
        summary = (
            f"{metric}: mean change {ci.mean:+.{d}f} ({level} {ci.ci_low:+.{d}f} to "
            f"{ci.ci_high:+.{d}f}, n={n})"
        )
        verdict = "exceeds" if failed else "does not significantly exceed"
        message = f"{summary} {verdict} margin {limit:+.{d}f}"
    return GateDecision(
        metric=metric,
        direction=direction,
        margin=float(margin),
        mean_diff=ci.mean,
        ci_low=ci.ci_low,
        ci_high=ci.ci_high,
        n=n,
        failed=bool(failed),
        message=message,
        method=ci.method,
    )
