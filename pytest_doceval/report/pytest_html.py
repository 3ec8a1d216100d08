"""pytest-html integration: metric columns in the results table, suite summaries above it.

Columns are fixed when the table header is built, at the session's start, before collection
and ``-k``: they are the headline metrics the kinds of the suites the arguments name declare (in
declaration order); a test without a metric shows an empty cell. At the end, when the report
is known, the summary's style shows only the columns some test measured (`column_style`): a run
of one kind, or of ``-k`` one suite, has no column of the others, nor of a metric no case had
(a table score where no document has a table). Class names are ``col-<metric>``, which
pytest-html's sorting script reads, so metric names carry no hyphens; a header may break after
an underscore (``structure_<wbr>f1``), never inside a word. The summary above the table shows,
per suite, the metrics the terminal shows (`TERMINAL_COLUMNS`); the rest are in doceval's own
reports.

pytest-html's page sets grey text (#999) on white for everything but headings; `PAGE_STYLE`
(a ``<style>`` element in our summary) makes our tables and its results table dark on light,
and lets long cells (node ids, messages, logs) wrap so the table fits its window. A skip's log
is its reason, not the ``(file, line, reason)`` tuple pytest keeps as its ``longrepr``. Like the
doceval report, the HTML is built from ``markupsafe.Markup`` templates: every string from the
report is escaped once, by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from pytest_doceval.metrics.spec import headline, specs_from_section
from pytest_doceval.report.schema import Report
from pytest_doceval.report.terminal import TERMINAL_COLUMNS


def _breakable(name: str) -> Markup:
    """A metric's name that may wrap after an underscore and nowhere else."""
    return Markup("_<wbr>").join(name.split("_"))


def header_cells(columns: Sequence[str]) -> list[str]:
    cell = Markup('<th class="sortable" data-column-type="{}" data-doceval-metric>{}</th>')
    return [cell.format(m, _breakable(m)) for m in columns]


def row_cells(columns: Sequence[str], metrics: Mapping[str, float]) -> list[str]:
    cells: list[str] = []
    for metric in columns:
        value = metrics.get(metric)
        text = "" if value is None else f"{value:.4f}"
        cells.append(Markup('<td class="col-{}" data-doceval-metric>{}</td>').format(metric, text))
    return cells


def measured_metrics(report: Report) -> list[str]:
    """The metrics some test of the report measured (a row has a value of it)."""
    found: dict[str, None] = {}
    for suite in report.get("suites", {}).values():
        for row in suite.get("results", []):
            found.update(dict.fromkeys(row.get("metrics", {})))
    return list(found)


def column_style(measured: Sequence[str]) -> Markup:
    """The metric columns hidden but those of `measured`: the header was made before the run
    knew which kinds, suites and metrics its tests would have (module docstring)."""
    shown = Markup(",").join(
        Markup('#results-table th[data-column-type="{m}"],#results-table td.col-{m}').format(m=m)
        for m in measured
        if m.replace("_", "").isalnum()  # a name a selector holds as it is
    )
    rules = Markup("#results-table [data-doceval-metric]{display:none}")
    if shown:
        rules += shown + Markup("{display:table-cell}")
    return Markup("<style>{}</style>").format(rules)


PAGE_STYLE = Markup(
    "<style>"
    ".doceval-summary{color:#1f2328;background:#fff;margin:8px 0 14px}"
    ".doceval-summary h3{color:#1f2328;font-size:14px;margin:10px 0 4px}"
    ".doceval-summary table{border-collapse:collapse;font-size:12px}"
    ".doceval-summary th,.doceval-summary td{border:1px solid #d1d9e0;padding:3px 8px;"
    "text-align:left;vertical-align:top;color:#1f2328}"
    ".doceval-summary th{background:#f6f8fa}"
    ".doceval-summary td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".doceval-summary .doceval-gate-failed{color:#a40e26;font-weight:600}"
    "#results-table{color:#1f2328;max-width:100%}"
    "#results-table td{overflow-wrap:anywhere}"
    "#results-table th{overflow-wrap:normal;word-break:normal}"
    "#results-table .logwrapper .log{overflow-wrap:anywhere}"
    "</style>"
)


def skip_reason(longrepr: Any) -> str | None:
    """The reason of a skip whose ``longrepr`` is pytest's ``(path, line, reason)`` tuple
    (``"Skipped: "`` removed); None for anything else."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3 and isinstance(longrepr[2], str):
        reason = longrepr[2]
        return reason.removeprefix("Skipped: ")
    return None


def skip_log(longrepr: Any, data: list[str]) -> None:
    """pytest-html's log of a skipped test, `data`, made its reason instead of the tuple."""
    reason = skip_reason(longrepr)
    if reason is not None and data:
        data[0] = Markup("Skipped: {}\n").format(reason)


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
        ][:TERMINAL_COLUMNS]  # as the terminal: the rest are in doceval's own reports
        head = Markup().join(Markup("<th>{}</th>").format(m) for m in metrics)
        rows = []
        for system in sorted(aggregates):
            cells = []
            for metric in metrics:
                entry = aggregates[system].get(metric)
                cells.append(
                    Markup("<td></td>")
                    if entry is None
                    else Markup('<td class="num">{} [{}, {}] n={}</td>').format(
                        _fmt(entry["mean"]),
                        _fmt(entry["ci_low"]),
                        _fmt(entry["ci_high"]),
                        entry["n"],
                    )
                )
            rows.append(Markup("<tr><td>{}</td>{}</tr>").format(system, Markup().join(cells)))
        failed = [g for g in suite.get("gates", []) if not g["passed"]]
        gates = Markup().join(
            Markup('<p class="doceval-gate-failed">FAILED suite gate: {}</p>').format(g["message"])
            for g in failed
        )
        parts.append(
            Markup(
                '<div class="doceval-summary"><h3>doceval: {} ({}, {})</h3>'
                "<table><tr><th>system</th>{}</tr>{}</table>{}</div>"
            ).format(
                name,
                str(suite.get("kind")),
                str(suite.get("scoring_id", "-")),
                head,
                Markup().join(rows),
                gates,
            )
        )
    if not parts:
        return ""
    return PAGE_STYLE + column_style(measured_metrics(report)) + Markup().join(parts)
