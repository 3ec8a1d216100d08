"""The ``omnidocbench`` kind's paper table, in the layout of OmniDocBench's end-to-end
leaderboard: Overall, Text Edit, Formula CDM, Table TEDS, Table TEDS-S, Read Order Edit, with its
scales (edit distances as fractions to 3 decimals, TEDS and CDM ×100 and Overall to 2
decimals), from the report's ``omnidocbench`` analysis: one row per system, or, where the pages'
tiers are known, one per system and tier (Base, Hard, Full) as v1.6 is quoted. A metric not
computed is "n/a", with the suite's note saying why."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pytest_doceval.paper import Cell, PaperTable

# (column, leaderboard key, scale): None prints the fraction to 3 decimals, 100 a percentage
# to 2 decimals, as OmniDocBench's leaderboard prints each.
COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("Overall", "overall", 1),
    ("Text Edit", "text_edit", None),
    ("Formula CDM", "formula_cdm", 100),
    ("Table TEDS", "table_teds", 100),
    ("Table TEDS-S", "table_teds_s", 100),
    ("Read Order Edit", "reading_order_edit", None),
)


TIERS = ("Base", "Hard", "Full")
_NOT_COMPUTED_NOTES = tuple(metric for _, metric, _ in COLUMNS if metric != "overall")


def cell_text(numbers: Mapping[str, Any], metric: str, scale: int | None) -> str:
    """One leaderboard number as OmniDocBench prints it, n/a when not computed."""
    value = numbers.get(metric)
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "n/a"
    return f"{value:.3f}" if scale is None else f"{value * scale:.2f}"


def leaderboard_table(section: Mapping[str, Any]) -> list[PaperTable]:
    boards = section.get("omnidocbench") or {}
    if not isinstance(boards, Mapping) or not boards:
        return []
    systems = [s for s in section.get("systems") or [] if s in boards]
    systems += sorted(s for s in boards if s not in systems)
    table = PaperTable(
        "End-to-end evaluation on OmniDocBench v1.6 pages",
        ["Method", *[title for title, _, _ in COLUMNS], "Pages"],
    )
    short = []
    for system in systems:
        entry = boards[system]
        tiers = entry.get("by_tier") or {}
        boards_of = (
            [(f"{system} ({tier})", tiers[tier]) for tier in TIERS if tier in tiers]
            if tiers
            else [(system, {**(entry.get("leaderboard") or {}), "pages": entry.get("pages", 0)})]
        )
        for name, numbers in boards_of:
            table.rows.append(
                [
                    Cell(name),
                    *[Cell(cell_text(numbers, metric, scale)) for _, metric, scale in COLUMNS],
                    Cell(str(numbers.get("pages", 0))),
                ]
            )
        if entry.get("pages_not_scored"):
            short.append(f"{system}: {entry['pages_not_scored']} page(s) not scored")
    notes = [
        "Overall = ((1 - Text Edit) x 100 + Formula CDM + Table TEDS) / 3 (CDM and TEDS x100). "
        "Text Edit and Read Order Edit: lower is better (the mean over pages of each page's "
        "edits / max length); CDM, TEDS and TEDS-S: higher is better, x100. Scored as "
        f"OmniDocBench v1.6 scores them ({section.get('scoring_id', '')}).",
        # The suite's notes on what is not computed (formula_cdm and overall, ...): why n/a.
        *[n for n in section.get("notes") or [] if str(n).startswith(_NOT_COMPUTED_NOTES)],
    ]
    if short:
        notes.append("Over fewer pages than the suite has: " + "; ".join(short) + ".")
    table.notes = notes
    return [table]


def leaderboard_lines(section: Mapping[str, Any]) -> list[str]:
    """The terminal's leaderboard rows, per system (and tier): OmniDocBench's columns and
    scales; where Overall is n/a, the one-line reason (the suite's CDM note names what to
    install)."""
    boards = section.get("omnidocbench") or {}
    if not isinstance(boards, Mapping):
        return []
    lines = []
    for system, entry in boards.items():
        tiers = entry.get("by_tier") or {}
        rows = [(f"{system} ({t})", tiers[t]) for t in TIERS if t in tiers] or [
            (str(system), {**(entry.get("leaderboard") or {}), "pages": entry.get("pages", 0)})
        ]
        for name, numbers in rows:
            cells = " | ".join(
                f"{title} {cell_text(numbers, metric, scale)}" for title, metric, scale in COLUMNS
            )
            lines.append(f"leaderboard {name}: {cells} ({numbers.get('pages', 0)} pages)")
        if "overall" not in (entry.get("leaderboard") or {}):
            missing = [
                m
                for m in ("text_edit", "formula_cdm", "table_teds")
                if m not in (entry.get("leaderboard") or {})
            ]
            lines.append(f"  Overall n/a: no {', '.join(missing)} (see the notes above)")
    return lines
