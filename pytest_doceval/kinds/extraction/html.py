"""HTML for the extraction kind: its row views (entry alignment, field verdicts, schema errors)
and its analyses (the drop from the reference OCR variant, verdict counts). Without these the
generic renderers show the same data as tables or JSON; with them a reviewer reads the worst
pairs first and the robustness question as one table per extractor.

Register them with ``VIEWS`` in `views` and ``ANALYSES`` in `analyses` (the extractors'
``comparisons`` are in the documents kind's shape and use its renderer). Every string from a
report is escaped by the ``markupsafe.Markup`` templates here (analyses) or drawn as text by the
page's script (view blocks).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.fmt import (
    as_text,
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


def _verdict_cell(entry: Mapping[str, Any]) -> Markup:
    untestable = not_testable(entry.get("n"))
    if untestable:
        return Markup('<td class="ns">{}</td>').format(untestable)
    verdict = str(entry.get("verdict") or "")
    if verdict in ("worse", "better"):
        return Markup('<td class="delta sig {verdict}">{verdict}</td>').format(verdict=verdict)
    return Markup('<td class="ns">no significant change</td>')


def ocr_robustness(key: str, value: Any, view: SuiteView) -> Markup:
    """Per extractor: each metric on each variant against the reference variant, paired over
    pages (seed 003: how much does noisier OCR cost?)."""
    entries = mappings(value)
    if not entries:
        return Markup()
    reference = as_text(entries[0].get("reference"))
    out = [
        Markup("<h3>Robustness to OCR fidelity: each variant − {}, paired over pages</h3>").format(
            reference
        )
    ]
    row = Markup(
        '<tr><td>{metric}</td><td>{variant}</td><td class="num">{n}</td>'
        '<td class="num">{reference}</td><td class="num">{mean}</td><td class="num">{diff}</td>'
        '<td class="num">{ci}</td><td class="num">{p_t}</td><td class="num">{p_w}</td>'
        '<td class="num">{mde}</td>{verdict}</tr>'
    )
    for extractor in dict.fromkeys(str(e.get("extractor")) for e in entries):
        rows = Markup().join(
            row.format(
                metric=as_text(e.get("metric")),
                variant=as_text(e.get("variant")),
                n=fmt_int(e.get("n")),
                reference=fmt(e.get("reference_mean")),
                mean=fmt(e.get("variant_mean")),
                diff=fmt_signed(e.get("mean_diff")),
                ci=fmt_ci(e),
                p_t=fmt_p(e.get("p_ttest")),
                p_w=fmt_p(e.get("p_wilcoxon")),
                mde=fmt_pp(e.get("mde")),
                verdict=_verdict_cell(e),
            )
            for e in entries
            if str(e.get("extractor")) == extractor
        )
        out.append(
            Markup(
                '<h4>{}</h4><table class="comparisons"><thead><tr><th>metric</th>'
                "<th>variant</th><th>pages</th><th>{}</th><th>variant</th><th>Δ mean</th>"
                '<th>CI</th><th>p (t)</th><th>p (Wilcoxon)</th><th title="the change this '
                'comparison detects with 80% power">MDE</th><th>verdict</th></tr></thead>'
                "<tbody>{}</tbody></table>"
            ).format(extractor, reference, rows)
        )
    return Markup().join(out)


def verdict_counts(key: str, value: Any, view: SuiteView) -> Markup:
    """Summed verdicts (fields) or entry counts (entries) per extractor and variant."""
    entries = mappings(value)
    if not entries:
        return Markup()
    columns = list(
        dict.fromkeys(k for e in entries for k in e if k not in ("extractor", "variant"))
    )
    head = Markup().join(Markup("<th>{}</th>").format(c.replace("_", " ")) for c in columns)
    number = Markup('<td class="num">{}</td>')
    rows = Markup().join(
        Markup("<tr><td>{}</td><td>{}</td>{}</tr>").format(
            as_text(e.get("extractor")),
            as_text(e.get("variant")),
            Markup().join(number.format(fmt_int(e.get(c))) for c in columns),
        )
        for e in entries
    )
    return Markup(
        "<h3>Verdicts per extractor and OCR variant (summed over pages)</h3>"
        '<table class="generic"><thead><tr><th>extractor</th><th>variant</th>{}</tr>'
        "</thead><tbody>{}</tbody></table>"
    ).format(head, rows)
