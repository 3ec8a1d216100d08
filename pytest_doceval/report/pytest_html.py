"""pytest-html integration: metric columns in the results table, suite summaries above it.

Columns are fixed when the table header is built, after collection: they are the headline
metrics the collected suites' kinds declare (in declaration order); a test without a metric shows
an empty cell. Class names are ``col-<metric>``, which pytest-html's sorting script reads, so
metric names carry no hyphens.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from pytest_doceval.metrics.spec import headline, specs_from_section
from pytest_doceval.report.schema import Report


def header_cells(columns: Sequence[str]) -> list[str]:
    return [
        f'<th class="sortable" data-column-type="{html.escape(m)}">{html.escape(m)}</th>'
        for m in columns
    ]


def row_cells(columns: Sequence[str], metrics: Mapping[str, float]) -> list[str]:
    cells = []
    for metric in columns:
        value = metrics.get(metric)
        text = "" if value is None else f"{value:.4f}"
        cells.append(f'<td class="col-{html.escape(metric)}">{text}</td>')
    return cells


def _fmt(value: object) -> str:
    return "n/a" if not isinstance(value, (int, float)) or value != value else f"{value:.4f}"


def summary_html(report: Report) -> str:
    """One small table per suite: systems x headline metrics, mean and CI."""
    parts = []
    for name, suite in report.get("suites", {}).items():
        aggregates = suite.get("aggregates", {})
        metrics = [
            m
            for m in headline(specs_from_section(suite))
            if any(m in a for a in aggregates.values())
        ]
        head = "".join(f"<th>{html.escape(m)}</th>" for m in metrics)
        rows = []
        for system in sorted(aggregates):
            cells = []
            for metric in metrics:
                entry = aggregates[system].get(metric)
                cells.append(
                    "<td></td>"
                    if entry is None
                    else f"<td>{_fmt(entry['mean'])} [{_fmt(entry['ci_low'])}, "
                    f"{_fmt(entry['ci_high'])}] n={entry['n']}</td>"
                )
            rows.append(f"<tr><td>{html.escape(system)}</td>{''.join(cells)}</tr>")
        failed = [g for g in suite.get("gates", []) if not g["passed"]]
        gates = "".join(
            f'<p class="doceval-gate-failed">FAILED suite gate: {html.escape(g["message"])}</p>'
            for g in failed
        )
        parts.append(
            f'<div class="doceval-summary"><h3>doceval: {html.escape(name)} '
            f"({html.escape(str(suite.get('kind')))}, "
            f"{html.escape(str(suite.get('scoring_id', '-')))})</h3>"
            f"<table><tr><th>system</th>{head}</tr>{''.join(rows)}</table>{gates}</div>"
        )
    return "".join(parts)
