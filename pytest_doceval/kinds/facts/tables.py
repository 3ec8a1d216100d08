"""The ``table`` fact check, following olmOCR-bench's ``TableTest.run``, over the tables of a
page output: markdown ones read by `markdown_tables`, HTML ones by `html_tables`, both grids
with neighbours (`grid`).
"""

from __future__ import annotations

from rapidfuzz import fuzz

from pytest_doceval.kinds.facts.grid import CellSpec, TableData, build_table
from pytest_doceval.kinds.facts.html_tables import parse_html_tables
from pytest_doceval.kinds.facts.markdown_tables import parse_markdown_tables
from pytest_doceval.kinds.facts.model import TableFact
from pytest_doceval.kinds.facts.normalise import normalise_text
from pytest_doceval.kinds.facts.result import FactResult, PageOutput, quote

__all__ = [
    "CellSpec",
    "TableData",
    "build_table",
    "check_table",
    "parse_html_tables",
    "parse_markdown_tables",
]

# --- the table fact ---

_RELATION_LABEL = {
    "up": "the cell above",
    "down": "the cell below",
    "left": "the cell to the left",
    "right": "the cell to the right",
    "top_heading": "the column heading",
    "left_heading": "the row heading",
}


def _threshold(text: str, max_diffs: int) -> float:
    """olmOCR's cell threshold: 1 - max_diffs/len, never below 0.5."""
    return max(0.5, 1.0 - max_diffs / (len(text) or 1))


def check_table(fact: TableFact, output: PageOutput) -> FactResult:
    """olmOCR-bench's table check: some cell matching `cell` has every named neighbour."""
    target = normalise_text(fact.cell)
    threshold = _threshold(target, fact.max_diffs)
    tables = ([] if fact.ignore_markdown_tables else output.markdown_tables) + output.html_tables
    if not tables:
        kinds = "HTML" if fact.ignore_markdown_tables else "markdown or HTML"
        return FactResult(False, 0.0, f"no table ({kinds}) in the output")
    wanted = [
        (name, expected)
        for name in TableFact.RELATIONS
        if (expected := normalise_text(getattr(fact, name)))
    ]
    best_cell, best_cell_text = -1.0, ""
    best: tuple[float, list[str]] | None = None  # weakest similarity, failure reasons
    candidates = 0
    for table in tables:
        texts = table.normalised
        for pos, text in texts.items():
            similarity = fuzz.ratio(target, text) / 100.0
            if similarity > best_cell:
                best_cell, best_cell_text = similarity, text
            if similarity < threshold:
                continue
            candidates += 1
            weakest, reasons = similarity, []
            for name, expected in wanted:
                neighbours = table.relations[name][pos]
                scored = [(fuzz.ratio(expected, texts[n]) / 100.0, texts[n]) for n in neighbours]
                top, top_text = max(scored, default=(0.0, None))
                weakest = min(weakest, top)
                need = _threshold(expected, fact.max_diffs)
                if top < need:
                    label = _RELATION_LABEL[name]
                    if top_text is None:
                        reasons.append(f"it has no {label.removeprefix('the ')}")
                    else:
                        reasons.append(
                            f"{label} is {quote(top_text, 40)}, not {quote(expected, 40)} "
                            f"(similarity {top:.2f} < {need:.2f})"
                        )
            if not reasons:
                detail = f" with {', '.join(n for n, _ in wanted)}" if wanted else ""
                return FactResult(True, weakest, f"cell {quote(target, 40)} found{detail}")
            if best is None or weakest > best[0]:
                best = (weakest, reasons)
    if best is None:
        return FactResult(
            False,
            max(best_cell, 0.0),
            f"no cell matches {quote(target, 40)} (threshold {threshold:.2f}); closest cell "
            f"{quote(best_cell_text, 40)} at similarity {max(best_cell, 0.0):.2f}",
        )
    many = f" (best of {candidates} matching cells)" if candidates > 1 else ""
    return FactResult(
        False,
        best[0],
        f"cell {quote(target, 40)} found{many}, but " + "; ".join(best[1]),
    )
