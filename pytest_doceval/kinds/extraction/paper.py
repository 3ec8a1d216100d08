"""The extraction kind's paper table: the headline score per extractor and OCR-fidelity
variant -- IMQ for entry lists (seed 003: the mean over pages), field accuracy for documents
(seed 004's Acc_total over the documents: the aggregate's ``corpus``, not the mean of
per-document values, see `fields`) -- each with the percentile bootstrap CI over pages (for IMQ
recomputed from the rows, the report's own interval being its method's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_doceval.kinds.analyses import values_by_system
from pytest_doceval.paper import (
    Cell,
    PaperTable,
    flag_note,
    flag_reasons,
    interval_note,
    seed_interval,
    with_ci,
)

# The metrics this table reports, with their titles and the aggregate's keys of the value and
# its interval, in the seeds' order.
REPORTED = (
    ("imq", "IMQ", "mean", ("ci_low", "ci_high")),
    ("field_accuracy", "Field accuracy", "corpus", ("corpus_ci_low", "corpus_ci_high")),
)
VALUE_NAMES = {"mean": "mean", "corpus": "Acc_total"}
NOTES = {
    "corpus": "Field accuracy is seed 004's Acc_total = Σ w_k Acc_k / Σ w_k, Acc_k the share of "
    "the documents with field k whose field k matches (a list field when the whole list does).",
}


def per_variant(section: Mapping[str, Any]) -> list[PaperTable]:
    aggregates = section.get("aggregates") or {}
    rows: list[Mapping[str, Any]] = section.get("results") or []
    where: dict[tuple[str, str], str] = {}
    for row in rows:
        labels = row.get("labels") or {}
        if "extractor" in labels and "variant" in labels:
            where[(str(labels["extractor"]), str(labels["variant"]))] = str(row["system"])
    extractors = list(dict.fromkeys(e for e, _ in where))
    variants = [v for v in section.get("variants") or [] if any(k[1] == v for k in where)]
    level = float(section.get("confidence", 0.95))
    tables = []
    for metric, title, key, bounds in REPORTED:
        if not any(metric in a for a in aggregates.values()):
            continue
        table = PaperTable(
            f"{title} by extractor and OCR variant ({VALUE_NAMES[key]} [{level:.0%} CI])",
            ["Extractor", *variants],
        )
        seen: dict[str, dict[str, None]] = {}
        per_case = values_by_system(rows, metric)
        for extractor in extractors:
            cells = [Cell(extractor)]
            for variant in variants:
                system = where.get((extractor, variant))
                entry = (aggregates.get(system) or {}).get(metric) if system else None
                reasons = flag_reasons(rows, metric, system) if system else []
                if reasons:
                    seen.setdefault(metric, {}).update(dict.fromkeys(reasons))
                if key == "mean":  # the seeds' interval, from the per-page values
                    cases = per_case.get(system or "", {})
                    text = seed_interval([cases[c] for c in sorted(cases)], section)
                else:  # the corpus value's interval is already the percentile bootstrap
                    text = with_ci(entry, key=key, bounds=bounds)
                cells.append(Cell(text, bool(reasons)))
            table.rows.append(cells)
        reference = section.get("reference_variant")
        table.notes = [
            "Columns are the OCR-fidelity variants of the same documents"
            + (f" ({reference} is the reference)." if reference else "."),
            *([NOTES[key]] if key in NOTES else []),
            interval_note(section, "pages"),
            *flag_note({m: list(r) for m, r in seen.items()}),
        ]
        tables.append(table)
    return tables
