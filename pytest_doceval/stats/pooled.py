"""A weighted mean of pooled shares over groups, with a case bootstrap CI.

``Σ_k w_k Acc_k / Σ_k w_k`` where ``Acc_k`` = Σ_cases matched_k / Σ_cases total_k: the matched
and total counts of each group k are summed over every case *first*, then divided. That differs
from the mean of per-case totals (a case with one gold field weighs as much as a case with
fifty), as corpus CER differs from the mean of per-case CERs. Seed 004's Acc_total is this with
each case one sample of each of its fields (total 1, matched 0 or 1); the item-pooled field
accuracy gives a case as many as it has gold fields of the name.

Each case gives, per group, ``(matched, total, weight)``. A group's weight is the same in every
case (it is a suite setting); the first case that has the group gives it. Groups with no total
or zero weight take no part; with none left the value is NaN. The interval is the percentile
bootstrap over cases (`bootstrap._percentile_interval`), a case's counts of all groups resampled
together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from pytest_doceval.stats._common import NAN, check_interval_args
from pytest_doceval.stats.bootstrap import _percentile_interval
from pytest_doceval.stats.interval import Interval

GroupCounts = Mapping[str, tuple[float, float, float]]  # group -> (matched, total, weight)


def _weighted_share(
    matched: NDArray[np.float64], total: NDArray[np.float64], weight: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Along the last axis: Σ w_k (matched_k / total_k) / Σ w_k over groups with total > 0."""
    used = (total > 0) & (weight > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(used, matched / np.where(total > 0, total, 1.0), 0.0)
        weights = np.where(used, weight, 0.0)
        sums = weights.sum(axis=-1)
        return np.where(sums > 0, (weights * share).sum(axis=-1) / sums, np.nan)


def pooled_share(
    cases: Sequence[GroupCounts],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """``Σ_k w_k (Σ_cases matched_k / Σ_cases total_k) / Σ_k w_k`` with its case bootstrap CI."""
    check_interval_args(resamples, confidence)
    groups: dict[str, float] = {}
    for case in cases:
        for group, (_, _, group_weight) in case.items():
            groups.setdefault(group, float(group_weight))
    names = list(groups)
    index = {name: i for i, name in enumerate(names)}
    matched = np.zeros((len(cases), len(names)))
    total = np.zeros((len(cases), len(names)))
    for row, case in enumerate(cases):
        for group, (hits, count, _) in case.items():
            matched[row, index[group]] = hits
            total[row, index[group]] = count
    weight = np.array([groups[name] for name in names], dtype=np.float64)
    n = len(cases)
    estimate = float(_weighted_share(matched.sum(axis=0), total.sum(axis=0), weight)) if n else NAN

    def replicate(idx: NDArray[np.integer]) -> NDArray[np.float64]:
        return _weighted_share(matched[idx].sum(axis=1), total[idx].sum(axis=1), weight)

    return _percentile_interval(estimate, n, replicate, resamples, confidence, seed)
