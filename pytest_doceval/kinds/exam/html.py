"""Renderers for the exam kind's analyses (seed 001): the accuracy table (model x track, with
CIs, the random line and the human pass marks), the delta table with the seed's reading of each
delta and a plot of the deltas with their CIs, and accuracy by nation x task.

Each is an `AnalysisRenderer` ``(key, value, view) -> html`` for ``ANALYSES`` in
`pytest_doceval.html.analysis`; a value of an unexpected shape falls back to the generic
renderer. Accuracies are shown as percentages, as the seed writes them; every string is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_doceval.html.fmt import (
    NA,
    esc,
    fmt,
    fmt_int,
    fmt_p,
    fmt_pp,
    mapping,
    mappings,
    num,
    unique,
)
from pytest_doceval.html.model import SuiteView, not_testable
from pytest_doceval.html.plots import axis, ci_row
from pytest_doceval.kinds.exam.table import answers_from_rows, track_order


def pct(value: Any, signed: bool = False) -> str:
    """A share as a percentage with one decimal (signed for a difference; never "-0.0%")."""
    x = num(value)
    if x is None:
        return NA
    shown = round(x * 100, 1)
    if shown == 0:
        return "0.0%"
    return f"{shown:+.1f}%" if signed else f"{shown:.1f}%"


def pct_ci(entry: Mapping[str, Any], signed: bool = False) -> str:
    return f"[{pct(entry.get('ci_low'), signed)}, {pct(entry.get('ci_high'), signed)}]"


def _fallback(key: str, value: Any, view: SuiteView) -> str:
    # Imported here: analyses.py imports this module to register its renderers.
    from pytest_doceval.html.analysis import generic

    return generic(key, value, view)


def _tracks(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted(unique(str(e.get("track")) for e in entries), key=track_order)


def accuracy(key: str, value: Any, view: SuiteView) -> str:
    """Models down, tracks across: accuracy with its CI, n and parse failures; then the random
    baseline (mean 1/choices of the questions each track asked) and the human pass marks."""
    entries = mappings(value)
    if not entries or not all("model" in e and "track" in e for e in entries):
        return _fallback(key, value, view)
    tracks = _tracks(entries)
    cells = {(str(e["model"]), str(e["track"])): e for e in entries}
    rows = []
    for model in unique(str(e["model"]) for e in entries):
        tds = []
        for track in tracks:
            e = cells.get((model, track))
            if e is None:
                tds.append('<td class="ns">—</td>')
                continue
            failures = int(num(e.get("parse_failures")) or 0)
            tip = (
                f"{model} on {track}: {pct(e.get('accuracy'))} {pct_ci(e)}, "
                f"n={fmt_int(e.get('n'))}, {failures} parse failure(s), "
                f"chance {pct(e.get('chance'))}"
            )
            tds.append(
                f'<td class="num cell" title="{esc(tip)}"><span class="mean">'
                f'{pct(e.get("accuracy"))}</span> <span class="ci">{pct_ci(e)}</span>'
                f' <span class="n">n={fmt_int(e.get("n"))}'
                + (f", {failures} unparsed" if failures else "")
                + "</span></td>"
            )
        rows.append(f"<tr><td>{esc(model)}</td>{''.join(tds)}</tr>")
    references = mapping(view.data.get("references"))
    chance = mapping(references.get("random_by_track"))
    chance_cells = "".join(f'<td class="num ns">{pct(chance.get(t))}</td>' for t in tracks)
    rows.append(f'<tr><td class="ns">random baseline (1/choices)</td>{chance_cells}</tr>')
    marks = mapping(references.get("human_pass_marks"))
    marks_html = ""
    if marks:
        listed = ", ".join(f"{esc(nation)} {pct(mark)}" for nation, mark in marks.items())
        marks_html = (
            f'<p class="legend">Human pass marks (reference only, not comparable item by '
            f"item): {listed}.</p>"
        )
    head = "".join(f"<th>track {esc(t)}</th>" for t in tracks)
    return (
        f"<h3>Accuracy by model and track ({view.confidence:.0%} CI over questions)</h3>"
        f'<table class="exam-accuracy"><thead><tr><th>model</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{marks_html}"
    )


def deltas(key: str, value: Any, view: SuiteView) -> str:
    """Seed 001's delta table: per model, track - track on the questions both answered, with
    its paired CI, McNemar's p, whether the seed's reading is supported, and that reading."""
    entries = mappings(value)
    if not entries or not all("delta" in e and "model" in e for e in entries):
        return _fallback(key, value, view)
    rows = []
    for e in entries:
        supported = e.get("supported") is True
        untestable = not_testable(e.get("n"))
        verdict = (
            '<td class="sig">supported</td>'
            if supported
            else f'<td class="ns">{esc(untestable or "not supported")}</td>'
        )
        rows.append(
            f"<tr><td>{esc(e.get('model'))}</td><td>Δ({esc(e.get('delta'))})</td>"
            f'<td class="num">{fmt_int(e.get("n"))}</td>'
            f'<td class="num">{pct(e.get("accuracy_first"))} − {pct(e.get("accuracy_second"))}'
            f"</td>"
            f'<td class="num"><b>{pct(e.get("value"), signed=True)}</b></td>'
            f'<td class="num">{pct_ci(e, signed=True)}</td>'
            f'<td class="num">{fmt_int(e.get("only_first"))} / {fmt_int(e.get("only_second"))}'
            f"</td>"
            f'<td class="num">{fmt_p(e.get("p_mcnemar"))}</td>'
            f'<td class="num">{esc(fmt_pp(e.get("mde")))}</td>{verdict}'
            f"<td>{esc(e.get('interpretation'))}</td></tr>"
        )
    alpha = 1 - view.confidence
    return (
        "<h3>Track deltas (seed 001, 4.4: paired over the questions both tracks asked)</h3>"
        '<table class="exam-deltas"><thead><tr><th>model</th><th>delta</th><th>n</th>'
        "<th>accuracies</th><th>Δ</th><th>CI</th><th>only first / only second</th>"
        "<th>p (McNemar)</th><th title=\"the accuracy change McNemar's exact test detects with "
        f'80% power here">MDE</th><th>reading (Δ&gt;0, p&lt;{alpha:.2g})</th>'
        f"<th>interpretation</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + delta_plot(entries, view.confidence)
    )


def pairwise(key: str, value: Any, view: SuiteView) -> str:
    """Every pair of models per track, paired over the questions both answered: accuracies,
    the difference with its CI, discordant counts, McNemar's p (raw and Bonferroni over the
    track's pairs), Cohen's d and the MDE, and which model is better when that is
    significant (never a verdict at n = 1: nothing is testable there)."""
    entries = mappings(value)
    if not entries or not all("a" in e and "b" in e for e in entries):
        return _fallback(key, value, view)
    rows = []
    for e in entries:
        rows.append(
            f"<tr><td>{esc(e.get('track'))}</td><td>{esc(e.get('a'))}</td>"
            f"<td>{esc(e.get('b'))}</td>"
            f'<td class="num">{fmt_int(e.get("n"))}</td>'
            f'<td class="num">{pct(e.get("accuracy_a"))} − {pct(e.get("accuracy_b"))}</td>'
            f'<td class="num"><b>{pct(e.get("diff"), signed=True)}</b></td>'
            f'<td class="num">{pct_ci(e, signed=True)}</td>'
            f'<td class="num">{fmt_int(e.get("only_a"))} / {fmt_int(e.get("only_b"))}</td>'
            f'<td class="num">{fmt_p(e.get("p_mcnemar"))}</td>'
            f'<td class="num">{fmt_p(e.get("p_bonferroni"))}</td>'
            f'<td class="num">{fmt(e.get("cohens_d"), 2)}</td>'
            f'<td class="num">{esc(fmt_pp(e.get("mde")))}</td>{_pair_verdict(e)}</tr>'
        )
    alpha = 1 - view.confidence
    return (
        "<h3>Pairwise model comparisons per track (paired over shared questions: A − B)</h3>"
        '<table class="exam-pairwise"><thead><tr><th>track</th><th>A</th><th>B</th>'
        "<th>n</th><th>accuracies</th><th>Δ</th>"
        f"<th>{view.confidence:.0%} CI</th><th>only A / only B correct</th>"
        "<th>p (McNemar)</th><th>p (Bonferroni)</th><th>Cohen's d</th>"
        '<th title="the accuracy change McNemar\'s exact test detects with 80% power here">'
        f"MDE</th><th>verdict (α={alpha:.2g})</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _pair_verdict(entry: Mapping[str, Any]) -> str:
    untestable = not_testable(entry.get("n"))
    if untestable:
        return f'<td class="ns">{esc(untestable)}</td>'
    diff = num(entry.get("diff"))
    if entry.get("significant") is not True or not diff:
        return '<td class="ns">no significant difference</td>'
    winner = entry.get("a") if diff > 0 else entry.get("b")
    return f'<td class="sig"><b>{esc(winner)}</b> better</td>'


def delta_plot(entries: Sequence[Mapping[str, Any]], confidence: float) -> str:
    """Each delta as a dot with its CI whisker, on one axis with zero marked."""
    points = [
        (f"{e.get('model')} {e.get('delta')}", num(e.get("value")), *_ci(e))
        for e in entries
        if num(e.get("value")) is not None
    ]
    if not points:
        return ""
    values = [0.0] + [v for p in points for v in p[1:] if v is not None]
    lo, hi, ticks, decimals = axis(values)
    left, width, row_h, top = 150, 260, 22, 26
    axis_y = top + row_h * len(points)
    scale = width / (hi - lo)

    def x(v: float) -> float:
        return round(left + (v - lo) * scale, 1)

    out = [
        f'<svg class="plot" width="{left + width + 24}" height="{axis_y + 26}" role="img" '
        'aria-label="track deltas with confidence intervals">'
        f'<text class="ptitle" x="4" y="15">Δ accuracy ({confidence:.0%} CI)</text>'
    ]
    for t in ticks:
        out.append(
            f'<line class="grid" x1="{x(t)}" x2="{x(t)}" y1="{top - 4}" y2="{axis_y}"/>'
            f'<text class="tick" x="{x(t)}" y="{axis_y + 14}" text-anchor="middle">'
            f"{t * 100:.{max(decimals - 2, 0)}f}%</text>"
        )
    out.append(f'<line class="axis" x1="{x(0)}" x2="{x(0)}" y1="{top - 4}" y2="{axis_y}"/>')
    for row, (label, mean, low, high) in enumerate(points):
        y = top + row_h * row + row_h / 2
        tip = f"{label}: {pct(mean, True)} [{pct(low, True)}, {pct(high, True)}]"
        out.append(ci_row(x, y, left, label=label, tip=tip, mean=mean, ci=(low, high)))
    out.append(
        f'<line class="axis" x1="{left}" x2="{left + width}" y1="{axis_y}" y2="{axis_y}"/></svg>'
    )
    return f'<div class="plots">{"".join(out)}</div>'


def _ci(entry: Mapping[str, Any]) -> tuple[float | None, float | None]:
    return num(entry.get("ci_low")), num(entry.get("ci_high"))


def breakdowns(key: str, value: Any, view: SuiteView) -> str:
    """Per (model, track): accuracy by nation (rows) x task (columns), each cell correct/asked
    from the rows, with the per-nation and per-task accuracies and CIs of the analysis in the
    margins."""
    entries = mappings(value)
    if not entries or not all("factor" in e and "level" in e for e in entries):
        return _fallback(key, value, view)
    margins = {
        (str(e.get("model")), str(e.get("track")), str(e["factor"]), str(e["level"])): e
        for e in entries
    }
    cells: dict[tuple[str, str], dict[tuple[str, str], list[float]]] = {}
    for a in answers_from_rows(view.rows()):
        cells.setdefault((a.model, a.track), {}).setdefault((a.nation, a.task), []).append(
            a.correct
        )
    systems = sorted(cells, key=lambda s: (s[0], track_order(s[1])))
    blocks = [_grid(model, track, cells[model, track], margins) for model, track in systems]
    return (
        "<h3>Accuracy by nation × task</h3>"
        '<p class="legend">Per model and track (click to open). Cells: correct / asked; '
        "margins: accuracy with its CI.</p>" + "".join(blocks)
    )


def _grid(
    model: str,
    track: str,
    cells: Mapping[tuple[str, str], list[float]],
    margins: Mapping[tuple[str, str, str, str], Mapping[str, Any]],
) -> str:
    nations = sorted({n for n, _ in cells})
    tasks = sorted({t for _, t in cells})

    def margin(factor: str, level: str) -> str:
        e = margins.get((model, track, factor, level))
        if e is None:
            return '<td class="ns">—</td>'
        return f'<td class="num"><b>{pct(e.get("accuracy"))}</b> {pct_ci(e)}</td>'

    head = "".join(f"<th>{esc(t)}</th>" for t in tasks)
    body = []
    for nation in nations:
        tds = []
        for task in tasks:
            got = cells.get((nation, task))
            text = f"{int(sum(got))} / {len(got)}" if got else "—"
            tds.append(f'<td class="num">{text}</td>')
        body.append(f"<tr><th>{esc(nation)}</th>{''.join(tds)}{margin('nation', nation)}</tr>")
    task_margins = "".join(margin("task", t) for t in tasks)
    body.append(f"<tr><th>all nations</th>{task_margins}<td></td></tr>")
    return (
        f"<details><summary>{esc(model)} · track {esc(track)}</summary>"
        f'<table class="exam-grid"><thead><tr><th>nation \\ task</th>{head}'
        f"<th>all tasks</th></tr></thead><tbody>{''.join(body)}</tbody></table></details>"
    )


from pytest_doceval.kinds.exam.html_factors import FACTOR_RENDERERS  # noqa: E402

EXAM_RENDERERS = {
    "accuracy": accuracy,
    "deltas": deltas,
    "pairwise": pairwise,
    "breakdowns": breakdowns,
    **FACTOR_RENDERERS,
}
