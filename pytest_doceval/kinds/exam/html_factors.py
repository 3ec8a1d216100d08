"""Renderers for the exam kind's factor analyses (seed 001): the ANOVA of correctness on
nation and task (one table per track, effect rows with SS, df, F, p and eta squared), the
binomial consistency test (does nation or task vary more, model by model), and the reference
lines (random guessing per track and nation, human pass marks). Tables, never raw JSON; a value
of another shape falls back to the generic renderer."""

from __future__ import annotations

from typing import Any

from pytest_doceval.html.fmt import esc, fmt, fmt_int, fmt_p, mapping, mappings
from pytest_doceval.html.model import SuiteView


def _fallback(key: str, value: Any, view: SuiteView) -> str:
    from pytest_doceval.html.analysis import generic

    return generic(key, value, view)


def _table(css: str, head: list[str], rows: list[str]) -> str:
    heads = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join(rows)
    return f'<table class="{css}"><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>'


def anova(key: str, value: Any, view: SuiteView) -> str:
    tracks = mappings(value)
    if not tracks or not all("effects" in t for t in tracks):
        return _fallback(key, value, view)
    rows = []
    for t in tracks:
        effects = mappings(t.get("effects"))
        for number, e in enumerate(effects):
            first = number == 0
            span = f' rowspan="{len(effects)}"' if first else ""
            lead = (
                f"<td{span}>{esc(t.get('track'))}</td>"
                f'<td class="num"{span}>{fmt_int(t.get("n"))}</td>'
                if first
                else ""
            )
            rows.append(
                f"<tr>{lead}<td>{esc(e.get('name'))}</td>"
                f'<td class="num">{fmt(e.get("ss"), 3)}</td>'
                f'<td class="num">{fmt_int(e.get("df"))}</td>'
                f'<td class="num">{fmt(e.get("f"), 2)}</td>'
                f'<td class="num">{fmt_p(e.get("p"))}</td>'
                f'<td class="num">{fmt(e.get("eta_squared"), 3)}</td>'
                f'<td class="num">{fmt(e.get("partial_eta_squared"), 3)}</td></tr>'
            )
    method = next((str(t["method"]) for t in tracks if t.get("method")), "")
    head = ["track", "n", "effect", "SS", "df", "F", "p", "η²", "partial η²"]
    return (
        "<h3>What explains correctness: nation or task (ANOVA per track)</h3>"
        + _table("exam-anova", head, rows)
        + (f'<p class="legend">{esc(method)}.</p>' if method else "")
    )


def consistency(key: str, value: Any, view: SuiteView) -> str:
    tracks = mappings(value)
    if not tracks or not all("models" in t for t in tracks):
        return _fallback(key, value, view)
    rows = []
    for t in tracks:
        for m in mappings(t.get("models")):
            rows.append(
                f"<tr><td>{esc(t.get('track'))}</td><td>{esc(m.get('model'))}</td>"
                f'<td class="num">{fmt_int(m.get("n"))}</td>'
                f'<td class="num">{fmt(m.get("var_nation"), 4)}</td>'
                f'<td class="num">{fmt(m.get("var_task"), 4)}</td>'
                f'<td class="num">{fmt(m.get("ratio"), 2)}</td><td>{esc(m.get("larger"))}</td></tr>'
            )
        verdict = "consistent" if t.get("consistent") is True else "not consistent"
        rows.append(
            f'<tr class="total"><td>{esc(t.get("track"))}</td><td colspan="5">nation larger '
            f"{fmt_int(t.get('nation_larger'))}, task larger {fmt_int(t.get('task_larger'))}, "
            f"undecided {fmt_int(t.get('undecided'))}; binomial p = {fmt_p(t.get('p_binomial'))}"
            f"</td><td>{verdict}</td></tr>"
        )
    head = ["track", "model", "n", "var(nation)", "var(task)", "ratio", "larger"]
    return "<h3>Consistency across models: does nation or task vary more?</h3>" + _table(
        "exam-consistency", head, rows
    )


def references(key: str, value: Any, view: SuiteView) -> str:
    data = mapping(value)
    if not data:
        return _fallback(key, value, view)
    overall = fmt(data.get("random"), 3)
    rows = [f'<tr><td>random guess, all questions</td><td class="num">{overall}</td></tr>']
    for group, title in (("random_by_track", "track"), ("random_by_nation", "nation")):
        for name, share in mapping(data.get(group)).items():
            rows.append(
                f"<tr><td>random guess, {title} {esc(name)}</td>"
                f'<td class="num">{fmt(share, 3)}</td></tr>'
            )
    for nation, mark in mapping(data.get("human_pass_marks")).items():
        rows.append(
            f'<tr><td>human pass mark, {esc(nation)}</td><td class="num">{fmt(mark, 3)}</td></tr>'
        )
    return "<h3>Reference lines</h3>" + _table("exam-references", ["reference", "accuracy"], rows)


FACTOR_RENDERERS = {"anova": anova, "consistency": consistency, "references": references}
