"""HTML for the extraction kind: its row views (entry alignment, field verdicts, schema errors)
and its analyses (the drop from the reference OCR variant, verdict counts). Without these the
generic renderers show the same data as tables or JSON; with them a reviewer reads the worst
pairs first and the robustness question as one table per extractor.

Register them with ``VIEWS`` in `views` and ``ANALYSES`` in `analyses` (the extractors'
``comparisons`` are in the documents kind's shape and use its renderer). Every string from a
report is escaped here (analyses) or drawn as text by the page's script (view blocks).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.fmt import (
    esc,
    fmt,
    fmt_ci,
    fmt_int,
    fmt_p,
    fmt_pp,
    fmt_signed,
    mapping,
    mappings,
    plain,
    pretty_json,
)
from pytest_doceval.html.model import SuiteView, not_testable

Block = dict[str, Any]
MISSING = "(missing)"
SPURIOUS = "(spurious)"


def _block(chunk: Chunk, title: str, head: list[str], rows: list[list[Any]], note: str) -> Block:
    block: Block = {"t": "table", "title": title, "head": head, "rows": plain(rows, 6)}
    if note:
        block["note"] = note
    chunk.size += len(json.dumps(block, ensure_ascii=False))
    return block


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else pretty_json(value)


def entry_alignment(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    """The one-to-one entry pairs, worst first (as the view lists them)."""
    out = []
    for view in views:
        v = mapping(view)
        rows = [
            [
                p.get("gold_name") if p.get("gold") is not None else SPURIOUS,
                p.get("pred_name") if p.get("pred") is not None else MISSING,
                p.get("quality"),
            ]
            for p in mappings(v.get("pairs"))
        ]
        note = (
            f"{fmt_int(v.get('n_gold'))} gold, {fmt_int(v.get('n_pred'))} "
            f"predicted, {fmt_int(v.get('true_positives'))} pairs at quality >= "
            f"{fmt(v.get('threshold'), 2)}"
        )
        problems = [str(p) for p in v.get("problems") or []]
        if problems:
            note += "; unreadable: " + "; ".join(problems)
        head = ["gold entry", "predicted entry", "quality 1 - d_e"]
        out.append(_block(chunk, "Entry alignment (worst pairs first)", head, rows, note))
    return out


def field_verdicts(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    """The counts per verdict, then every field that was not matched."""
    out = []
    for view in views:
        v = mapping(view)
        counts = mapping(v.get("counts"))
        note = ", ".join(f"{k.replace('_', ' ')} {fmt_int(n)}" for k, n in counts.items())
        rows = [
            [d.get("path"), d.get("verdict"), _shown(d.get("gold")), _shown(d.get("pred")),
             d.get("similarity")]
            for d in mappings(v.get("verdicts"))
        ]  # fmt: skip
        head = ["path", "verdict", "gold", "predicted", "similarity"]
        out.append(_block(chunk, "Field verdicts (matched fields counted only)", head, rows, note))
    return out


def schema_errors(name: str, views: Sequence[Any], chunk: Chunk) -> list[Block]:
    out = []
    for view in views:
        v = mapping(view)
        rows = [
            [e.get("path"), e.get("keyword"), e.get("message")] for e in mappings(v.get("errors"))
        ]
        shown, total = len(rows), v.get("error_count")
        note = f"{fmt_int(total)} error(s)" + (f", first {shown} shown" if total != shown else "")
        head = ["where", "keyword", "message"]
        out.append(_block(chunk, "JSON Schema violations", head, rows, note))
    return out


def _verdict_cell(entry: Mapping[str, Any]) -> str:
    untestable = not_testable(entry.get("n"))
    if untestable:
        return f'<td class="ns">{esc(untestable)}</td>'
    verdict = str(entry.get("verdict") or "")
    if verdict in ("worse", "better"):
        return f'<td class="delta sig {verdict}">{esc(verdict)}</td>'
    return '<td class="ns">no significant change</td>'


def ocr_robustness(key: str, value: Any, view: SuiteView) -> str:
    """Per extractor: each metric on each variant against the reference variant, paired over
    pages (seed 003: how much does noisier OCR cost?)."""
    entries = mappings(value)
    if not entries:
        return ""
    reference = esc(entries[0].get("reference"))
    out = [f"<h3>Robustness to OCR fidelity: each variant − {reference}, paired over pages</h3>"]
    for extractor in dict.fromkeys(str(e.get("extractor")) for e in entries):
        rows = "".join(
            f"<tr><td>{esc(e.get('metric'))}</td><td>{esc(e.get('variant'))}</td>"
            f'<td class="num">{fmt_int(e.get("n"))}</td>'
            f'<td class="num">{fmt(e.get("reference_mean"))}</td>'
            f'<td class="num">{fmt(e.get("variant_mean"))}</td>'
            f'<td class="num">{fmt_signed(e.get("mean_diff"))}</td>'
            f'<td class="num">{fmt_ci(e)}</td><td class="num">{fmt_p(e.get("p_ttest"))}</td>'
            f'<td class="num">{fmt_p(e.get("p_wilcoxon"))}</td>'
            f'<td class="num">{esc(fmt_pp(e.get("mde")))}</td>{_verdict_cell(e)}</tr>'
            for e in entries
            if str(e.get("extractor")) == extractor
        )
        out.append(
            f"<h4>{esc(extractor)}</h4>"
            '<table class="comparisons"><thead><tr><th>metric</th><th>variant</th><th>pages</th>'
            f"<th>{reference}</th><th>variant</th><th>Δ mean</th><th>CI</th><th>p (t)</th>"
            '<th>p (Wilcoxon)</th><th title="the change this comparison detects with 80% '
            f'power">MDE</th><th>verdict</th></tr></thead><tbody>{rows}</tbody></table>'
        )
    return "".join(out)


def verdict_counts(key: str, value: Any, view: SuiteView) -> str:
    """Summed verdicts (fields) or entry counts (entries) per extractor and variant."""
    entries = mappings(value)
    if not entries:
        return ""
    columns = list(
        dict.fromkeys(k for e in entries for k in e if k not in ("extractor", "variant"))
    )
    head = "".join(f"<th>{esc(c.replace('_', ' '))}</th>" for c in columns)
    rows = "".join(
        f"<tr><td>{esc(e.get('extractor'))}</td><td>{esc(e.get('variant'))}</td>"
        + "".join(f'<td class="num">{fmt_int(e.get(c))}</td>' for c in columns)
        + "</tr>"
        for e in entries
    )
    return (
        "<h3>Verdicts per extractor and OCR variant (summed over pages)</h3>"
        f'<table class="generic"><thead><tr><th>extractor</th><th>variant</th>{head}</tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )
