"""The documents kind's paper tables: seed 002's Table 3 (Body CER, Full CER and what the
references add) and seed 000's per-parser table (CER, WER, Structure P/R/F1, Boundary Coherence,
Chunk Score, each a mean with the seeds' percentile bootstrap CI over documents)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_doceval.kinds.analyses import values_by_system
from pytest_doceval.metrics.spec import specs_from_section
from pytest_doceval.paper import (
    Cell,
    PaperTable,
    flag_note,
    interval_note,
    percent,
    points,
    seed_interval,
)
from pytest_doceval.rows import flag_reasons

# Seed 002's note said the truth lacks bibliography entries, which its pandoc conversion
# dropped; here pandoc keeps them (README, "Body CER"), so the note says what Body CER does,
# which holds either way: the same cut on both sides.
TABLE3_NOTE = (
    "Note: Body CER cuts the extracted text and the ground truth alike at the References "
    "heading and compares what comes before it; Full CER compares the whole texts, "
    "bibliography entries included on whichever side has them. Δ (Refs) = Full CER − Body "
    "CER: what the References section adds to the error."
)

# (column, metric) of seed 000's table, in the seed's order.
SEED000_COLUMNS = (
    ("CER", "cer"),
    ("WER", "wer"),
    ("Structure P", "structure_precision"),
    ("Structure R", "structure_recall"),
    ("Structure F1", "structure_f1"),
    ("BC", "boundary_coherence"),
    ("CS", "chunk_score"),
)
# Where a LaTeX table too wide for the page is cut: before the structure and the chunk scores.
SEED000_GROUPS = ("structure_precision", "boundary_coherence")
ABBREVIATIONS = {"BC": "Boundary Coherence", "CS": "Chunk Score"}


def _systems(section: Mapping[str, Any]) -> list[str]:
    aggregates = section.get("aggregates") or {}
    listed = [s for s in section.get("systems") or [] if s in aggregates]
    return listed + sorted(s for s in aggregates if s not in listed)


def _cell(
    text: str,
    rows: list[Mapping[str, Any]],
    system: str,
    metrics: tuple[str, ...],
    seen: dict[str, dict[str, None]],
    section: Mapping[str, Any],
) -> Cell:
    """A cell marked where the report's summary marks the value: `system`'s rows flag a
    metric, and they dominate it if its `MetricSpec.flag_dominance` asks so."""
    specs = specs_from_section(section)
    flagged = False
    for metric in metrics:
        spec = specs.get(metric)
        dominance = spec.flag_dominance if spec else None
        reasons = flag_reasons(rows, metric, [system], dominance=dominance).get(system, {})
        if reasons:
            flagged = True
            seen.setdefault(metric, {}).update(dict.fromkeys(reasons))
    return Cell(text, flagged)


def table3(section: Mapping[str, Any]) -> list[PaperTable]:
    """Seed 002, 7.1: Parser | Body CER | Full CER | Δ (Refs), percentages and points."""
    aggregates = section.get("aggregates") or {}
    rows: list[Mapping[str, Any]] = section.get("results") or []
    table = PaperTable(
        "Character Error Rate by Parser", ["Parser", "Body CER", "Full CER", "Δ (Refs)"]
    )
    seen: dict[str, dict[str, None]] = {}
    for system in _systems(section):
        entry = aggregates[system]
        body, full = entry.get("body_cer", {}), entry.get("cer", {})
        if not body and not full:
            continue
        delta = entry.get("refs_delta", {}).get("mean")
        table.rows.append(
            [
                Cell(system),
                _cell(percent(body.get("mean")), rows, system, ("body_cer",), seen, section),
                _cell(percent(full.get("mean")), rows, system, ("cer",), seen, section),
                _cell(points(delta), rows, system, ("refs_delta",), seen, section),
            ]
        )
    if not table.rows:
        return []
    table.notes = [TABLE3_NOTE, *flag_note({m: list(r) for m, r in seen.items()})]
    return [table]


def per_parser(section: Mapping[str, Any]) -> list[PaperTable]:
    """Seed 000: mean with CI per parser for CER, WER, Structure P/R/F1, BC and CS (columns a
    run did not measure, e.g. CS without an embedder, are left out); the interval is seed 000's
    percentile bootstrap over the documents, recomputed from the rows."""
    aggregates = section.get("aggregates") or {}
    rows: list[Mapping[str, Any]] = section.get("results") or []
    columns = [
        (title, metric)
        for title, metric in SEED000_COLUMNS
        if any(metric in aggregates[s] for s in aggregates)
    ]
    if not columns:
        return []
    level = float(section.get("confidence", 0.95))
    metrics = [metric for _, metric in columns]
    starts = [m for m in SEED000_GROUPS if m in metrics]
    table = PaperTable(
        f"Parsing quality by parser (mean [{level:.0%} CI])",
        ["Parser", *[title for title, _ in columns], "n"],
        breaks=tuple(1 + metrics.index(m) for m in starts),
    )
    per_case = {metric: values_by_system(rows, metric) for _, metric in columns}
    seen: dict[str, dict[str, None]] = {}
    for system in _systems(section):
        cells = [Cell(system)]
        n = 0
        for _, metric in columns:
            cases = per_case[metric].get(system, {})
            values = [cases[c] for c in sorted(cases)]
            n = max(n, len(values))
            cells.append(
                _cell(seed_interval(values, section), rows, system, (metric,), seen, section)
            )
        table.rows.append([*cells, Cell(str(n))])
    lower = [t for t, m in columns if m in ("cer", "wer")]
    named = [f"{t} = {ABBREVIATIONS[t]}" for t, _ in columns if t in ABBREVIATIONS]
    table.notes = [
        f"{', '.join(lower)}: lower is better; the others: higher is better."
        + (f" {', '.join(named)}." if named else ""),
        interval_note(section, "documents"),
        *flag_note({m: list(r) for m, r in seen.items()}),
    ]
    return [table]
