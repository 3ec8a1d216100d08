"""The ``doceval-report/1`` JSON report's shape, as TypedDicts mypy checks and a test holds
against real reports (`tests/report_shape.py`).

A report (`Report`) holds run facts and one `SuiteSection` per suite. A section is flat: the
suite's definition (`SuiteMeta`: kind, path, scoring id, systems, notes, metric specs, gate
rules), then what `analysis.analyse_suite` computes from its rows (outcomes, rows, aggregates,
baseline deltas, gates), then what the run adds (unused baseline entries, baseline changes).
Two kinds of keys are open by design, since generic code never names what a kind measures:
the kind's own description (``Suite.describe()``: language, tracks, ...) and its analyses
(the keys ``analysis_keys`` lists). They join a section only through `add_kind_keys`.

On disk a NaN or infinite number is ``null`` (`rows.plain`); in memory it is a float. The
numbers that can be non-finite are therefore declared ``float | None``.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from pytest_doceval.config import StatsSettings as StatsSettings  # the report's `config`
from pytest_doceval.errors import DocevalError
from pytest_doceval.metrics.spec import MetricSpecEntry as MetricSpecEntry
from pytest_doceval.rows import Row

if typing.TYPE_CHECKING:
    from pytest_doceval.stats.interval import Interval

# A shard report's ``shard_basis`` when its cases were split by hash (no durations known);
# otherwise the basis names the durations report (`pytest_doceval.run.shards.basis`).
HASH_BASIS = "hash"


class Environment(TypedDict):
    python: str
    platform: str
    executable: NotRequired[str]  # reports before issue 37 named the interpreter's path
    packages: dict[str, str]  # distribution -> version, for those installed


class GateRules(TypedDict):
    case: dict[str, list[str]]  # metric -> its per-case rules as written
    suite: dict[str, str]  # metric -> its suite rule as written


class Beyond(TypedDict):
    """The cases of an aggregate beyond a threshold (``value <op> threshold``): from the
    metric's `MetricSpec.threshold`, or the suite's absolute per-case gate (``source``)."""

    op: str
    threshold: float
    source: str  # "kind" | "gate"
    cases: int
    n: int
    share: float | None


class Aggregate(TypedDict):
    """One system's one metric over its cases (``aggregates.<system>.<metric>``)."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    method: str  # how the interval was made (`stats.INTERVAL_METHODS`)
    small_n: bool
    corpus: NotRequired[float | None]  # a spec with ``counts`` or ``pooled``: the corpus value
    corpus_ci_low: NotRequired[float | None]
    corpus_ci_high: NotRequired[float | None]
    flagged: NotRequired[dict[str, int]]  # reason -> cases flagged on this metric
    # the per-case values' percentiles (`stats.distribution.PERCENTILES`: p0, p25, p50, p75,
    # p95, p99, p100)
    quantiles: NotRequired[dict[str, float]]
    beyond: NotRequired[Beyond]  # the share of cases past the metric's threshold


class PairedChange(TypedDict):
    """`kinds.analyses.paired_change_row`: the paired change a - b with its statistics."""

    direction: str
    n: int
    mean_diff: float | None
    ci_low: float | None
    ci_high: float | None
    method: str
    p_ttest: float | None
    p_wilcoxon: float | None
    # Cohen's d_z; null when the differences have no spread (all alike: infinite, or none).
    # Reports written before it have none.
    cohens_d: NotRequired[float | None]
    significant: bool
    verdict: str  # better, worse or unchanged, in the metric's direction
    mde: float | None


class BaselineDelta(PairedChange):
    """A system's headline metric, today against its baseline (``baseline_deltas``)."""

    system: str
    metric: str
    current_mean: float
    baseline_mean: float
    flagged: NotRequired[dict[str, int]]


class SuiteGate(TypedDict):
    """A ``[gates.suite]`` verdict for one system (``gates``); the statistics only when the
    gate could be evaluated (there was a baseline to compare)."""

    system: str
    metric: str
    rule: str
    passed: bool
    evaluated: bool
    n: NotRequired[int]
    mean_diff: NotRequired[float | None]
    ci_low: NotRequired[float | None]
    ci_high: NotRequired[float | None]
    method: NotRequired[str]
    mde: NotRequired[float | None]
    reliable: NotRequired[bool]
    power_note: NotRequired[str]
    # a percentile gate (``p95:+20%``): that percentile today, the baseline's, and the limit
    percentile: NotRequired[float]
    value: NotRequired[float | None]
    baseline_value: NotRequired[float | None]
    limit: NotRequired[float | None]
    message: str


class SuiteMeta(TypedDict):
    """A suite's definition; a suite that failed to load has only kind (None), path and its
    error. Plus the kind's own description keys (open, `add_kind_keys`)."""

    kind: str | None
    path: str
    scoring_id: NotRequired[str]
    systems: NotRequired[list[str]]
    notes: NotRequired[list[str]]
    metrics: NotRequired[dict[str, MetricSpecEntry]]
    gate_rules: NotRequired[GateRules]
    error: NotRequired[str]


class SuiteSection(SuiteMeta):
    """``suites.<name>``: the definition plus what was computed from the rows. Plus the kind's
    analyses under the keys ``analysis_keys`` names (open, `add_kind_keys`)."""

    outcomes: dict[str, int]  # outcome -> rows
    results: Sequence[Row]  # a `row_file.Rows` once written or read: rows read from disk
    aggregates: dict[str, dict[str, Aggregate]]  # system -> metric -> aggregate
    baseline_deltas: list[BaselineDelta]
    gates: list[SuiteGate]
    analysis_keys: list[str]
    unused_baseline: list[str]  # baseline entries no case of the suite has
    baseline_changes: list[str]  # what --doceval-update changed


class Report(TypedDict):
    schema: str
    created: str  # UTC, ISO 8601
    environment: Environment
    config: StatsSettings
    shard: str | None  # "K/N" for one shard of a run
    shard_basis: NotRequired[str]  # a shard's: how the run was split (run/shards.py `basis`)
    interrupted: bool
    limit: NotRequired[int]  # a smoke run of the first N cases of each suite (run/limit.py)
    suites: dict[str, SuiteSection]


# -- the boundaries where untyped values become typed ones ---------------------------------


def declared_keys(shape: type) -> frozenset[str]:
    """The keys a TypedDict declares."""
    attributes = vars(shape)
    return frozenset(attributes["__required_keys__"] | attributes["__optional_keys__"])


def add_kind_keys(
    section: SuiteMeta, items: Mapping[str, object], *, before: str | None = None
) -> None:
    """Add a kind's open keys (its description, its analyses' results) to `section`, in order,
    at its end or just ahead of key `before` (the JSON keeps a section's key order).

    The one place a section takes keys its TypedDict does not declare: mypy has no TypedDict
    with extra items yet (PEP 728), and a section is a plain dict at run time. A kind's key
    must not replace one the schema declares (a ``describe()`` returning ``results`` would
    silently overwrite the rows)."""
    clash = sorted(set(items) & declared_keys(SuiteSection))
    if clash:
        raise DocevalError(
            f"suite kind {section['kind']!r} reports {', '.join(clash)}, which the report "
            "itself uses; rename the kind's key"
        )
    target: object = section
    if not isinstance(target, dict):  # never: a TypedDict is a dict at run time
        raise TypeError(f"a report section is a dict, not {type(target).__name__}")
    if before is None or before not in target:
        target.update(items)
        return
    entries = list(target.items())
    at = list(target).index(before)
    target.clear()
    target.update([*entries[:at], *items.items(), *entries[at:]])


def kind_keys(section: Mapping[str, object]) -> dict[str, object]:
    """The kind's description keys of a section (neither declared nor an analysis)."""
    analyses = section.get("analysis_keys")
    skip = declared_keys(SuiteSection) | set(analyses if isinstance(analyses, list) else ())
    return {k: v for k, v in section.items() if k not in skip}


def aggregate_entry(interval: Interval) -> Aggregate:
    return {
        "mean": interval.mean,
        "ci_low": interval.ci_low,
        "ci_high": interval.ci_high,
        "n": interval.n,
        "method": interval.method,
        "small_n": interval.small_n,
    }


def baseline_delta(
    system: str, metric: str, current_mean: float, baseline_mean: float, change: Mapping[str, Any]
) -> BaselineDelta:
    """A `BaselineDelta` from `kinds.analyses.paired_change_row`'s dict (a shared room: it
    cannot import the report's types)."""
    return {
        "system": system,
        "metric": metric,
        "current_mean": current_mean,
        "baseline_mean": baseline_mean,
        "direction": change["direction"],
        "n": change["n"],
        "mean_diff": change["mean_diff"],
        "ci_low": change["ci_low"],
        "ci_high": change["ci_high"],
        "method": change["method"],
        "p_ttest": change["p_ttest"],
        "p_wilcoxon": change["p_wilcoxon"],
        "cohens_d": change["cohens_d"],
        "significant": change["significant"],
        "verdict": change["verdict"],
        "mde": change["mde"],
    }
