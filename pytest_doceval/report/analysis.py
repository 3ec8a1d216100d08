"""From result rows to a suite's evidence: aggregates, comparisons, baseline deltas, suite gates.

A pure function of the rows (and the suite's gate rules), so a run, ``doceval merge`` of shards
and ``doceval report`` all compute the same numbers from the same rows. Rows are sorted first:
under pytest-xdist they arrive in any order, and the seeded bootstrap must see one order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_doceval import stats
from pytest_doceval.config import StatsConfig
from pytest_doceval.gates import parse_suite_gates, rounded
from pytest_doceval.metrics import PER_TYPE_PREFIXES, direction_of
from pytest_doceval.results import MEASURED

# Metrics whose corpus-level rate is a sum of counts (edits / reference length).
COUNT_METRICS = ("cer", "wer", "body_cer", "cer_raw")


def verdict(ci_low: float, ci_high: float, direction: str, margin: float = 0.0) -> str:
    """``worse`` / ``better`` when the CI of a change lies entirely beyond `margin` in the
    metric's bad / good direction, else ``unchanged``."""
    if direction == "lower":
        return "worse" if ci_low > margin else "better" if ci_high < -margin else "unchanged"
    return "worse" if ci_high < -margin else "better" if ci_low > margin else "unchanged"


def sort_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return sorted((dict(r) for r in rows), key=lambda r: (str(r["case"]), str(r["system"])))


def headline_metrics(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Metrics worth a comparison table: every measured metric except per-element-type ones."""
    names = {m for r in rows if r.get("outcome") in MEASURED for m in r.get("metrics", {})}
    return sorted(n for n in names if not n.startswith(PER_TYPE_PREFIXES))


def values_by_system(
    rows: Sequence[Mapping[str, Any]], metric: str, source: str = "metrics"
) -> dict[str, dict[str, float]]:
    """{system: {case: value}} of measured rows having `metric` (in `metrics` or `baseline`)."""
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        values = row.get(source) or {}
        if row.get("outcome") in MEASURED and metric in values and values[metric] is not None:
            out.setdefault(row["system"], {})[row["case"]] = float(values[metric])
    return out


def _is_binary(by_system: Mapping[str, Mapping[str, float]]) -> bool:
    values = {v for cases in by_system.values() for v in cases.values()}
    return bool(values) and values <= {0.0, 1.0}


def aggregates(rows: Sequence[Mapping[str, Any]], config: StatsConfig) -> dict[str, Any]:
    """Per system and metric: mean with seeded case-level bootstrap CI and n; for count
    metrics also the corpus rate (sum of edits / sum of reference lengths) and its CI."""
    out: dict[str, dict[str, Any]] = {}
    metrics = sorted({m for r in rows if r.get("outcome") in MEASURED for m in r["metrics"]})
    for metric in metrics:
        for system, cases in values_by_system(rows, metric).items():
            ordered = [cases[c] for c in sorted(cases)]
            interval = stats.bootstrap_mean_ci(
                ordered, resamples=config.resamples, confidence=config.confidence, seed=config.seed
            )
            entry: dict[str, Any] = interval.to_dict()
            if metric in COUNT_METRICS:
                entry.update(_corpus(rows, system, metric, config))
            out.setdefault(system, {})[metric] = entry
    return out


def _corpus(
    rows: Sequence[Mapping[str, Any]], system: str, metric: str, config: StatsConfig
) -> dict[str, Any]:
    counts = [
        r["counts"][metric]
        for r in rows
        if r["system"] == system and r.get("outcome") in MEASURED and metric in r.get("counts", {})
    ]
    errors = [c["substitutions"] + c["deletions"] + c["insertions"] for c in counts]
    lengths = [c["reference_length"] for c in counts]
    interval = stats.bootstrap_ratio_ci(
        errors, lengths, resamples=config.resamples, confidence=config.confidence, seed=config.seed
    )
    return {
        "corpus": interval.mean,
        "corpus_ci_low": interval.ci_low,
        "corpus_ci_high": interval.ci_high,
    }


def comparisons(rows: Sequence[Mapping[str, Any]], config: StatsConfig) -> list[dict[str, Any]]:
    """Every pair of systems on every headline metric, over the cases both measured."""
    out: list[dict[str, Any]] = []
    for metric in headline_metrics(rows):
        by_system = values_by_system(rows, metric)
        if len(by_system) < 2:
            continue
        for comparison in stats.pairwise_comparisons(
            by_system,
            metric=metric,
            binary=_is_binary(by_system),
            resamples=config.resamples,
            confidence=config.confidence,
            seed=config.seed,
        ):
            out.append(comparison.to_dict())
    return out


def baseline_deltas(rows: Sequence[Mapping[str, Any]], config: StatsConfig) -> list[dict[str, Any]]:
    """Per system and headline metric: paired difference current - baseline with its CI."""
    out: list[dict[str, Any]] = []
    for metric in headline_metrics(rows):
        current = values_by_system(rows, metric)
        baseline = values_by_system(rows, metric, source="baseline")
        for system in sorted(current):
            common = sorted(set(current[system]) & set(baseline.get(system, {})))
            if not common:
                continue
            # Baselines hold 6 decimals; compare today's numbers at the same precision, or
            # rounding noise of 1e-7 on every case would read as a significant change.
            a = [rounded(current[system][c]) for c in common]
            b = [baseline[system][c] for c in common]
            interval = stats.paired_bootstrap_ci(
                a, b, resamples=config.resamples, confidence=config.confidence, seed=config.seed
            )
            direction = direction_of(metric)
            change = verdict(interval.ci_low, interval.ci_high, direction)
            out.append(
                {
                    "system": system,
                    "metric": metric,
                    "direction": direction,
                    "n": interval.n,
                    "current_mean": sum(a) / len(a),
                    "baseline_mean": sum(b) / len(b),
                    "mean_diff": interval.mean,
                    "ci_low": interval.ci_low,
                    "ci_high": interval.ci_high,
                    "p_ttest": stats.paired_ttest_p(a, b),
                    "p_wilcoxon": stats.wilcoxon_p(a, b),
                    "significant": change != "unchanged",
                    "verdict": change,
                }
            )
    return out


def suite_gate_results(
    rows: Sequence[Mapping[str, Any]], gate_rules: Mapping[str, str], config: StatsConfig
) -> list[dict[str, Any]]:
    """``[gates.suite]`` verdicts per system; a system with no baseline to compare is reported
    as not evaluated (passed, with the reason), since per-case gates already fail on that."""
    out: list[dict[str, Any]] = []
    for gate in parse_suite_gates(gate_rules):
        current = values_by_system(rows, gate.metric)
        baseline = values_by_system(rows, gate.metric, source="baseline")
        for system in sorted(current):
            base = baseline.get(system, {})
            if not set(current[system]) & set(base):
                out.append(
                    {
                        "system": system,
                        "metric": gate.metric,
                        "rule": gate.text,
                        "passed": True,
                        "evaluated": False,
                        "message": f"{gate.metric} [{system}]: no baseline to compare",
                    }
                )
                continue
            decision = stats.significant_regression(
                {case: rounded(value) for case, value in current[system].items()},
                base,
                metric=gate.metric,
                direction=direction_of(gate.metric),
                margin=gate.margin,
                resamples=config.resamples,
                confidence=config.confidence,
                seed=config.seed,
            )
            out.append(
                {
                    "system": system,
                    "metric": gate.metric,
                    "rule": gate.text,
                    "passed": not decision.failed,
                    "evaluated": True,
                    "n": decision.n,
                    "mean_diff": decision.mean_diff,
                    "ci_low": decision.ci_low,
                    "ci_high": decision.ci_high,
                    "message": f"[{system}] {decision.message}",
                }
            )
    return out


def outcome_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    return dict(sorted(counts.items()))


# What `analyse_suite` computes from the rows (and the session adds per run); the rest of a
# suite's section is its definition, which `doceval merge` requires to agree across shards.
COMPUTED_KEYS = frozenset(
    {
        "results",
        "aggregates",
        "comparisons",
        "baseline_deltas",
        "gates",
        "metrics",
        "outcomes",
        "unused_baseline",
        "baseline_changes",
    }
)


def analyse_suite(
    meta: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], config: StatsConfig
) -> dict[str, Any]:
    """A suite's section of the report: `meta` (kind, normalization, systems, gate rules,
    notes, ...) plus everything computed from the rows."""
    rows = sort_rows(rows)
    metric_names = sorted({m for r in rows for m in r.get("metrics", {})})
    gate_rules = dict(meta.get("gate_rules", {}).get("suite", {}))
    return {
        **meta,
        "metrics": {m: {"direction": direction_of(m)} for m in metric_names},
        "outcomes": outcome_counts(rows),
        "results": rows,
        "aggregates": aggregates(rows, config),
        "comparisons": comparisons(rows, config),
        "baseline_deltas": baseline_deltas(rows, config),
        "gates": suite_gate_results(rows, gate_rules, config),
    }
