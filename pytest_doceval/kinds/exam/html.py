"""Renderers for the exam kind's analyses (seed 001): the accuracy table (model x track, with
CIs, the random line and the human pass marks), the delta table with the seed's reading of each
delta and a plot of the deltas with their CIs, and accuracy by nation x task.

Each is an `AnalysisRenderer` ``(key, value, view) -> html`` for ``ANALYSES`` in
`pytest_doceval.html.analysis`; a value of an unexpected shape falls back to the generic
renderer. Accuracies are shown as percentages, as the seed writes them; the HTML is built from
``markupsafe.Markup`` templates, so every string from the report is escaped once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.fmt import (
    NA,
    as_text,
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
from pytest_doceval.html.plots import axis, axis_line, ci_row, grid_line
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


def _fallback(key: str, value: Any, view: SuiteView) -> Markup:
    # Imported here: analyses.py imports this module to register its renderers.
    from pytest_doceval.html.analysis import generic

    return generic(key, value, view)


def _tracks(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted(unique(str(e.get("track")) for e in entries), key=track_order)


def accuracy(key: str, value: Any, view: SuiteView) -> Markup:
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
                tds.append(Markup('<td class="ns">—</td>'))
                continue
            failures = int(num(e.get("parse_failures")) or 0)
            tip = (
                f"{model} on {track}: {pct(e.get('accuracy'))} {pct_ci(e)}, "
                f"n={fmt_int(e.get('n'))}, {failures} parse failure(s), "
                f"chance {pct(e.get('chance'))}"
            )
            tds.append(
                Markup(
                    '<td class="num cell" title="{tip}"><span class="mean">{accuracy}</span> '
                    '<span class="ci">{ci}</span> <span class="n">n={n}{unparsed}</span></td>'
                ).format(
                    tip=tip,
                    accuracy=pct(e.get("accuracy")),
                    ci=pct_ci(e),
                    n=fmt_int(e.get("n")),
                    unparsed=f", {failures} unparsed" if failures else "",
                )
            )
        rows.append(Markup("<tr><td>{}</td>{}</tr>").format(model, Markup().join(tds)))
    references = mapping(view.data.get("references"))
    chance = mapping(references.get("random_by_track"))
    chance_cell = Markup('<td class="num ns">{}</td>')
    chance_cells = Markup().join(chance_cell.format(pct(chance.get(t))) for t in tracks)
    rows.append(
        Markup('<tr><td class="ns">random baseline (1/choices)</td>{}</tr>').format(chance_cells)
    )
    marks = mapping(references.get("human_pass_marks"))
    marks_html = Markup()
    if marks:
        listed = ", ".join(f"{nation} {pct(mark)}" for nation, mark in marks.items())
        marks_html = Markup(
            '<p class="legend">Human pass marks (reference only, not comparable item by '
            "item): {}.</p>"
        ).format(listed)
    head = Markup().join(Markup("<th>track {}</th>").format(t) for t in tracks)
    return Markup(
        "<h3>Accuracy by model and track ({:.0%} CI over questions)</h3>"
        '<table class="exam-accuracy"><thead><tr><th>model</th>{}</tr></thead>'
        "<tbody>{}</tbody></table>{}"
    ).format(view.confidence, head, Markup().join(rows), marks_html)


def deltas(key: str, value: Any, view: SuiteView) -> Markup:
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
            Markup('<td class="sig">supported</td>')
            if supported
            else Markup('<td class="ns">{}</td>').format(untestable or "not supported")
        )
        rows.append(
            Markup(
                '<tr><td>{model}</td><td>Δ({delta})</td><td class="num">{n}</td>'
                '<td class="num">{first} − {second}</td>'
                '<td class="num"><b>{value}</b></td><td class="num">{ci}</td>'
                '<td class="num">{only_first} / {only_second}</td>'
                '<td class="num">{p}</td><td class="num">{mde}</td>{verdict}'
                "<td>{interpretation}</td></tr>"
            ).format(
                model=as_text(e.get("model")),
                delta=as_text(e.get("delta")),
                n=fmt_int(e.get("n")),
                first=pct(e.get("accuracy_first")),
                second=pct(e.get("accuracy_second")),
                value=pct(e.get("value"), signed=True),
                ci=pct_ci(e, signed=True),
                only_first=fmt_int(e.get("only_first")),
                only_second=fmt_int(e.get("only_second")),
                p=fmt_p(e.get("p_mcnemar")),
                mde=fmt_pp(e.get("mde")),
                verdict=verdict,
                interpretation=as_text(e.get("interpretation")),
            )
        )
    alpha = 1 - view.confidence
    return Markup(
        "<h3>Track deltas (seed 001, 4.4: paired over the questions both tracks asked)</h3>"
        '<table class="exam-deltas"><thead><tr><th>model</th><th>delta</th><th>n</th>'
        "<th>accuracies</th><th>Δ</th><th>CI</th><th>only first / only second</th>"
        "<th>p (McNemar)</th><th title=\"the accuracy change McNemar's exact test detects with "
        '80% power here">MDE</th><th>reading (Δ&gt;0, p&lt;{:.2g})</th>'
        "<th>interpretation</th></tr></thead><tbody>{}</tbody></table>{}"
    ).format(alpha, Markup().join(rows), delta_plot(entries, view.confidence))


def pairwise(key: str, value: Any, view: SuiteView) -> Markup:
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
            Markup(
                '<tr><td>{track}</td><td>{a}</td><td>{b}</td><td class="num">{n}</td>'
                '<td class="num">{accuracy_a} − {accuracy_b}</td>'
                '<td class="num"><b>{diff}</b></td><td class="num">{ci}</td>'
                '<td class="num">{only_a} / {only_b}</td><td class="num">{p}</td>'
                '<td class="num">{p_b}</td><td class="num">{d}</td><td class="num">{mde}</td>'
                "{verdict}</tr>"
            ).format(
                track=as_text(e.get("track")),
                a=as_text(e.get("a")),
                b=as_text(e.get("b")),
                n=fmt_int(e.get("n")),
                accuracy_a=pct(e.get("accuracy_a")),
                accuracy_b=pct(e.get("accuracy_b")),
                diff=pct(e.get("diff"), signed=True),
                ci=pct_ci(e, signed=True),
                only_a=fmt_int(e.get("only_a")),
                only_b=fmt_int(e.get("only_b")),
                p=fmt_p(e.get("p_mcnemar")),
                p_b=fmt_p(e.get("p_bonferroni")),
                d=fmt(e.get("cohens_d"), 2),
                mde=fmt_pp(e.get("mde")),
                verdict=_pair_verdict(e),
            )
        )
    alpha = 1 - view.confidence
    return Markup(
        "<h3>Pairwise model comparisons per track (paired over shared questions: A − B)</h3>"
        '<table class="exam-pairwise"><thead><tr><th>track</th><th>A</th><th>B</th>'
        "<th>n</th><th>accuracies</th><th>Δ</th>"
        "<th>{:.0%} CI</th><th>only A / only B correct</th>"
        "<th>p (McNemar)</th><th>p (Bonferroni)</th><th>Cohen's d</th>"
        '<th title="the accuracy change McNemar\'s exact test detects with 80% power here">'
        "MDE</th><th>verdict (α={:.2g})</th></tr></thead>"
        "<tbody>{}</tbody></table>"
    ).format(view.confidence, alpha, Markup().join(rows))


def _pair_verdict(entry: Mapping[str, Any]) -> Markup:
    untestable = not_testable(entry.get("n"))
    if untestable:
        return Markup('<td class="ns">{}</td>').format(untestable)
    diff = num(entry.get("diff"))
    if entry.get("significant") is not True or not diff:
        return Markup('<td class="ns">no significant difference</td>')
    winner = entry.get("a") if diff > 0 else entry.get("b")
    return Markup('<td class="sig"><b>{}</b> better</td>').format(as_text(winner))


def delta_plot(entries: Sequence[Mapping[str, Any]], confidence: float) -> Markup:
    """Each delta as a dot with its CI whisker, on one axis with zero marked."""
    points = [
        (f"{e.get('model')} {e.get('delta')}", num(e.get("value")), *_ci(e))
        for e in entries
        if num(e.get("value")) is not None
    ]
    if not points:
        return Markup()
    values = [0.0] + [v for p in points for v in p[1:] if v is not None]
    lo, hi, ticks, decimals = axis(values)
    left, width, row_h, top = 150, 260, 22, 26
    axis_y = top + row_h * len(points)
    scale = width / (hi - lo)

    def x(v: float) -> float:
        return round(left + (v - lo) * scale, 1)

    out = [
        Markup(
            '<svg class="plot" width="{}" height="{}" role="img" '
            'aria-label="track deltas with confidence intervals">'
            '<text class="ptitle" x="4" y="15">Δ accuracy ({:.0%} CI)</text>'
        ).format(left + width + 24, axis_y + 26, confidence)
    ]
    out.extend(grid_line(x(t), top, axis_y, f"{t * 100:.{max(decimals - 2, 0)}f}%") for t in ticks)
    out.append(
        Markup('<line class="axis" x1="{}" x2="{}" y1="{}" y2="{}"/>').format(
            x(0), x(0), top - 4, axis_y
        )
    )
    for row, (label, mean, low, high) in enumerate(points):
        y = top + row_h * row + row_h / 2
        tip = f"{label}: {pct(mean, True)} [{pct(low, True)}, {pct(high, True)}]"
        out.append(ci_row(x, y, left, label=label, tip=tip, mean=mean, ci=(low, high)))
    out.append(axis_line(left, left + width, axis_y) + Markup("</svg>"))
    return Markup('<div class="plots">{}</div>').format(Markup().join(out))


def _ci(entry: Mapping[str, Any]) -> tuple[float | None, float | None]:
    return num(entry.get("ci_low")), num(entry.get("ci_high"))


def breakdowns(key: str, value: Any, view: SuiteView) -> Markup:
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
    return Markup(
        "<h3>Accuracy by nation × task</h3>"
        '<p class="legend">Per model and track (click to open). Cells: correct / asked; '
        "margins: accuracy with its CI.</p>"
    ) + Markup().join(blocks)


def _grid(
    model: str,
    track: str,
    cells: Mapping[tuple[str, str], list[float]],
    margins: Mapping[tuple[str, str, str, str], Mapping[str, Any]],
) -> Markup:
    nations = sorted({n for n, _ in cells})
    tasks = sorted({t for _, t in cells})

    def margin(factor: str, level: str) -> Markup:
        e = margins.get((model, track, factor, level))
        if e is None:
            return Markup('<td class="ns">—</td>')
        return Markup('<td class="num"><b>{}</b> {}</td>').format(pct(e.get("accuracy")), pct_ci(e))

    head = Markup().join(Markup("<th>{}</th>").format(t) for t in tasks)
    number = Markup('<td class="num">{}</td>')
    body = []
    for nation in nations:
        tds = []
        for task in tasks:
            got = cells.get((nation, task))
            tds.append(number.format(f"{int(sum(got))} / {len(got)}" if got else "—"))
        body.append(
            Markup("<tr><th>{}</th>{}{}</tr>").format(
                nation, Markup().join(tds), margin("nation", nation)
            )
        )
    task_margins = Markup().join(margin("task", t) for t in tasks)
    body.append(Markup("<tr><th>all nations</th>{}<td></td></tr>").format(task_margins))
    return Markup(
        "<details><summary>{} · track {}</summary>"
        '<table class="exam-grid"><thead><tr><th>nation \\ task</th>{}'
        "<th>all tasks</th></tr></thead><tbody>{}</tbody></table></details>"
    ).format(model, track, head, Markup().join(body))


from pytest_doceval.kinds.exam.html_factors import FACTOR_RENDERERS  # noqa: E402

EXAM_RENDERERS = {
    "accuracy": accuracy,
    "deltas": deltas,
    "pairwise": pairwise,
    "breakdowns": breakdowns,
    **FACTOR_RENDERERS,
}
