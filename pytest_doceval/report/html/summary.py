"""Summary tables: systems x headline metrics (mean, CI with its method, n, a small-n mark,
the change against the baseline with its CI, coloured by the metric's direction when
significant), the terminal's five columns first and the rest folded so the table fits a
1,400 px window; the metric legend, the cost table, and the suite gate table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.fmt import (
    as_text,
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
    unchanged,
)
from pytest_doceval.metrics.cost import cost_cell, cost_columns
from pytest_doceval.report.terminal import TERMINAL_COLUMNS
from pytest_doceval.rows import FLAG_MARK, describe_flags


def delta_title(delta: Mapping[str, Any], reading: Change, confidence: float) -> str:
    word = {"worse": "worse", "better": "better", "same": "changed"}.get(reading.verdict, "changed")
    if unchanged(delta):
        verdict = "unchanged: every case as in the baseline"
    else:
        verdict = f"{'significantly' if reading.significant else 'not significantly'} {word}"
    return (
        f"vs baseline {fmt(delta.get('baseline_mean'))}: {fmt_signed(delta.get('mean_diff'))} "
        f"{fmt_ci(delta)} {confidence:.0%} CI, n={fmt_int(delta.get('n'))}, "
        f"p(t)={fmt_p(delta.get('p_ttest'))}, p(Wilcoxon)={fmt_p(delta.get('p_wilcoxon'))}"
        f" — {verdict}"
    )


def _delta_html(delta: Mapping[str, Any], direction: str | None, confidence: float) -> Markup:
    """The change against the baseline as numbers, always: the mean difference and its CI,
    coloured (with an arrow) only when significant; otherwise muted, with why it is not
    (too few cases to test, or within its interval)."""
    reading = change(delta, direction)
    if not reading.verdict:
        return Markup()
    tip = delta_title(delta, reading, confidence)
    numbers = Markup(
        '<span class="diff-mean">{}</span> <span class="diff-ci">{}</span> vs baseline'
    ).format(fmt_signed(delta.get("mean_diff")), fmt_ci(delta))
    if not reading.significant:
        why = (
            "unchanged"
            if unchanged(delta)
            else not_testable(delta.get("n")) or f"not significant at n = {fmt_int(delta.get('n'))}"
        )
        return Markup(
            '<div class="delta {} ns" title="{}">{}<div class="why">{}</div></div>'
        ).format(reading.verdict, tip, numbers, why)
    arrow = {
        "worse": "▲" if direction == "lower" else "▼",
        "better": "▼" if direction == "lower" else "▲",
    }.get(reading.verdict, "•")
    return Markup(
        '<div class="delta {} sig" title="{}">{} {} <span class="sigmark">significant</span></div>'
    ).format(reading.verdict, tip, arrow, numbers)


def small_n_badge(agg: Mapping[str, Any]) -> Markup:
    if agg.get("small_n") is not True:
        return Markup()
    tip = (
        f"Only {fmt_int(agg.get('n'))} cases: an interval from so few values is rough (it can "
        "be too narrow or too wide); add cases before trusting it."
    )
    return Markup(' <span class="badge small-n" title="{}">small n</span>').format(tip)


def _cell(
    agg: Mapping[str, Any], delta: Mapping[str, Any] | None, direction: str | None, level: float
) -> Markup:
    if not agg and not delta:
        return Markup('<td class="cell empty" title="not measured">—</td>')
    parts = [Markup('<div class="mean">{}{}</div>').format(fmt(agg.get("mean")), flag_mark(agg))]
    if "ci_low" in agg or "ci_high" in agg:
        parts.append(Markup('<div class="ci">{}</div>').format(fmt_ci(agg, signed=False)))
    extra = [f"n={fmt_int(agg.get('n'))}"] if "n" in agg else []
    if "corpus" in agg:
        extra.append(f"corpus {fmt(agg.get('corpus'))}")
    if extra or agg.get("small_n") is True:
        parts.append(
            Markup('<div class="n">{}{}</div>').format(" · ".join(extra), small_n_badge(agg))
        )
    if delta:
        parts.append(_delta_html(delta, direction, level))
    return Markup('<td class="cell">{}</td>').format(Markup().join(parts))


def flag_mark(entry: Mapping[str, Any], n: Any = None) -> Markup:
    """The dagger on a value some of whose cases are flagged, its reasons in the tooltip."""
    flagged = mapping(entry.get("flagged"))
    if not flagged:
        return Markup()
    counts = {str(k): int(v) for k, v in flagged.items() if isinstance(v, int)}
    tip = describe_flags(counts, n if n is not None else entry.get("n"))
    return Markup('<sup class="flag" title="{}">{}</sup>').format(tip, FLAG_MARK)


def flag_legend(view: SuiteView) -> Markup:
    """One line per flagged (system, metric) of the summary: why its value may mislead."""
    items = []
    for system, per_metric in mapping(view.data.get("aggregates")).items():
        for metric in view.headline:
            entry = mapping(mapping(per_metric).get(metric))
            flagged = mapping(entry.get("flagged"))
            if flagged:
                counts = {str(k): int(v) for k, v in flagged.items() if isinstance(v, int)}
                items.append(
                    Markup("<li><b>{}</b> [{}]: {}</li>").format(
                        metric, system, describe_flags(counts, entry.get("n"))
                    )
                )
    if not items:
        return Markup()
    return Markup(
        '<div class="flag-legend"><p>{} marks a value that may mislead: the kind '
        "flagged some of its cases.</p><ul>{}</ul></div>"
    ).format(FLAG_MARK, Markup().join(items))


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


def _metric_table(view: SuiteView, metrics: list[str]) -> Markup:
    aggregates = mapping(view.data.get("aggregates"))
    deltas = delta_index(view)
    head = []
    for metric in metrics:
        method = ", ".join(methods(view, metric))
        method_html = (
            Markup('<div class="method">CI: {}</div>').format(method) if method else Markup()
        )
        head.append(
            Markup('<th>{}<div class="dir">{}</div>{}</th>').format(
                metric, direction_label(view.direction(metric)), method_html
            )
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
        rows.append(Markup("<tr><th>{}</th>{}</tr>").format(system, Markup().join(cells)))
    return Markup(
        '<table class="summary"><thead><tr><th>system</th>{}</tr></thead><tbody>{}</tbody></table>'
    ).format(Markup().join(head), Markup().join(rows))


def summary_table(view: SuiteView) -> Markup:
    """Systems x headline metrics. The first `TERMINAL_COLUMNS` metrics lead, so the table
    fits a laptop window; the others follow behind one toggle, in tables of as many columns
    (each fits too), the order the kind declares them."""
    if not mapping(view.data.get("aggregates")) or not view.headline:
        return Markup()
    lead, rest = summary_columns(view)
    folded = Markup()
    if rest:
        tables = Markup().join(
            _metric_table(view, rest[i : i + TERMINAL_COLUMNS])
            for i in range(0, len(rest), TERMINAL_COLUMNS)
        )
        folded = Markup(
            '<details class="more-metrics"><summary>{}: {}</summary>{}</details>'
        ).format(plural(len(rest), "more metric"), ", ".join(rest), tables)
    return Markup(
        "<h3>Summary: mean, {:.0%} CI, n, change against the baseline</h3>{}{}{}{}"
    ).format(view.confidence, _metric_table(view, lead), folded, flag_legend(view), legend(view))


def cost_table(view: SuiteView) -> Markup:
    """What each system's outputs cost to make, per case: means of the cost metrics (their
    intervals are in the JSON report)."""
    aggregates = mapping(view.data.get("aggregates"))
    columns = cost_columns(aggregates)
    if not columns:
        return Markup()
    cell = Markup("<td>{}</td>")
    rows = Markup().join(
        Markup("<tr><th>{}</th>{}</tr>").format(
            system,
            Markup().join(
                cell.format(cost_cell(m, mapping(aggregates.get(system)).get(m))) for m in columns
            ),
        )
        for system in view.systems
    )
    head = Markup().join(Markup("<th>{}</th>").format(m) for m in columns)
    return Markup(
        "<h3>Cost per case: mean, as measured when each output was made (latency also its "
        "p50, p95, p99 over the cases)</h3>"
        '<table class="summary cost"><thead><tr><th>system</th>{}</tr></thead>'
        "<tbody>{}</tbody></table>"
    ).format(head, rows)


def legend(view: SuiteView) -> Markup:
    """Each headline metric: what it measures and which way is better."""
    if not view.headline:
        return Markup()
    rows = Markup().join(
        Markup("<tr><td><b>{}</b></td><td>{}</td><td>{}</td></tr>").format(
            m,
            direction_label(view.direction(m)),
            view.specs[m].description if m in view.specs else "",
        )
        for m in view.headline
    )
    return Markup(
        '<table class="metric-legend"><thead><tr><th>metric</th><th>better</th>'
        "<th>what it measures</th></tr></thead><tbody>{}</tbody></table>"
        '<p class="legend">Intervals are confidence intervals over cases, each made by the '
        "method named under its column (t, bootstrap-t, Wilson, ...), clipped to the metric's "
        'range; <span class="badge small-n">small n</span> marks a mean over so few cases that its '
        "interval is rough.</p>"
    ).format(rows)


def gate_table(view: SuiteView) -> Markup:
    gates = mappings(view.data.get("gates"))
    if not gates:
        return Markup()
    rows = []
    for gate in sorted(gates, key=lambda g: g.get("passed") is not False):
        if gate.get("passed") is False:
            css, verdict = "gate-fail", "✗ FAILED"
        elif gate.get("evaluated") is False:
            css, verdict = "gate-skip", "\u2013 not evaluated"
        else:
            css, verdict = "gate-pass", "✓ passed"
        rows.append(
            Markup(
                '<tr class="{css}"><td class="verdict">{verdict}</td><td>{system}</td>'
                "<td>{metric}</td><td><code>{rule}</code></td><td>{message}{power}</td></tr>"
            ).format(
                css=css,
                verdict=verdict,
                system=as_text(gate.get("system")),
                metric=as_text(gate.get("metric")),
                rule=as_text(gate.get("rule")),
                message=as_text(gate.get("message")),
                power=_power_html(gate),
            )
        )
    failed = failed_gates(view.data)
    title = f"Suite gates: {failed} of {len(gates)} failed" if failed else "Suite gates: all passed"
    return Markup(
        '<h3>{}</h3><table class="gates"><thead><tr><th>verdict</th><th>system</th>'
        "<th>metric</th><th>rule</th><th>message</th></tr></thead><tbody>{}</tbody></table>"
    ).format(title, Markup().join(rows))


def _power_html(gate: Mapping[str, Any]) -> Markup:
    """The gate's power: what it detects, and a warning when its tolerance is below that."""
    note = gate.get("power_note")
    if not note:
        return Markup()
    css = "power" if gate.get("reliable") is not False else "power weak"
    return Markup('<div class="{}">{}</div>').format(css, note)


def baseline_lists(view: SuiteView) -> Markup:
    """Baseline entries no test used, and baseline changes this run wrote (``--doceval-update``)."""
    out = []
    for key, what in (
        ("unused_baseline", "baseline entries without a current result"),
        ("baseline_changes", "baseline changes written by this run"),
    ):
        entries = strings(view.data.get(key))
        if entries:
            entries_html = Markup().join(
                Markup("<li><code>{}</code></li>").format(e) for e in entries
            )
            out.append(
                Markup('<details class="{}"><summary>{}</summary><ul>{}</ul></details>').format(
                    key, plural(len(entries), what, what), entries_html
                )
            )
    return Markup().join(out)
