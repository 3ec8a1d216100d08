"""Gate rules from ``suite.toml`` and their verdicts.

Per case (``[gates]``), a metric takes one rule or a list of rules:

* ``"+0.5pp"`` -- may be at most 0.5 percentage points (0.005) worse than its baseline, in the
  metric's bad direction (up for ``cer``, down for ``structure_f1``; the sign is optional and
  only documents intent);
* ``"+10%"`` -- at most 10 % worse than its baseline, relative to the baseline value;
* ``"+0"`` -- no worse than the baseline at all (after rounding to 6 decimals);
* ``"<= 0.2"``, ``"< 0.2"``, ``">= 0.8"``, ``"> 0.8"`` -- an absolute bound, needs no baseline.

Per suite (``[gates.suite]``): ``"significant:+0.5pp"`` fails the session only when the paired
bootstrap CI of (current - baseline) over the cases lies entirely beyond the margin in the bad
direction (see `stats.significant_regression`).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pytest_doceval.errors import SuiteConfigError

BASELINE_DECIMALS = 6

_TOLERANCE = re.compile(r"^\s*([+-]?)\s*(\d+(?:\.\d*)?|\.\d+)\s*(pp|%)?\s*$")
_BOUND = re.compile(r"^\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d*)?|-?\.\d+)\s*$")
_SIGNIFICANT = re.compile(r"^\s*significant\s*:\s*(.+)$")
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
    """``significant:<margin>``: the session fails on a significant regression beyond margin."""

    metric: str
    text: str
    margin: float


def _amount(number: str, unit: str | None) -> tuple[float, bool]:
    value = float(number)
    if unit == "pp":
        return value / 100.0, False
    if unit == "%":
        return value / 100.0, True
    return value, False


def parse_rule(metric: str, text: str) -> Rule:
    if not isinstance(text, str):
        raise SuiteConfigError(f"gate for {metric!r} must be a string like '+0.5pp', got {text!r}")
    if match := _BOUND.match(text):
        return Bound(text.strip(), match.group(1), float(match.group(2)))
    if match := _TOLERANCE.match(text):
        amount, relative = _amount(match.group(2), match.group(3))
        return Tolerance(text.strip(), amount, relative)
    raise SuiteConfigError(
        f"gate {metric} = {text!r} is not a rule: use a tolerance ('+0.5pp', '+10%', '+0') "
        "or a bound ('<= 0.2', '>= 0.8')"
    )


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
        match = _SIGNIFICANT.match(value) if isinstance(value, str) else None
        tolerance = parse_rule(metric, match.group(1)) if match else None
        if not match or not isinstance(tolerance, Tolerance) or tolerance.relative:
            raise SuiteConfigError(
                f"suite gate {metric} = {value!r}: expected 'significant:+<margin>pp' "
                "(an absolute margin in percentage points or metric units)"
            )
        gates.append(SuiteGate(metric, value.strip(), tolerance.amount))  # type: ignore[union-attr]
    return gates


def rounded(value: float) -> float:
    return round(float(value), BASELINE_DECIMALS)


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
