"""HTML for the ``omnidocbench`` kind: a page's ``blocks`` view and the ``omnidocbench``
analysis (the leaderboard's numbers per system, then per page-attribute group).

A block's diff is drawn inline, truth to prediction (both as OmniDocBench normalised them):
``[-deleted-]``, ``{+inserted+}``, a substitution as both, and ``…n…`` for n unchanged
characters between context, so that every block of a page fits in one table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.analysis import html_table
from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.fmt import NA, mapping, mappings, num
from pytest_doceval.html.model import SuiteView
from pytest_doceval.kinds.omnidocbench.paper import COLUMNS, cell_text
from pytest_doceval.metrics.text import DIFF_CONTEXT

Block = dict[str, Any]


def inline_diff(truth: str, prediction: str) -> str:
    """`truth` → `prediction` as one line of text with the edits marked (see the module):
    rapidfuzz's Levenshtein opcodes, the alignment of the distance OmniDocBench counts."""
    from rapidfuzz.distance import Levenshtein

    out = []
    for op in Levenshtein.opcodes(truth, prediction):
        tag = op.tag
        old, new = truth[op.src_start : op.src_end], prediction[op.dest_start : op.dest_end]
        if tag == "equal":
            out.append(_elide(old))
        elif tag == "replace":
            out.append(f"[-{old}-]{{+{new}+}}")
        elif tag == "delete":
            out.append(f"[-{old}-]")
        else:
            out.append(f"{{+{new}+}}")
    return "".join(out)


def _elide(text: str) -> str:
    """An unchanged run, cut to `DIFF_CONTEXT` characters at each end when long."""
    if len(text) <= 2 * DIFF_CONTEXT + 10:
        return text
    return f"{text[:DIFF_CONTEXT]}…{len(text) - 2 * DIFF_CONTEXT}…{text[-DIFF_CONTEXT:]}"


def _order(block: Mapping[str, Any]) -> str:
    truth, prediction = block.get("order_truth"), block.get("order_prediction")
    if truth is None and prediction is None:
        return ""
    return f"{NA if truth is None else truth} → {NA if prediction is None else prediction}"


def _edit(block: Mapping[str, Any]) -> str:
    edit, longest = num(block.get("edit")), num(block.get("max_len"))
    if edit is None or not longest:
        return NA if edit is None else f"{edit:g}"
    return f"{edit:g}/{longest:g} = {edit / longest:.3f}"


def blocks(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    """One table per row: each matched block's category, reading order, edit and diff."""
    out: list[Block] = []
    for view in views:
        rows = [
            [
                number,
                str(block.get("category") or ""),
                _order(block),
                _edit(block),
                inline_diff(str(block.get("truth") or ""), str(block.get("prediction") or "")),
            ]
            for number, block in enumerate(mappings(mapping(view).get("blocks")), start=1)
        ]
        block_: Block = {
            "t": "table",
            "title": "Blocks as matched (OmniDocBench quick_match)",
            "note": "diff truth → prediction after OmniDocBench's normalisation: "
            "[-deleted-] {+inserted+}; an empty side is an unmatched block",
            "head": ["#", "category", "order truth → prediction", "edit / max len", "diff"],
            "rows": rows,
        }
        chunk.size += len(json.dumps(block_, ensure_ascii=False))
        out.append(block_)
    return out


def leaderboard(key: str, value: Any, view: SuiteView) -> Markup:
    """The leaderboard's columns per system, per tier where known, then each page-attribute
    group's; then what the matcher did beyond its plain path, and the pages not scored."""
    systems = {str(k): mapping(v) for k, v in mapping(value).items()}
    if not systems:
        return Markup()
    head = ["system", "pages", *[title for title, _, _ in COLUMNS]]
    rows = []
    for system, entry in systems.items():
        pages = f"{entry.get('pages')}"
        if entry.get("pages_not_scored"):
            pages += f" ({entry.get('pages_not_scored')} not scored)"
        rows.append([system, pages, *cells(mapping(entry.get("leaderboard")))])
    html = Markup(
        '<h3>OmniDocBench v1.6 leaderboard numbers <span class="key">({})</span></h3>'
        '<p class="legend">as OmniDocBench prints them: Overall = ((1 - Text Edit) x 100 + '
        "CDM + TEDS) / 3; edit distances lower is better, CDM and TEDS (×100) higher; each the "
        "mean over pages (ALL_page_avg)</p>{}"
    ).format(key, html_table(head, rows))
    tiers = [
        [system, tier, mapping(numbers).get("pages"), *cells(mapping(numbers))]
        for system, entry in systems.items()
        for tier, numbers in mapping(entry.get("by_tier")).items()
    ]
    if tiers:
        html += Markup("<h4>By tier</h4>") + html_table(
            ["system", "tier", "pages", *[t for t, _, _ in COLUMNS]], tiers
        )
    groups = [
        [system, group, mapping(numbers).get("pages"), *cells(mapping(numbers))]
        for system, entry in systems.items()
        for group, numbers in mapping(entry.get("by_attribute")).items()
    ]
    if groups:
        html += Markup("<h4>By page attribute</h4>") + html_table(
            ["system", "group", "pages", *[t for t, _, _ in COLUMNS]], groups
        )
    taken = [
        [system, kind, name, str(pages)]
        for system, entry in systems.items()
        for kind in ("fallbacks", "deadlines", "formula_candidates")
        for name, pages in mapping(entry.get(kind)).items()
    ]
    if taken:
        html += Markup("<h4>Fallbacks, deadlines and formula candidates (pages)</h4>") + html_table(
            ["system", "what", "which", "pages"], taken
        )
    missing = [
        [system, case, str(reason)]
        for system, entry in systems.items()
        for case, reason in mapping(entry.get("not_scored")).items()
    ]
    if missing:
        html += Markup("<h4>Pages not scored</h4>") + html_table(["system", "page", "why"], missing)
    return html


def cells(numbers: Mapping[str, Any]) -> list[str]:
    """The leaderboard's columns of `numbers` (`html_table` escapes them)."""
    return [cell_text(numbers, metric, scale) for _, metric, scale in COLUMNS]
