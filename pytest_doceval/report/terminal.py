"""The terminal summary: per suite, systems x headline metrics with 95% CIs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TERMINAL_METRICS = ("cer", "wer", "body_cer", "cer_raw", "structure_f1", "accuracy")


def _cell(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return "-"
    return f"{entry['mean']:.3f} [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}]"


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for name, suite in report.get("suites", {}).items():
        outcomes = ", ".join(f"{n} {k}" for k, n in suite.get("outcomes", {}).items())
        if suite.get("error"):
            lines.append(f"{name}: {outcomes}")
            lines.append(f"  suite error: {suite['error']}")
            continue
        lines.append(f"{name} ({suite.get('kind')}, {suite.get('normalization', '-')}): {outcomes}")
        for note in suite.get("notes", []):
            lines.append(f"  note: {note}")
        aggregates = suite.get("aggregates", {})
        metrics = [m for m in TERMINAL_METRICS if any(m in a for a in aggregates.values())]
        if not metrics:
            continue
        cells = [["system", *[f"{m} (95% CI)" for m in metrics], "n"]]
        for system in sorted(aggregates):
            entries = aggregates[system]
            n = max((e["n"] for e in entries.values()), default=0)
            cells.append([system, *[_cell(entries.get(m)) for m in metrics], str(n)])
        widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
        for row in cells:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        for gate in suite.get("gates", []):
            status = "passed" if gate["passed"] else "FAILED"
            if not gate.get("evaluated", True):
                status = "not evaluated (no baseline)"
            rule = f"{gate['metric']} {gate['rule']}"
            lines.append(f"  suite gate {rule} [{gate['system']}]: {status}")
    return lines
