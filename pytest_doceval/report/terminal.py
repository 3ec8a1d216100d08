"""The terminal summary: per suite, systems x headline metrics with their CIs."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_doceval.html.model import unchanged
from pytest_doceval.metrics.cost import cost_cell, cost_columns
from pytest_doceval.metrics.spec import headline, specs_from_section
from pytest_doceval.report.schema import Aggregate, Report, SuiteSection
from pytest_doceval.row_file import Rows
from pytest_doceval.rows import FLAG_MARK, describe_flags, outcome_count, row_key

# Columns in the terminal table; the rest of the headline metrics are in the reports.
TERMINAL_COLUMNS = 5


def _number(value: object) -> str:
    return "n/a" if not isinstance(value, (int, float)) or value != value else f"{value:.3f}"


def _cell(entry: Aggregate | None) -> str:
    if not entry:
        return "-"
    mark = FLAG_MARK if entry.get("flagged") else ""
    mean, low, high = (_number(entry["mean"]), _number(entry["ci_low"]), _number(entry["ci_high"]))
    return f"{mean}{mark} [{low}, {high}]"


def limited_line(limit: int) -> str:
    """What a limited run (``--doceval-limit``, `run.limit`) says first, wherever it is read."""
    return (
        f"LIMITED: the first {limit} case(s) of each suite (--doceval-limit {limit}), a smoke "
        "run: the numbers are not the suites', and no baseline was updated"
    )


def summary_lines(report: Report) -> list[str]:
    lines: list[str] = []
    if report.get("interrupted"):
        lines.append("INTERRUPTED: the numbers below cover only the tests that ran")
    if report.get("limit"):
        lines.append(limited_line(report["limit"]))
    for name, suite in report.get("suites", {}).items():
        outcomes = ", ".join(outcome_count(n, k) for k, n in suite.get("outcomes", {}).items())
        if suite.get("error"):
            lines.append(f"{name}: {outcomes}")
            lines.append(f"  suite error: {suite['error']}")
            continue
        lines.append(f"{name} ({suite.get('kind')}, {suite.get('scoring_id', '-')}): {outcomes}")
        for note in suite.get("notes", []):
            lines.append(f"  note: {note}")
        aggregates = suite.get("aggregates", {})
        measured = [
            m
            for m in headline(specs_from_section(suite))
            if any(m in a for a in aggregates.values())
        ]
        if measured:
            lines += _table(aggregates, measured[:TERMINAL_COLUMNS])
            lines += _corpus_lines(aggregates, measured[:TERMINAL_COLUMNS])
            lines += _flag_legend(aggregates, measured)
        lines += _kind_lines(suite)
        lines += _cost_lines(aggregates)
        lines += _changes(suite)
        lines += _notes_on_cases(suite)
        for gate in suite.get("gates", []):
            status = "passed" if gate["passed"] else "FAILED"
            if not gate.get("evaluated", True):
                status = "not evaluated (no baseline)"
            rule = f"{gate['metric']} {gate['rule']}"
            lines.append(f"  suite gate {rule} [{gate['system']}]: {status}")
            if gate.get("power_note"):
                lines.append(f"    {gate['power_note']}")
    return lines


def _kind_lines(suite: SuiteSection) -> list[str]:
    """The kind's own lines (``Suite.terminal_lines``); none for a kind not installed here."""
    from pytest_doceval.errors import SuiteConfigError
    from pytest_doceval.kinds.registry import kind_class

    try:
        builders = kind_class(str(suite.get("kind"))).terminal_lines
    except SuiteConfigError:
        return []
    return [f"  {line}" for build in builders for line in build(suite)]


def _corpus_lines(
    aggregates: Mapping[str, Mapping[str, Aggregate]], metrics: list[str]
) -> list[str]:
    """The corpus values of the table's metrics that have one (counts summed over the cases
    before dividing: the number a seed defines, e.g. seed 004's Acc_total), beside the means
    the table shows."""
    lines = []
    for system in sorted(aggregates):
        entries = aggregates[system]
        cells = [
            f"{m} {_number(e['corpus'])} [{_number(e.get('corpus_ci_low'))}, "
            f"{_number(e.get('corpus_ci_high'))}]"
            for m in metrics
            if (e := entries.get(m)) and "corpus" in e
        ]
        if cells:
            lines.append(f"    {system}: {', '.join(cells)}")
    if not lines:
        return []
    return ["  corpus values (counts summed over the cases, then divided; 95% CI):", *lines]


def _cost_lines(aggregates: Mapping[str, Mapping[str, Aggregate]]) -> list[str]:
    """What each system's outputs cost to make, per case (where it was measured)."""
    columns = cost_columns(aggregates)
    if not columns:
        return []
    lines = ["  cost per case (mean, as measured when each output was made):"]
    for system in sorted(aggregates):
        cells = [f"{m} {cost_cell(m, aggregates[system].get(m))}" for m in columns]
        if any(aggregates[system].get(m) for m in columns):
            lines.append(f"    {system}: {', '.join(cells)}")
    return lines


def _table(aggregates: Mapping[str, Mapping[str, Aggregate]], metrics: list[str]) -> list[str]:
    small = ranged = False
    cells = [["system", *[f"{m} (95% CI)" for m in metrics], "n"]]
    for system in sorted(aggregates):
        entries = aggregates[system]
        # n of the columns shown: a metric a case does not have (a page without formulas has no
        # formula_edit) counts fewer cases, and the column says so as a range.
        shown = [entries[m] for m in metrics if m in entries] or list(entries.values())
        counts = [e["n"] for e in shown]
        n = f"{min(counts)}-{max(counts)}" if counts and min(counts) != max(counts) else ""
        n = n or str(max(counts, default=0))
        ranged = ranged or "-" in n
        flag = ""
        if any(e.get("small_n") for e in shown):
            flag, small = "*", True
        cells.append([system, *[_cell(entries.get(m)) for m in metrics], f"{n}{flag}"])
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells
    ]
    if ranged:
        lines.append("  n lo-hi: the metrics count different cases (each only where a case has it)")
    if small:
        lines.append("  * a metric with fewer than 10 cases: treat its interval as rough")
    return lines


def _flag_legend(
    aggregates: Mapping[str, Mapping[str, Aggregate]], metrics: list[str]
) -> list[str]:
    """Why a flagged value may mislead, for every headline metric (also those past the
    table's columns: the reports show them)."""
    lines = []
    for system in sorted(aggregates):
        for metric in metrics:
            entry = aggregates[system].get(metric)
            if entry is not None and entry.get("flagged"):
                lines.append(
                    f"  {FLAG_MARK} {metric} [{system}] may mislead: "
                    f"{describe_flags(entry.get('flagged', {}), entry.get('n'))}"
                )
    return lines


def _notes_on_cases(suite: SuiteSection, most: int = 10) -> list[str]:
    """Cases whose evaluation left a note (a parser that returned no text: a damaged PDF that
    still opens scores, and could become a baseline with no visible word)."""
    rows = Rows.of(suite.get("results", []))
    table = rows.table  # the rows' notes from their table: nothing decoded
    noted = [(i, note) for i in rows.order for note in table.notes[i]]
    lines = [
        f"  note on {row_key(table.cases[i], table.systems[i])}: {note}" for i, note in noted[:most]
    ]
    if len(noted) > most:
        lines.append(f"  ... and {len(noted) - most} more notes in the report")
    return lines


def _changes(suite: SuiteSection) -> list[str]:
    """What moved against the baseline beyond its CI, worse first; one line for the rest."""
    deltas = suite.get("baseline_deltas", [])
    moved = sorted(
        (d for d in deltas if d.get("verdict") in ("worse", "better")),
        key=lambda d: (d["verdict"] != "worse", d["metric"], d["system"]),
    )
    lines = [
        f"  {d['verdict'].upper() if d['verdict'] == 'worse' else d['verdict']}: "
        f"{d['metric']}{FLAG_MARK if d.get('flagged') else ''} [{d['system']}] "
        f"{d['mean_diff']:+.4f} "
        f"[{_number(d['ci_low'])}, {_number(d['ci_high'])}] vs baseline (n={d['n']})"
        for d in moved
    ]
    if deltas and len(moved) < len(deltas):
        still = len(deltas) - len(moved)
        rows = Rows.of(suite.get("results", []))
        failed = rows.table.outcome_counts(rows.order).get("failed", 0)
        same = sum(unchanged(d) for d in deltas if d not in moved)
        # A mean within its CI says nothing of single cases: never "unchanged" beside failures;
        # and "unchanged" only where every case is as in the baseline.
        if failed:
            lines.append(
                f"  {still} metric x system means not significantly changed, but {failed} "
                "test(s) failed a per-case gate (listed in pytest's summary)"
            )
        else:
            parts = [f"{same} unchanged"] if same else []
            if still - same:
                parts.append(f"{still - same} changed within their CIs (not significant)")
            lines.append(f"  metric x system pairs: {', '.join(parts)}")
    return lines
