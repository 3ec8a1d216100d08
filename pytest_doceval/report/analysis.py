"""From result rows to a suite's evidence: aggregates, baseline deltas, suite gates, and the
kind's own analyses.

A pure function of the rows and the suite's meta (its metric specs and gate rules), so a run,
``doceval merge`` of shards and ``doceval report`` all compute the same numbers from the same
rows. Rows are sorted first: under pytest-xdist they arrive in any order, and the seeded
bootstrap must see one order. Everything about a metric comes from ``meta["metrics"]``.

The shared analyses read the rows' numbers from their table (`row_table.RowTable`, a column a
number), never the row dicts: a suite of 200,000 rows is analysed without decoding one. A
kind's own analyses get the rows as a sequence (`row_file.Rows`), read from disk as they
iterate.
"""

from __future__ import annotations

import contextvars
import functools
import os
from array import array
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from pytest_doceval import stats
from pytest_doceval.config import StatsConfig
from pytest_doceval.gates import Bound, format_pp, parse_rule, parse_suite_gates, rounded
from pytest_doceval.gates import SuiteGate as SuiteGateRule
from pytest_doceval.kinds.analyses import metric_interval, paired_change_row, values_by_system
from pytest_doceval.kinds.base import Analysis
from pytest_doceval.metrics.spec import MetricSpec, headline, specs_from_section
from pytest_doceval.report.schema import (
    Aggregate,
    BaselineDelta,
    Beyond,
    SuiteGate,
    SuiteMeta,
    SuiteSection,
    add_kind_keys,
    aggregate_entry,
    baseline_delta,
)
from pytest_doceval.row_file import Rows
from pytest_doceval.rows import Row, flag_reasons
from pytest_doceval.stats.distribution import beyond, percentile, percentiles
from pytest_doceval.stats.interval import Interval
from pytest_doceval.stats.power import paired_mde
from pytest_doceval.stats.resampling import shared_draws

# What lies beyond a gate's bound: the values the bound refuses.
_REFUSED = {"<=": ">", "<": ">=", ">=": "<", ">": "<="}
Tail = tuple[str, float, str]  # op, threshold, source ("kind" or "gate")


def tails(
    specs: Mapping[str, MetricSpec], case_rules: Mapping[str, Sequence[str]]
) -> dict[str, Tail]:
    """Per metric, what counts as beyond: a suite's absolute per-case gate on it (the first
    bound), else the kind's `MetricSpec.threshold`."""
    out: dict[str, Tail] = {}
    for metric, spec in specs.items():
        tail = spec.tail()
        if tail is not None:
            out[metric] = (*tail, "kind")
    for metric, texts in case_rules.items():
        bounds = [r for r in (parse_rule(metric, t) for t in texts) if isinstance(r, Bound)]
        if bounds and metric in specs:
            out[metric] = (_REFUSED[bounds[0].op], bounds[0].value, "gate")
    return out


def _beyond(values: Sequence[float], tail: Tail) -> Beyond:
    op, threshold, source = tail
    found = beyond(values, op, threshold)
    share = found.share
    return {
        "op": op,
        "threshold": threshold,
        "source": source,
        "cases": found.cases,
        "n": found.n,
        "share": None if share != share else share,
    }


def aggregates(
    rows: Sequence[Row],
    specs: Mapping[str, MetricSpec],
    config: StatsConfig,
    thresholds: Mapping[str, Tail] | None = None,
) -> dict[str, dict[str, Aggregate]]:
    """Per system and metric: mean with its CI and n (``method`` says which interval,
    ``small_n`` marks fewer than `stats.SMALL_N` cases) and the per-case values' percentiles
    (``quantiles``); for metrics whose spec names ``counts``, also the corpus rate (sum of
    edits / sum of reference lengths) and its CI (``pooled``: the pooled weighted share);
    ``flagged``: {reason: cases} when rows flag the metric (``row["flags"]``); ``beyond``: the
    share of cases past the metric's threshold (`tails`), where it has one."""
    rows = Rows.of(rows)
    places: list[tuple[str, str]] = []
    jobs: list[tuple[int, Callable[[], Aggregate]]] = []
    for metric, spec in specs.items():
        flagged = flag_reasons(rows, metric, dominance=spec.flag_dominance)
        tail = (thresholds or {}).get(metric)
        for system, cases in values_by_system(rows, metric).items():
            ordered = [cases[c] for c in sorted(cases)]
            job = functools.partial(_aggregate, rows, system, ordered, spec, config, flagged, tail)
            places.append((system, metric))
            jobs.append((len(ordered), job))
    out: dict[str, dict[str, Aggregate]] = {}
    for (system, metric), entry in zip(places, _each(jobs), strict=True):
        out.setdefault(system, {})[metric] = entry
    return out


def _aggregate(
    rows: Rows,
    system: str,
    values: list[float],
    spec: MetricSpec,
    config: StatsConfig,
    flagged: Mapping[str, dict[str, int]],
    tail: Tail | None,
) -> Aggregate:
    entry = aggregate_entry(metric_interval(values, spec, config))
    entry["quantiles"] = percentiles(values)
    if tail is not None:
        entry["beyond"] = _beyond(values, tail)
    if spec.counts is not None:
        _set_corpus(entry, _corpus(rows, system, spec.counts, config))
    if spec.pooled is not None:
        _set_corpus(entry, _pooled(rows, system, spec.pooled, config))
    if system in flagged:
        entry["flagged"] = flagged[system]
    return entry


# Intervals of big suites are computed two at a time: numpy resamples without the GIL.
_THREADS = 2
_BIG = 2_000  # cases from which an interval is worth a thread


def _each(jobs: list[tuple[int, Callable[[], Aggregate]]]) -> list[Aggregate]:
    """Every job's result (each with the cases it resamples), in order: on `_THREADS` threads
    when one has `_BIG` cases or more (each in a copy of this context, so
    `resampling.shared_draws` reaches them), else one after another. Each interval is
    computed alone, so the order they finish in changes nothing."""
    if max((n for n, _ in jobs), default=0) < _BIG or min(_THREADS, os.cpu_count() or 1) < 2:
        return [job() for _, job in jobs]
    with ThreadPoolExecutor(_THREADS, thread_name_prefix="doceval-interval") as pool:
        running = [pool.submit(contextvars.copy_context().run, job) for _, job in jobs]
        return [future.result() for future in running]


def _set_corpus(entry: Aggregate, interval: Interval) -> None:
    entry["corpus"] = interval.mean
    entry["corpus_ci_low"] = interval.ci_low
    entry["corpus_ci_high"] = interval.ci_high


_EDITS = ("substitutions", "deletions", "insertions", "reference_length")


def _corpus(rows: Rows, system: str, counts_key: str, config: StatsConfig) -> Interval:
    """Sum of edits / sum of reference lengths over the system's measured rows that have the
    counts entry `counts_key`, with its case bootstrap."""
    subs, dels, ins, lengths = rows.table.counts_entries(counts_key, _EDITS, rows.order, system)
    errors = subs + dels + ins  # whole numbers: the same sums as the rows' integers
    return stats.bootstrap_ratio_ci(
        errors, lengths, resamples=config.resamples, confidence=config.confidence, seed=config.seed
    )


def _pooled(rows: Rows, system: str, prefix: str, config: StatsConfig) -> Interval:
    """The corpus value of a `MetricSpec.pooled` metric: counts pooled per group first. Each
    measured row of the system is a case (one without such counts too); its groups are the
    counts entries named `prefix` + group, taken in the order of their names (so the sums do
    not depend on the order the rows came in)."""
    table = rows.table
    groups = []
    for key in sorted(table.counts_keys(prefix)):
        columns = [table.counts.get((key, f)) for f in ("matched", "total", "weight")]
        groups.append((key.removeprefix(prefix), table.counts_present[key], columns))
    cases: list[dict[str, tuple[float, float, float]]] = []
    for i in rows.order:
        if table.systems[i] != system or not table.measured(i):
            continue
        case = {}
        for group, present, (matched, total, weight) in groups:
            if present[i]:
                w = weight[i] if weight is not None and weight[i] == weight[i] else 1.0
                case[group] = (_at(matched, i), _at(total, i), w)
        cases.append(case)
    return stats.pooled_share(
        cases, resamples=config.resamples, confidence=config.confidence, seed=config.seed
    )


def _at(column: array[float] | None, i: int) -> float:
    return float("nan") if column is None else column[i]


def baseline_deltas(
    rows: Sequence[Row], specs: Mapping[str, MetricSpec], config: StatsConfig
) -> list[BaselineDelta]:
    """Per system and headline metric: paired difference current - baseline with its CI."""
    rows = Rows.of(rows)
    out: list[BaselineDelta] = []
    for metric in sorted(headline(specs)):
        current = values_by_system(rows, metric)
        baseline = values_by_system(rows, metric, source="baseline")
        direction = specs[metric].direction
        flagged = flag_reasons(rows, metric, dominance=specs[metric].flag_dominance)
        for system in sorted(current):
            common = sorted(set(current[system]) & set(baseline.get(system, {})))
            if not common:
                continue
            # Baselines hold 6 decimals; compare today's numbers at the same precision, or
            # rounding noise of 1e-7 on every case would read as a significant change.
            a = [rounded(current[system][c]) for c in common]
            b = [baseline[system][c] for c in common]
            delta = baseline_delta(
                system,
                metric,
                sum(a) / len(a),
                sum(b) / len(b),
                paired_change_row(a, b, direction, config, binary=specs[metric].binary),
            )
            if system in flagged:
                delta["flagged"] = flagged[system]
            out.append(delta)
    return out


def suite_gate_results(
    rows: Sequence[Row],
    gate_rules: Mapping[str, str],
    specs: Mapping[str, MetricSpec],
    config: StatsConfig,
) -> list[SuiteGate]:
    """``[gates.suite]`` verdicts per system; a system with no baseline to compare is reported
    as not evaluated (passed, with the reason), since per-case gates already fail on that."""
    rows = Rows.of(rows)
    out: list[SuiteGate] = []
    for gate in parse_suite_gates(gate_rules):
        current = values_by_system(rows, gate.metric)
        baseline = values_by_system(rows, gate.metric, source="baseline")
        for system in sorted(current):
            base = baseline.get(system, {})
            if gate.percentile is not None and set(current[system]) & set(base):
                direction = specs[gate.metric].direction
                out.append(percentile_gate(system, gate, current[system], base, direction))
                continue
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
                direction=specs[gate.metric].direction,
                margin=gate.margin,
                resamples=config.resamples,
                confidence=config.confidence,
                seed=config.seed,
            )
            common = sorted(set(current[system]) & set(base))
            mde = paired_mde(
                [rounded(current[system][c]) for c in common],
                [base[c] for c in common],
                binary=specs[gate.metric].binary,
                alpha=(1 - config.confidence) / 2,
                alternative="larger",
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
                    "method": decision.method,
                    "mde": mde,
                    "reliable": mde <= gate.margin,
                    "power_note": power_note(gate.margin, mde),
                    "message": f"[{system}] {decision.message}",
                }
            )
    return out


def percentile_gate(
    system: str,
    gate: SuiteGateRule,
    current: Mapping[str, float],
    baseline: Mapping[str, float],
    direction: str,
) -> SuiteGate:
    """A ``p<q>:<tolerance>`` gate's verdict for one system: its q-th percentile over the cases
    it shares with its baseline against the baseline's over the same cases."""
    assert gate.percentile is not None
    common = sorted(set(current) & set(baseline))
    now = rounded(percentile([rounded(current[c]) for c in common], gate.percentile))
    before = rounded(percentile([baseline[c] for c in common], gate.percentile))
    limit = rounded(gate.tolerance.limit(before, direction))
    worse = now > limit if direction == "lower" else now < limit
    q = f"p{gate.percentile:g}"
    cmp = (">" if worse else "<=") if direction == "lower" else ("<" if worse else ">=")
    sign = "+" if direction == "lower" else "-"
    return {
        "system": system,
        "metric": gate.metric,
        "rule": gate.text,
        "passed": not worse,
        "evaluated": True,
        "n": len(common),
        "percentile": gate.percentile,
        "value": now,
        "baseline_value": before,
        "limit": limit,
        "message": (
            f"[{system}] {gate.metric} {q} {now:.6g} {cmp} baseline {q} {before:.6g} "
            f"{sign} {gate.tolerance.text.lstrip('+- ')} (limit {limit:.6g}, n={len(common)})"
        ),
    }


def power_note(margin: float, mde: float) -> str:
    """What a suite gate can see: the regressions it fails on with 80% power (beyond its
    margin by the MDE), and whether its margin is below the MDE."""
    if mde != mde:
        return "too few cases to say what this gate detects"
    if mde == float("inf"):
        return "this suite cannot detect a change with 80% power (too few cases or discordances)"
    detects = f"this suite detects changes of {format_pp(mde)} or more (80% power)"
    if mde <= margin:
        return detects
    return (
        f"{detects}; its tolerance {format_pp(margin)} is below that: it cannot reliably fail "
        f"on a regression smaller than {format_pp(margin + mde)}"
    )


def in_memory(rows: Rows) -> list[Row]:
    """Rows given as a list stay a list in the section, each a copy (as `rows.sort_rows`)."""
    return [row.copy() for row in rows]


def outcome_counts(rows: Sequence[Row]) -> dict[str, int]:
    table = Rows.of(rows)
    return dict(sorted(table.table.outcome_counts(table.order).items()))


def analyse_suite(
    meta: SuiteMeta,
    rows: Sequence[Row],
    config: StatsConfig,
    analyses: Sequence[Analysis] = (),
    *,
    unused_baseline: Sequence[str] = (),
    baseline_changes: Sequence[str] = (),
) -> SuiteSection:
    """A suite's section of the report: `meta` (kind, scoring id, systems, metric specs, gate
    rules, notes, ...) plus everything computed from the rows, the kind's analyses included,
    then what the run says of the suite's baseline (entries no case has; what an update
    changed)."""
    ordered = Rows.of(rows).sorted()
    rows = ordered if isinstance(rows, Rows) else in_memory(ordered)
    specs = specs_from_section(meta)
    gate_rules = meta["gate_rules"]["suite"] if "gate_rules" in meta else {}
    case_rules = meta["gate_rules"].get("case", {}) if "gate_rules" in meta else {}
    # Every interval of the suite over n cases resamples the same cases (one seed): drawn once.
    with shared_draws():
        section: SuiteSection = {
            **meta,
            "outcomes": outcome_counts(ordered),
            "results": rows,
            "aggregates": aggregates(ordered, specs, config, tails(specs, case_rules)),
            "baseline_deltas": baseline_deltas(ordered, specs, config),
            "gates": suite_gate_results(ordered, gate_rules, specs, config),
            "analysis_keys": [a.key for a in analyses],
            "unused_baseline": list(unused_baseline),
            "baseline_changes": list(baseline_changes),
        }
        results = {a.key: a(ordered, meta, config) for a in analyses}
    add_kind_keys(section, results, before="unused_baseline")
    return section
