"""What the page needs to know about a report, read once: suites in reviewer order, each
suite's metric specs, headline metrics and systems, outcome counts, and how to read a
baseline delta. Nothing here knows a metric or a kind by name: a metric's direction, whether
it is a headline metric and its description come from ``section["metrics"]`` only.

A suite's rows are read once into a `row_file.Rows` (a report read from disk already holds
them so): counts, outcomes and systems come from its table, and only the per-case table and
details decode the rows themselves, one at a time."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_doceval.html.fmt import mapping, mappings, num, strings, unique
from pytest_doceval.row_file import Rows

# Outcomes in the order a reviewer reads them; any other outcome follows, sorted.
OUTCOMES = ("error", "failed", "skipped", "passed")
FAILING = ("error", "failed")


def case_anchor(suite: int, row: int) -> str:
    """The HTML report's anchor of row `row` of the `suite`-th suite (in the report's order):
    report.js opens the page at that row (``#case-s<suite>-r<row>``)."""
    return f"case-s{suite}-r{row}"


@dataclass(frozen=True)
class Spec:
    """A metric's spec as the report states it; ``direction`` None when it does not."""

    direction: str | None = None
    headline: bool = True
    description: str = ""


@dataclass(frozen=True)
class Change:
    """How a metric moved against the baseline: ``worse``/``better`` (by the metric's
    direction), ``same`` (no change beyond float noise), ``changed`` (direction unknown) or
    ``""`` (no finite difference); and whether the move is significant."""

    verdict: str
    significant: bool


@dataclass(frozen=True)
class SuiteView:
    """One suite's section with what the renderers ask of it, computed once."""

    index: int
    name: str
    data: Mapping[str, Any]
    confidence: float
    specs: Mapping[str, Spec] = field(default_factory=dict)
    headline: list[str] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)

    def direction(self, metric: str) -> str | None:
        return self.specs.get(metric, Spec()).direction

    def rows(self) -> Rows:
        return rows_of(self.data)


def rows_of(suite: Mapping[str, Any]) -> Rows:
    """A suite's rows (the report's ``results``; rows that are not objects are left out) with
    their table: read once, then the same object (`suite_views` keeps it in the view)."""
    results = suite.get("results")
    if isinstance(results, Rows):
        return results
    return Rows.of(mappings(results))


def judge(diff: float | None, direction: str | None) -> str:
    """``better``/``worse``/``same`` for a change in a metric, ``changed`` when the metric's
    direction is unknown, ``""`` without a finite number."""
    if diff is None or not math.isfinite(diff):
        return ""
    if abs(diff) < 5e-7:  # baselines keep 6 decimals: smaller is rounding noise
        return "same"
    if direction not in ("lower", "higher"):
        return "changed"
    worse = diff > 0 if direction == "lower" else diff < 0
    return "worse" if worse else "better"


# A paired test needs two differences: with fewer there is no variance, no interval, no p.
TESTABLE_N = 2


def not_testable(n: Any) -> str:
    """``not testable (n = 1)`` for a comparison over fewer than `TESTABLE_N` pairs (it can
    find no difference, so "no significant difference" would mislead); else ``""``."""
    x = num(n)
    if x is None or x >= TESTABLE_N:
        return ""
    return f"not testable (n = {round(x):,})"


def unchanged(delta: Mapping[str, Any]) -> bool:
    """Whether every case's value is its baseline's (to the baselines' 6 decimals): a mean
    difference of 0 with an interval of [0, 0], or one case's difference of 0. A mean of 0
    whose cases moved both ways is no such thing: it is within its CI, not unchanged."""
    if judge(num(delta.get("mean_diff")), None) != "same":
        return False
    n = num(delta.get("n"))
    if n is not None and n < TESTABLE_N:
        return True
    bounds = [num(delta.get("ci_low")), num(delta.get("ci_high"))]
    return all(b is not None and judge(b, None) == "same" for b in bounds)


def change(delta: Mapping[str, Any], direction: str | None) -> Change:
    """A baseline delta read as a change. The analysis's ``verdict`` decides when present
    (it applied the metric's direction to the CI); otherwise ``significant`` (or a CI that
    excludes zero) with the direction of the mean difference."""
    moved = judge(num(delta.get("mean_diff")), direction)
    stated = delta.get("verdict")
    if stated in ("worse", "better"):
        return Change(str(stated), True)
    if stated == "unchanged":
        return Change(moved, False)
    flag = delta.get("significant")
    if not isinstance(flag, bool):
        low, high = num(delta.get("ci_low")), num(delta.get("ci_high"))
        flag = low is not None and high is not None and (low > 0 or high < 0)
    return Change(moved, flag and moved in ("worse", "better", "changed"))


def specs(suite: Mapping[str, Any]) -> dict[str, Spec]:
    out = {}
    for name, raw in mapping(suite.get("metrics")).items():
        spec = mapping(raw)
        direction = spec.get("direction")
        headline = spec.get("headline")
        out[str(name)] = Spec(
            direction=direction if direction in ("lower", "higher") else None,
            headline=headline if isinstance(headline, bool) else True,
            description=str(spec.get("description") or ""),
        )
    return out


def headline_metrics(suite: Mapping[str, Any], declared: Mapping[str, Spec]) -> list[str]:
    """Headline metrics in the kind's declaration order. A section without specs (an old
    report) gets every metric it measured, none of them with a direction."""
    if declared:
        return [name for name, spec in declared.items() if spec.headline]
    names: list[str] = []
    for per_system in mapping(suite.get("aggregates")).values():
        names.extend(str(m) for m in mapping(per_system))
    if not names:
        names.extend(rows_of(suite).table.metrics)
    return unique(names)


def systems(suite: Mapping[str, Any]) -> list[str]:
    names = strings(suite.get("systems"))
    names.extend(str(s) for s in mapping(suite.get("aggregates")))
    rows = rows_of(suite)
    names.extend(s for s in (rows.table.systems[i] for i in rows.order) if s)
    return unique(names)


def confidence(report: Mapping[str, Any]) -> float:
    value = num(mapping(report.get("config")).get("confidence"))
    return value if value is not None and 0 < value < 1 else 0.95


def outcome_counts(suite: Mapping[str, Any]) -> dict[str, int]:
    """Tests by outcome, one per row, exactly as each row's ``outcome`` says (so the page
    agrees with pytest's own summary)."""
    rows = rows_of(suite)
    return rows.table.outcome_counts(rows.order)


def ordered_outcomes(counts: Mapping[str, int]) -> list[str]:
    return [o for o in OUTCOMES if o in counts] + sorted(o for o in counts if o not in OUTCOMES)


def failed_gates(suite: Mapping[str, Any]) -> int:
    return sum(1 for g in mappings(suite.get("gates")) if g.get("passed") is False)


def changes(view: SuiteView) -> list[tuple[Mapping[str, Any], Change]]:
    """Every baseline delta of the suite with its reading."""
    return [
        (d, change(d, view.direction(str(d.get("metric")))))
        for d in mappings(view.data.get("baseline_deltas"))
    ]


def attention(view: SuiteView) -> int:
    """0: the suite failed (error, failed or errored tests, failed gates); 1: a metric changed
    significantly against the baseline; 2: nothing for a reviewer to look at first."""
    counts = outcome_counts(view.data)
    if view.data.get("error") or failed_gates(view.data) or any(counts.get(o) for o in FAILING):
        return 0
    if any(c.significant for _, c in changes(view)):
        return 1
    return 2


def suite_views(report: Mapping[str, Any]) -> list[SuiteView]:
    """The report's suites, the ones needing attention first (stable otherwise)."""
    level = confidence(report)
    views: list[SuiteView] = []
    for name, data in mapping(report.get("suites")).items():
        if not isinstance(data, Mapping):
            continue
        declared = specs(data)
        data = {**data, "results": rows_of(data)}  # read once for every part of the page
        views.append(
            SuiteView(
                index=len(views),
                name=str(name),
                data=data,
                confidence=level,
                specs=declared,
                headline=headline_metrics(data, declared),
                systems=systems(data),
            )
        )
    return sorted(views, key=lambda v: (attention(v), v.index))


def total_outcomes(views: Sequence[SuiteView]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for view in views:
        for outcome, n in outcome_counts(view.data).items():
            totals[outcome] = totals.get(outcome, 0) + n
    return totals


def direction_label(direction: str | None) -> str:
    return {"lower": "↓ lower is better", "higher": "↑ higher is better"}.get(
        direction or "", "direction not stated"
    )


def delta_index(view: SuiteView) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {
        (str(d.get("system")), str(d.get("metric"))): d
        for d in mappings(view.data.get("baseline_deltas"))
    }
