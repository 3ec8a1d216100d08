"""pytest-html integration: metric columns in the results table, suite summaries above it.

Columns are fixed when the table header is built (before any test runs), so they are the
headline metrics of every kind; a test without a metric shows an empty cell. Class names are
``col-<metric>``, which pytest-html's sorting script reads, so metric names carry no hyphens.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

HTML_COLUMNS = ("cer", "wer", "body_cer", "cer_raw", "structure_f1", "accuracy")


def header_cells() -> list[str]:
    return [
        f'<th class="sortable" data-column-type="{m}">{html.escape(m)}</th>' for m in HTML_COLUMNS
    ]


def row_cells(metrics: Mapping[str, float]) -> list[str]:
    cells = []
    for metric in HTML_COLUMNS:
        value = metrics.get(metric)
        text = "" if value is None else f"{value:.4f}"
        cells.append(f'<td class="col-{metric}">{text}</td>')
    return cells


def summary_html(report: Mapping[str, Any]) -> str:
    """One small table per suite: systems x headline metrics, mean and 95% CI."""
    parts = []
    for name, suite in report.get("suites", {}).items():
        aggregates = suite.get("aggregates", {})
        metrics = [m for m in HTML_COLUMNS if any(m in a for a in aggregates.values())]
        head = "".join(f"<th>{html.escape(m)}</th>" for m in metrics)
        rows = []
        for system in sorted(aggregates):
            cells = []
            for metric in metrics:
                entry = aggregates[system].get(metric)
                cells.append(
                    "<td></td>"
                    if entry is None
                    else f"<td>{entry['mean']:.4f} [{entry['ci_low']:.4f}, {entry['ci_high']:.4f}]"
                    f" n={entry['n']}</td>"
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
            f"{html.escape(str(suite.get('normalization', '-')))})</h3>"
            f"<table><tr><th>system</th>{head}</tr>{''.join(rows)}</table>{gates}</div>"
        )
    return "".join(parts)
