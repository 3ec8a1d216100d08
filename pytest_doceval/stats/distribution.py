"""The distribution of per-case values beside their mean: percentiles, and the tail's share.

A mean hides the long tail (one document at CER 0.9 among pages at 0.02; one page that took a
minute to parse). Every aggregate of the report therefore carries the percentiles of its
per-case values (`PERCENTILES`: the minimum, quartiles, the 95th and 99th percentiles and the
maximum), which the HTML draws as box plots and the cost summary reads for latency (p50, p95,
p99), and, where a threshold is known, the share of cases beyond it.

A percentile is the linear interpolation between order statistics (Hyndman and Fan's type 7:
``numpy.percentile``'s default, R's, and ``statistics.quantiles(method="inclusive")``): for
n sorted values x_1..x_n, the p-th percentile is at rank 1 + (n - 1) p / 100. With one case
every percentile is that case's value; with none there is no distribution.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

PERCENTILES: Final[Mapping[str, float]] = {
    "p0": 0.0,
    "p25": 25.0,
    "p50": 50.0,
    "p75": 75.0,
    "p95": 95.0,
    "p99": 99.0,
    "p100": 100.0,
}
_BEYOND: Final[Mapping[str, Callable[[float, float], bool]]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of `values` (module docstring); NaN for no values."""
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"a percentile is between 0 and 100, not {q}")
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """`PERCENTILES` of `values`; empty for no values."""
    if not values:
        return {}
    found = np.percentile(np.asarray(values, dtype=np.float64), list(PERCENTILES.values()))
    return {name: float(v) for name, v in zip(PERCENTILES, found, strict=True)}


@dataclass(frozen=True)
class Beyond:
    """How many of `n` cases lie beyond a threshold: ``value <op> threshold``."""

    op: str
    threshold: float
    cases: int
    n: int

    @property
    def share(self) -> float:
        return self.cases / self.n if self.n else float("nan")


def beyond(values: Sequence[float], op: str, threshold: float) -> Beyond:
    """The cases of `values` with ``value <op> threshold`` (op: ``>``, ``>=``, ``<``, ``<=``)."""
    if op not in _BEYOND:
        raise ValueError(f"a threshold's comparison is one of {', '.join(_BEYOND)}, not {op!r}")
    test = _BEYOND[op]
    return Beyond(op, threshold, sum(1 for v in values if test(v, threshold)), len(values))
