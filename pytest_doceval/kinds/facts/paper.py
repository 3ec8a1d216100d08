"""The facts kind's paper table: pass rate per system, overall (with its CI, bootstrapped
within fact files) and per fact type (facts passed / facts checked)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_doceval.paper import Cell, PaperTable, flag_note, flag_reasons, number


def pass_rates(section: Mapping[str, Any]) -> list[PaperTable]:
    rates = section.get("pass_rate") or {}
    if not isinstance(rates, Mapping) or not rates:
        return []
    systems = [s for s in section.get("systems") or [] if s in rates]
    systems += sorted(s for s in rates if s not in systems)
    types = sorted({t for s in systems for t in (rates[s].get("by_type") or {})})
    level = float(section.get("confidence", 0.95))
    table = PaperTable(
        "Fact pass rate by system and fact type",
        ["System", f"All [{level:.0%} CI]", *types, "Micro mean"],
    )
    rows: list[Mapping[str, Any]] = section.get("results") or []
    seen: dict[str, dict[str, None]] = {}
    for system in systems:
        entry = rates[system]
        reasons = flag_reasons(rows, "pass", system)
        if reasons:
            seen.setdefault("pass", {}).update(dict.fromkeys(reasons))
        overall = (
            f"{number(entry.get('pass_rate'))} "
            f"[{number(entry.get('ci_low'))}, {number(entry.get('ci_high'))}]"
        )
        cells = [Cell(system), Cell(overall, bool(reasons))]
        for fact_type in types:
            t = (entry.get("by_type") or {}).get(fact_type)
            text = f"{number(t.get('mean'))} ({t.get('passed')}/{t.get('total')})" if t else "n/a"
            cells.append(Cell(text))
        cells.append(Cell(number(entry.get("micro_mean"))))
        table.rows.append(cells)
    table.notes = [
        "All: the pass rate over fact files (olmOCR-bench's headline), its interval the "
        "percentile bootstrap within files (olmOCR-bench's, the report's). Per type: the share "
        "of facts of that type that hold (passed/checked). Micro mean: the mean over all facts "
        "(olmOCR-bench's overall_score), not the headline.",
        *flag_note({m: list(r) for m, r in seen.items()}),
    ]
    return [table]
