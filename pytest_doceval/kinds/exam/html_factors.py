"""Renderers for the exam kind's factor analyses (seed 001): the ANOVA of correctness on
nation and task (one table per track, effect rows with SS, df, F, p and eta squared), the
binomial consistency test (does nation or task vary more, model by model), and the reference
lines (random guessing per track and nation, human pass marks). Tables, never raw JSON; a value
of another shape falls back to the generic renderer."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from pytest_doceval.html.fmt import as_text, fmt, fmt_int, fmt_p, mapping, mappings
from pytest_doceval.html.model import SuiteView


def _fallback(key: str, value: Any, view: SuiteView) -> Markup:
    from pytest_doceval.html.analysis import generic

    return generic(key, value, view)


def _table(css: str, head: list[str], rows: list[Markup]) -> Markup:
    heads = Markup().join(Markup("<th>{}</th>").format(h) for h in head)
    return Markup('<table class="{}"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>').format(
        css, heads, Markup().join(rows)
    )


def anova(key: str, value: Any, view: SuiteView) -> Markup:
    tracks = mappings(value)
    if not tracks or not all("effects" in t for t in tracks):
        return _fallback(key, value, view)
    rows = []
    for t in tracks:
        effects = mappings(t.get("effects"))
        for number, e in enumerate(effects):
            first = number == 0
            lead = (
                Markup(
                    '<td rowspan="{span}">{track}</td><td class="num" rowspan="{span}">{n}</td>'
                ).format(span=len(effects), track=as_text(t.get("track")), n=fmt_int(t.get("n")))
                if first
                else Markup()
            )
            rows.append(
                Markup(
                    '<tr>{lead}<td>{name}</td><td class="num">{ss}</td><td class="num">{df}</td>'
                    '<td class="num">{f}</td><td class="num">{p}</td><td class="num">{eta}</td>'
                    '<td class="num">{partial}</td></tr>'
                ).format(
                    lead=lead,
                    name=as_text(e.get("name")),
                    ss=fmt(e.get("ss"), 3),
                    df=fmt_int(e.get("df")),
                    f=fmt(e.get("f"), 2),
                    p=fmt_p(e.get("p")),
                    eta=fmt(e.get("eta_squared"), 3),
                    partial=fmt(e.get("partial_eta_squared"), 3),
                )
            )
    method = next((str(t["method"]) for t in tracks if t.get("method")), "")
    head = ["track", "n", "effect", "SS", "df", "F", "p", "η²", "partial η²"]
    return (
        Markup("<h3>What explains correctness: nation or task (ANOVA per track)</h3>")
        + _table("exam-anova", head, rows)
        + (Markup('<p class="legend">{}.</p>').format(method) if method else Markup())
    )


def consistency(key: str, value: Any, view: SuiteView) -> Markup:
    tracks = mappings(value)
    if not tracks or not all("models" in t for t in tracks):
        return _fallback(key, value, view)
    rows = []
    for t in tracks:
        for m in mappings(t.get("models")):
            rows.append(
                Markup(
                    '<tr><td>{track}</td><td>{model}</td><td class="num">{n}</td>'
                    '<td class="num">{nation}</td><td class="num">{task}</td>'
                    '<td class="num">{ratio}</td><td>{larger}</td></tr>'
                ).format(
                    track=as_text(t.get("track")),
                    model=as_text(m.get("model")),
                    n=fmt_int(m.get("n")),
                    nation=fmt(m.get("var_nation"), 4),
                    task=fmt(m.get("var_task"), 4),
                    ratio=fmt(m.get("ratio"), 2),
                    larger=as_text(m.get("larger")),
                )
            )
        verdict = "consistent" if t.get("consistent") is True else "not consistent"
        rows.append(
            Markup(
                '<tr class="total"><td>{track}</td><td colspan="5">nation larger {nation}, task '
                "larger {task}, undecided {undecided}; binomial p = {p}</td><td>{verdict}</td></tr>"
            ).format(
                track=as_text(t.get("track")),
                nation=fmt_int(t.get("nation_larger")),
                task=fmt_int(t.get("task_larger")),
                undecided=fmt_int(t.get("undecided")),
                p=fmt_p(t.get("p_binomial")),
                verdict=verdict,
            )
        )
    head = ["track", "model", "n", "var(nation)", "var(task)", "ratio", "larger"]
    return Markup("<h3>Consistency across models: does nation or task vary more?</h3>") + _table(
        "exam-consistency", head, rows
    )


def references(key: str, value: Any, view: SuiteView) -> Markup:
    data = mapping(value)
    if not data:
        return _fallback(key, value, view)
    overall = fmt(data.get("random"), 3)
    line = Markup('<tr><td>{}</td><td class="num">{}</td></tr>')
    rows = [line.format("random guess, all questions", overall)]
    for group, title in (("random_by_track", "track"), ("random_by_nation", "nation")):
        for name, share in mapping(data.get(group)).items():
            rows.append(line.format(f"random guess, {title} {name}", fmt(share, 3)))
    for nation, mark in mapping(data.get("human_pass_marks")).items():
        rows.append(line.format(f"human pass mark, {nation}", fmt(mark, 3)))
    return Markup("<h3>Reference lines</h3>") + _table(
        "exam-references", ["reference", "accuracy"], rows
    )


FACTOR_RENDERERS = {"anova": anova, "consistency": consistency, "references": references}
