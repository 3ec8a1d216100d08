"""Suite-level analyses that any kind may list in its ``analyses``.

An analysis is an object with a ``key`` and a ``__call__(rows, meta, stats_config)`` that
returns builtin types; its result lands in the suite's report section under ``key``. It reads
what it needs to know about metrics from ``meta["metrics"]`` (the kind's specs), never from a
metric's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pytest_doceval.config import StatsConfig
from pytest_doceval.metrics.spec import MetricSpec, headline, specs_from_section
from pytest_doceval.row_file import table_of
from pytest_doceval.rows import flag_reasons, is_measured

if TYPE_CHECKING:
    from pytest_doceval.stats.interval import Interval


def metric_interval(values: Sequence[float], spec: MetricSpec, config: StatsConfig) -> Interval:
    """The mean of one metric's per-case values with THE interval of that mean: the method
    `stats.mean_interval` chooses for the spec (Wilson for a ``binary`` metric), bounds
    clipped to the spec's ``bounds``. Every table that shows a metric's mean over cases (the
    summary's aggregates, a kind's accuracy table) calls this, so one number never carries two
    intervals on one page."""
    from pytest_doceval.stats.intervals import mean_interval  # on use: numpy/scipy are heavy

    interval = mean_interval(
        values,
        binary=spec.binary,
        resamples=config.resamples,
        confidence=config.confidence,
        seed=config.seed,
    )
    return replace(interval, ci_low=spec.clip(interval.ci_low), ci_high=spec.clip(interval.ci_high))


def values_by_system(
    rows: Sequence[Mapping[str, Any]], metric: str, source: str = "metrics"
) -> dict[str, dict[str, float]]:
    """{system: {case: value}} of measured rows having `metric` (in `metrics` or `baseline`);
    read from their table when the rows are a `row_file.Rows` (nothing decoded)."""
    found = table_of(rows)
    if found is not None:
        table, order = found
        return table.values(metric, order, source)
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        values = row.get(source) or {}
        if is_measured(row) and values.get(metric) is not None:
            out.setdefault(row["system"], {})[row["case"]] = float(values[metric])
    return out


def paired_change_row(
    a: Sequence[float],
    b: Sequence[float],
    direction: str,
    config: StatsConfig,
    *,
    binary: bool = False,
) -> dict[str, Any]:
    """A report's row of the paired change a - b over the same cases (baseline deltas, a
    kind's conditions such as OCR variants): the `stats.paired_change` record -- mean with CI
    and the interval's method, paired t and Wilcoxon p-values, the minimum detectable effect
    (``mde``; McNemar's for a `binary` metric), Cohen's d_z (how far the change stands out of
    the cases' spread: a summary lists the largest first) -- with the verdict in the metric's
    direction."""
    from pytest_doceval.stats.comparisons import paired_change, verdict  # on use: heavy

    change = paired_change(
        a,
        b,
        binary=binary,
        alpha=1 - config.confidence,
        resamples=config.resamples,
        confidence=config.confidence,
        seed=config.seed,
    )
    judged = verdict(change.ci_low, change.ci_high, direction)
    return {
        "direction": direction,
        "n": change.n,
        "mean_diff": change.mean_diff,
        "ci_low": change.ci_low,
        "ci_high": change.ci_high,
        "method": change.method,
        "p_ttest": change.p_ttest,
        "p_wilcoxon": change.p_wilcoxon,
        "cohens_d": change.cohens_d,
        "significant": judged != "unchanged",
        "verdict": judged,
        "mde": change.mde,
    }


@dataclass(frozen=True)
class AllPairs:
    """Every pair of systems on every headline metric, over the cases both measured: paired
    bootstrap CI of the mean difference, paired t, Wilcoxon, Cohen's d (McNemar for binary
    metrics). ``flagged``: {system: {reason: cases}} for a side whose rows flag the metric."""

    key: str = "comparisons"

    def __call__(
        self, rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any], stats_config: StatsConfig
    ) -> list[dict[str, Any]]:
        specs = specs_from_section(meta)
        out: list[dict[str, Any]] = []
        for metric in sorted(headline(specs)):
            by_system = values_by_system(rows, metric)
            flagged = flag_reasons(rows, metric, dominance=specs[metric].flag_dominance)
            for row in pairwise_rows(by_system, metric, specs[metric], stats_config):
                marks = {s: flagged[s] for s in (row["a"], row["b"]) if s in flagged}
                out.append({**row, "flagged": marks} if marks else row)
        return out


def pairwise_rows(
    by_system: Mapping[str, Mapping[str, float]],
    metric: str,
    spec: MetricSpec,
    stats_config: StatsConfig,
) -> list[dict[str, Any]]:
    """Every pair of systems on `metric` over the cases both measured (none for fewer than two
    systems): the rows of an all-pairs comparison, each with its ``mde`` (`stats.power`: the
    smallest difference this comparison detects with 80% power, two-sided, unadjusted)."""
    from pytest_doceval.stats.comparisons import pairwise_comparisons

    if len(by_system) < 2:
        return []
    return [
        comparison.to_dict()
        for comparison in pairwise_comparisons(
            by_system,
            metric=metric,
            binary=spec.binary,
            resamples=stats_config.resamples,
            confidence=stats_config.confidence,
            seed=stats_config.seed,
        )
    ]
