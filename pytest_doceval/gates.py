"""Gate rules from ``suite.toml`` and their verdicts.

Per case (``[gates]``), a metric takes one rule or a list of rules:

* ``"+0.5pp"`` -- may be at most 0.5 percentage points (0.005) worse than its baseline, in the
  metric's bad direction (its `MetricSpec` says which: up for an error rate, down for a score);
* ``"+0.02"`` -- ``abs`` as a unit: at most 0.02 metric units worse (for metrics that are not
  rates, e.g. a count);
* ``"+10%"`` -- at most 10 % worse than its baseline, relative to the baseline value;
* ``"+0"`` -- no worse than the baseline at all (after rounding to 6 decimals);

A tolerance needs its unit (``pp``, ``%`` or ``abs``) unless it is zero: ``"+5"`` could mean 5
points, 5 % or 5 units, and read as 5.0 absolute it could never fail. The sign is optional; when
written it must point the metric's bad way (``+`` for lower-is-better, ``-`` for
higher-is-better), since a tolerance is an allowed worsening: ``cer = "-0.5pp"`` reads like
"must improve", which is not a gate this tool offers, and is refused when the suite loads.
* ``"<= 0.2"``, ``"< 0.2"``, ``">= 0.8"``, ``"> 0.8"`` -- an absolute bound, needs no baseline.

Per suite (``[gates.suite]``): ``"significant:+0.5pp"`` fails the session only when the paired
bootstrap CI of (current - baseline) over the cases lies entirely beyond the margin in the bad
direction (see `stats.significant_regression`). ``"p95:+20%"`` (any percentile ``p<q>``, a
tolerance in ``%``, ``pp`` or ``abs``) fails it when the system's q-th percentile over the cases
it shares with its baseline is worse than the baseline's own q-th percentile over those cases by
more than the tolerance: ``wall_seconds = "p95:+20%"``, "p95 latency no more than 20 % worse",
where a mean would hide a slow tail.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pytest_doceval.errors import SuiteConfigError

BASELINE_DECIMALS = 6

_TOLERANCE = re.compile(r"^\s*([+-]?)\s*(\d+(?:\.\d*)?|\.\d+)\s*(pp|%|abs)?\s*$")
ACCEPTED_FORMS = "a tolerance '+0.5pp', '+10%', '+0.02abs' or '+0', or a bound '<= 0.2', '>= 0.8'"
_BOUND = re.compile(r"^\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d*)?|-?\.\d+)\s*$")
_SIGNIFICANT = re.compile(r"^\s*significant\s*:\s*(.+)$")
_PERCENTILE = re.compile(r"^\s*p(\d{1,2}(?:\.\d+)?|100)\s*:\s*(.+)$")
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
}


@dataclass(frozen=True)
class Tolerance:
    """Allowed worsening against the baseline: absolute (``pp``/plain) or relative (``%``)."""

    text: str
    amount: float
    relative: bool
    sign: str = ""

    def check_sign(self, metric: str, direction: str) -> None:
        """Refuse a sign that points the metric's good way (see the module docstring)."""
        bad = "+" if direction == "lower" else "-"
        if self.sign and self.sign != bad:
            raise SuiteConfigError(
                f"gate {metric} = {self.text!r}: {metric} is {direction}-is-better, so an "
                f"allowed worsening is written {bad}{self.text.lstrip('+- ')} (or without a sign)"
            )

    def limit(self, baseline: float, direction: str) -> float:
        allowance = abs(baseline) * self.amount if self.relative else self.amount
        return baseline + allowance if direction == "lower" else baseline - allowance


@dataclass(frozen=True)
class Bound:
    text: str
    op: str
    value: float

    def holds(self, value: float) -> bool:
        return _COMPARE[self.op](value, self.value)


Rule = Tolerance | Bound


@dataclass(frozen=True)
class SuiteGate:
    """``significant:<margin>``: the session fails on a significant regression beyond margin;
    with a `percentile`, ``p<q>:<tolerance>``: on the q-th percentile worse than the
    baseline's beyond the tolerance (module docstring)."""

    metric: str
    text: str
    margin: float
    tolerance: Tolerance
    percentile: float | None = None


def _amount(number: str, unit: str | None) -> tuple[float, bool]:
    value = float(number)
    if unit == "pp":
        return value / 100.0, False
    if unit == "%":
        return value / 100.0, True
    return value, False


def parse_rule(metric: str, text: str) -> Rule:
    if not isinstance(text, str):
        raise SuiteConfigError(f"gate {metric} = {text!r}: expected a string, {ACCEPTED_FORMS}")
    if match := _BOUND.match(text):
        return Bound(text.strip(), match.group(1), float(match.group(2)))
    if match := _TOLERANCE.match(text):
        sign, number, unit = match.groups()
        if unit is None and float(number) != 0:
            raise SuiteConfigError(
                f"gate {metric} = {text!r} is ambiguous (points, percent or units?); use "
                f"{ACCEPTED_FORMS}"
            )
        amount, relative = _amount(number, unit)
        return Tolerance(text.strip(), amount, relative, sign)
    raise SuiteConfigError(f"gate {metric} = {text!r} is not a rule: use {ACCEPTED_FORMS}")


def parse_case_gates(table: Mapping[str, object]) -> dict[str, list[Rule]]:
    gates: dict[str, list[Rule]] = {}
    for metric, value in table.items():
        if metric == "suite":
            continue
        texts = value if isinstance(value, list) else [value]
        gates[metric] = [parse_rule(metric, t) for t in texts]  # type: ignore[arg-type]
    return gates


def parse_suite_gates(table: Mapping[str, object]) -> list[SuiteGate]:
    gates = []
    for metric, value in table.items():
        quantile = _PERCENTILE.match(value) if isinstance(value, str) else None
        if quantile is not None:
            rule = parse_rule(metric, quantile.group(2))
            if not isinstance(rule, Tolerance):
                raise SuiteConfigError(
                    f"suite gate {metric} = {value!r}: expected 'p<q>:+<tolerance>' "
                    "(e.g. 'p95:+20%'), a tolerance against the baseline's percentile"
                )
            percentile = float(quantile.group(1))
            gates.append(SuiteGate(metric, str(value).strip(), rule.amount, rule, percentile))
            continue
        match = _SIGNIFICANT.match(value) if isinstance(value, str) else None
        tolerance = parse_rule(metric, match.group(1)) if match else None
        if not match or not isinstance(tolerance, Tolerance) or tolerance.relative:
            raise SuiteConfigError(
                f"suite gate {metric} = {value!r}: expected 'significant:+<margin>pp' or "
                "'significant:+<margin>abs' (an absolute margin in points or metric units), "
                "or 'p<q>:+<tolerance>' (a percentile against the baseline's, e.g. 'p95:+20%')"
            )
        gates.append(SuiteGate(metric, str(value).strip(), tolerance.amount, tolerance))
    return gates


def rounded(value: float) -> float:
    return round(float(value), BASELINE_DECIMALS)


def format_pp(value: float) -> str:
    """A change in metric units as percentage points, the unit the gate rules are written in
    (0.021 -> ``2.1pp``); infinity: ``no change``, NaN: ``n/a``."""
    if value != value:
        return "n/a"
    if value == float("inf"):
        return "no change"
    return f"{value * 100:.1f}pp"


def _fmt(value: float) -> str:
    return f"{value:.3f}" if abs(value) >= 0.001 or value == 0 else f"{value:.6f}"


def check_case(
    metric: str,
    value: float,
    baseline: float | None,
    rules: list[Rule],
    *,
    direction: str,
    label: str,
) -> list[str]:
    """Failure messages (empty when every rule holds), e.g.
    ``cer 0.153 > baseline 0.121 + 0.5pp (papers/attention[pymupdf])``."""
    failures: list[str] = []
    current = rounded(value)
    for rule in rules:
        if isinstance(rule, Bound):
            if not rule.holds(current):
                failures.append(f"{metric} {_fmt(current)} violates bound {rule.text} ({label})")
            continue
        if baseline is None:
            failures.append(
                f"{metric}: no baseline for {label}; run pytest --doceval --doceval-update "
                "to record one"
            )
            continue
        limit = rounded(rule.limit(baseline, direction))
        worse = current > limit if direction == "lower" else current < limit
        if worse:
            sign, cmp = ("+", ">") if direction == "lower" else ("-", "<")
            amount = rule.text.lstrip("+- ")
            failures.append(
                f"{metric} {_fmt(current)} {cmp} baseline {_fmt(baseline)} {sign} {amount} "
                f"({label})"
            )
    return failures
