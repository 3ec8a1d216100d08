"""Summary tables: systems x headline metrics (mean, CI with its method, n, a small-n mark,
the change against the baseline with its CI, coloured by the metric's direction when
significant), the terminal's five columns first and the rest folded so the table fits a
1,400 px window; the metric legend, the cost table, and the suite gate table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_doceval.html.fmt import (
    esc,
    fmt,
    fmt_ci,
    fmt_int,
    fmt_p,
    fmt_signed,
    mapping,
    mappings,
    plural,
    strings,
    unique,
)
from pytest_doceval.html.model import (
    Change,
    SuiteView,
    change,
    delta_index,
    direction_label,
    failed_gates,
    not_testable,
)
from pytest_doceval.metrics.cost import cost_cell, cost_columns
from pytest_doceval.report.terminal import TERMINAL_COLUMNS
from pytest_doceval.rows import FLAG_MARK, describe_flags


def delta_title(delta: Mapping[str, Any], reading: Change, confidence: float) -> str:
    word = {"worse": "worse", "better": "better", "same": "unchanged"}.get(
        reading.verdict, "changed"
    )
    return (
        f"vs baseline {fmt(delta.get('baseline_mean'))}: {fmt_signed(delta.get('mean_diff'))} "
        f"{fmt_ci(delta)} {confidence:.0%} CI, n={fmt_int(delta.get('n'))}, "
        f"p(t)={fmt_p(delta.get('p_ttest'))}, p(Wilcoxon)={fmt_p(delta.get('p_wilcoxon'))}"
        f" — {'significantly' if reading.significant else 'not significantly'} {word}"
    )


def _delta_html(delta: Mapping[str, Any], direction: str | None, confidence: float) -> str:
    """The change against the baseline as numbers, always: the mean difference and its CI,
    coloured (with an arrow) only when significant; otherwise muted, with why it is not
    (too few cases to test, or within its interval)."""
    reading = change(delta, direction)
    if not reading.verdict:
        return ""
    tip = esc(delta_title(delta, reading, confidence))
    numbers = (
        f'<span class="diff-mean">{esc(fmt_signed(delta.get("mean_diff")))}</span> '
        f'<span class="diff-ci">{esc(fmt_ci(delta))}</span> vs baseline'
    )
    if not reading.significant:
        why = not_testable(delta.get("n")) or f"not significant at n = {fmt_int(delta.get('n'))}"
        return (
            f'<div class="delta {reading.verdict} ns" title="{tip}">{numbers}'
            f'<div class="why">{esc(why)}</div></div>'
        )
    arrow = {
        "worse": "▲" if direction == "lower" else "▼",
        "better": "▼" if direction == "lower" else "▲",
    }.get(reading.verdict, "•")
    return (
        f'<div class="delta {reading.verdict} sig" title="{tip}">{arrow} {numbers} '
        f'<span class="sigmark">significant</span></div>'
    )


def small_n_badge(agg: Mapping[str, Any]) -> str:
    if agg.get("small_n") is not True:
        return ""
    tip = (
        f"Only {fmt_int(agg.get('n'))} cases: an interval from so few values is rough (it can "
        "be too narrow or too wide); add cases before trusting it."
    )
    return f' <span class="badge small-n" title="{esc(tip)}">small n</span>'


def _cell(
    agg: Mapping[str, Any], delta: Mapping[str, Any] | None, direction: str | None, level: float
) -> str:
    if not agg and not delta:
        return '<td class="cell empty" title="not measured">—</td>'
    parts = [f'<div class="mean">{esc(fmt(agg.get("mean")))}{flag_mark(agg)}</div>']
    if "ci_low" in agg or "ci_high" in agg:
        parts.append(f'<div class="ci">{esc(fmt_ci(agg, signed=False))}</div>')
    extra = [f"n={fmt_int(agg.get('n'))}"] if "n" in agg else []
    if "corpus" in agg:
        extra.append(f"corpus {fmt(agg.get('corpus'))}")
    if extra or agg.get("small_n") is True:
        parts.append(f'<div class="n">{esc(" · ".join(extra))}{small_n_badge(agg)}</div>')
    if delta:
        parts.append(_delta_html(delta, direction, level))
    return f'<td class="cell">{"".join(parts)}</td>'


def flag_mark(entry: Mapping[str, Any], n: Any = None) -> str:
    """The dagger on a value some of whose cases are flagged, its reasons in the tooltip."""
    flagged = mapping(entry.get("flagged"))
    if not flagged:
        return ""
    counts = {str(k): int(v) for k, v in flagged.items() if isinstance(v, int)}
    tip = describe_flags(counts, n if n is not None else entry.get("n"))
    return f'<sup class="flag" title="{esc(tip)}">{FLAG_MARK}</sup>'


def flag_legend(view: SuiteView) -> str:
    """One line per flagged (system, metric) of the summary: why its value may mislead."""
    items = []
    for system, per_metric in mapping(view.data.get("aggregates")).items():
        for metric in view.headline:
            entry = mapping(mapping(per_metric).get(metric))
            flagged = mapping(entry.get("flagged"))
            if flagged:
                counts = {str(k): int(v) for k, v in flagged.items() if isinstance(v, int)}
                items.append(
                    f"<li><b>{esc(metric)}</b> [{esc(system)}]: "
                    f"{esc(describe_flags(counts, entry.get('n')))}</li>"
                )
    if not items:
        return ""
    return (
        f'<div class="flag-legend"><p>{FLAG_MARK} marks a value that may mislead: the kind '
        f"flagged some of its cases.</p><ul>{''.join(items)}</ul></div>"
    )


def methods(view: SuiteView, metric: str) -> list[str]:
    """The interval methods the aggregates of `metric` state (normally one)."""
    return unique(
        str(m)
        for per_system in mapping(view.data.get("aggregates")).values()
        if (m := mapping(mapping(per_system).get(metric)).get("method"))
    )


def summary_columns(view: SuiteView) -> tuple[list[str], list[str]]:
    """The headline metrics the summary leads with and the rest, folded: all of them when
    they are at most `TERMINAL_COLUMNS`, else the first `TERMINAL_COLUMNS` measured ones (the
    terminal's five), each group in the kind's declaration order."""
    if len(view.headline) <= TERMINAL_COLUMNS:
        return list(view.headline), []
    aggregates = mapping(view.data.get("aggregates"))
    measured = {str(m) for per_system in aggregates.values() for m in mapping(per_system)}
    lead = [m for m in view.headline if m in measured][:TERMINAL_COLUMNS]
    return lead, [m for m in view.headline if m not in lead]


def _metric_table(view: SuiteView, metrics: list[str]) -> str:
    aggregates = mapping(view.data.get("aggregates"))
    deltas = delta_index(view)
    head = []
    for metric in metrics:
        method = ", ".join(methods(view, metric))
        method_html = f'<div class="method">CI: {esc(method)}</div>' if method else ""
        head.append(
            f'<th>{esc(metric)}<div class="dir">'
            f"{direction_label(view.direction(metric))}</div>"
            f"{method_html}</th>"
        )
    rows = []
    for system in view.systems:
        per_metric = mapping(aggregates.get(system))
        cells = [
            _cell(
                mapping(per_metric.get(m)),
                deltas.get((system, m)),
                view.direction(m),
                view.confidence,
            )
            for m in metrics
        ]
        rows.append(f"<tr><th>{esc(system)}</th>{''.join(cells)}</tr>")
    return (
        f'<table class="summary"><thead><tr><th>system</th>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def summary_table(view: SuiteView) -> str:
    """Systems x headline metrics. The first `TERMINAL_COLUMNS` metrics lead, so the table
    fits a laptop window; the others follow behind one toggle, in tables of as many columns
    (each fits too), the order the kind declares them."""
    if not mapping(view.data.get("aggregates")) or not view.headline:
        return ""
    lead, rest = summary_columns(view)
    folded = ""
    if rest:
        tables = "".join(
            _metric_table(view, rest[i : i + TERMINAL_COLUMNS])
            for i in range(0, len(rest), TERMINAL_COLUMNS)
        )
        folded = (
            f'<details class="more-metrics"><summary>{plural(len(rest), "more metric")}: '
            f"{esc(', '.join(rest))}</summary>{tables}</details>"
        )
    return (
        f"<h3>Summary: mean, {view.confidence:.0%} CI, n, change against the baseline</h3>"
        f"{_metric_table(view, lead)}{folded}{flag_legend(view)}{legend(view)}"
    )


def cost_table(view: SuiteView) -> str:
    """What each system's outputs cost to make, per case: means of the cost metrics (their
    intervals are in the JSON report)."""
    aggregates = mapping(view.data.get("aggregates"))
    columns = cost_columns(aggregates)
    if not columns:
        return ""
    rows = "".join(
        f"<tr><th>{esc(system)}</th>"
        + "".join(
            f"<td>{esc(cost_cell(m, mapping(aggregates.get(system)).get(m)))}</td>" for m in columns
        )
        + "</tr>"
        for system in view.systems
    )
    head = "".join(f"<th>{esc(m)}</th>" for m in columns)
    return (
        "<h3>Cost per case: mean, as measured when each output was made</h3>"
        f'<table class="summary cost"><thead><tr><th>system</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def legend(view: SuiteView) -> str:
    """Each headline metric: what it measures and which way is better."""
    if not view.headline:
        return ""
    rows = "".join(
        f"<tr><td><b>{esc(m)}</b></td><td>{direction_label(view.direction(m))}</td>"
        f"<td>{esc(view.specs[m].description if m in view.specs else '')}</td></tr>"
        for m in view.headline
    )
    return (
        '<table class="metric-legend"><thead><tr><th>metric</th><th>better</th>'
        f"<th>what it measures</th></tr></thead><tbody>{rows}</tbody></table>"
        '<p class="legend">Intervals are confidence intervals over cases, each made by the '
        "method named under its column (t, bootstrap-t, Wilson, ...), clipped to the metric's "
        'range; <span class="badge small-n">small n</span> marks a mean over so few cases that its '
        "interval is rough.</p>"
    )


def gate_table(view: SuiteView) -> str:
    gates = mappings(view.data.get("gates"))
    if not gates:
        return ""
    rows = []
    for gate in sorted(gates, key=lambda g: g.get("passed") is not False):
        if gate.get("passed") is False:
            css, verdict = "gate-fail", "✗ FAILED"
        elif gate.get("evaluated") is False:
            css, verdict = "gate-skip", "\u2013 not evaluated"
        else:
            css, verdict = "gate-pass", "✓ passed"
        rows.append(
            f'<tr class="{css}"><td class="verdict">{verdict}</td><td>{esc(gate.get("system"))}'
            f"</td><td>{esc(gate.get('metric'))}</td><td><code>{esc(gate.get('rule'))}</code>"
            f"</td><td>{esc(gate.get('message'))}{_power_html(gate)}</td></tr>"
        )
    failed = failed_gates(view.data)
    title = f"Suite gates: {failed} of {len(gates)} failed" if failed else "Suite gates: all passed"
    return (
        f'<h3>{esc(title)}</h3><table class="gates"><thead><tr><th>verdict</th><th>system</th>'
        "<th>metric</th><th>rule</th><th>message</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _power_html(gate: Mapping[str, Any]) -> str:
    """The gate's power: what it detects, and a warning when its tolerance is below that."""
    note = gate.get("power_note")
    if not note:
        return ""
    css = "power" if gate.get("reliable") is not False else "power weak"
    return f'<div class="{css}">{esc(note)}</div>'


def baseline_lists(view: SuiteView) -> str:
    """Baseline entries no test used, and baseline changes this run wrote (``--doceval-update``)."""
    out = []
    for key, what in (
        ("unused_baseline", "baseline entries without a current result"),
        ("baseline_changes", "baseline changes written by this run"),
    ):
        entries = strings(view.data.get(key))
        if entries:
            entries_html = "".join(f"<li><code>{esc(e)}</code></li>" for e in entries)
            out.append(
                f'<details class="{key}"><summary>{plural(len(entries), what, what)}</summary>'
                f"<ul>{entries_html}</ul></details>"
            )
    return "".join(out)
