"""The interval result type, the names of the methods that make intervals, and SMALL_N."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_doceval.stats._common import DictMixin

# Below this many cases an interval is flagged ``small_n``: every method's real coverage drifts
# from the nominal level there (benchmarks/bench_bootstrap_coverage.py measures by how much),
# and the default mean interval is the t interval rather than the bootstrap-t (see
# `pytest_doceval.stats.intervals`). One constant, so reports and the method choice agree.
SMALL_N = 10

# Method names, as they appear in `Interval.method` and in reports.
PERCENTILE_BOOTSTRAP = "percentile-bootstrap"
BCA = "bca"
BOOTSTRAP_T = "bootstrap-t"
T = "t"
WILSON = "wilson"
INTERVAL_METHODS = (PERCENTILE_BOOTSTRAP, BCA, BOOTSTRAP_T, T, WILSON)


@dataclass(frozen=True)
class Interval(DictMixin):
    """A point estimate over ``n`` cases with a confidence interval made by ``method``.

    ``mean`` is the estimate on the full sample (a mean, a ratio or a mean difference,
    depending on the function that built it); ``method`` is one of `INTERVAL_METHODS` and says
    how ``ci_low``/``ci_high`` were made. ``ci_low <= mean <= ci_high`` whenever all three are
    finite. ``small_n`` is ``n < SMALL_N`` (derived, not passed): the interval's coverage is
    only approximately the nominal one, so reports should say so. All three numbers are
    ``nan`` when ``n == 0``; the bounds are ``nan`` whenever the method cannot make an interval
    from the data (each function documents when).
    """

    mean: float
    ci_low: float
    ci_high: float
    n: int
    method: str
    small_n: bool = field(init=False)

    def __post_init__(self) -> None:
        # Derived here, not by callers, so the SMALL_N rule has one home.
        object.__setattr__(self, "small_n", self.n < SMALL_N)

    def to_dict(self) -> dict[str, Any]:
        """``mean``, ``ci_low``, ``ci_high`` (float, possibly NaN), ``n`` (int), ``method``
        (str), ``small_n`` (bool)."""
        return super().to_dict()
