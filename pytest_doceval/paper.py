"""Paper tables' building blocks, below the kinds (as `pytest_doceval.html` is for pages): a
`PaperTable` (title, columns, rows of `Cell`, notes), the number formats, and its two
renderings, booktabs LaTeX and GitHub-flavoured Markdown. Which tables a suite gets is its
kind's business: a kind lists builders in ``Suite.paper_tables`` (section -> tables);
`pytest_doceval.report.paper` finds them through the kind registry for ``doceval report``.

Intervals. Seeds 000 and 001 report "Mean ± 95% CI" with the 95% percentile bootstrap over
cases (1,000 resamples). A table printing a mean over cases prints that interval
(`seed_interval`: `stats.mean_interval` with ``method="percentile-bootstrap"``, the run's
resamples, confidence and seed, which `report.paper.report_tables` passes in the section), and
says so in a note (`interval_note`); the JSON report and its summaries keep each metric's own
interval (Wilson for 0/1, bootstrap-t or t otherwise), so a table's interval may differ from the
summary's.

Flags. A row may carry ``"flags": {metric: [reason, ...]}`` (a value to read with care). A
cell built from such a metric gets a dagger, and the table a note saying why
(`flag_reasons` collects them; builders pass them to `Cell` and `PaperTable.notes`).

Fitting a page. Every LaTeX table fits the text width of a plain ``article`` (345 pt at 10 pt):
a value with its interval or count (``0.143 [0.122, 0.164]``, ``0.800 (4/5)``) is printed with
the interval under it, smaller; a text column a table marks ``p`` in its alignment wraps at a
fixed width; and a table still wider, by an estimate of its cells' widths from their characters
(generous, so that what is estimated to fit does), is printed as several tables, each with the
first column, split where the table allows (`PaperTable.breaks`), the notes under the last.
Markdown keeps one table: a page scrolls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_doceval.config import StatsConfig
from pytest_doceval.errors import DocevalError
from pytest_doceval.rows import flag_reasons as rows_flag_reasons

DAGGER = "†"
FORMATS = ("latex", "markdown")


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, and whether a flag behind it earns a dagger."""

    text: str
    flagged: bool = False


@dataclass
class PaperTable:
    """A table as a paper prints it; the first column is left-aligned, the rest are numbers."""

    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    label: str = ""
    # One of l/r/p per column (p: text that wraps); default: the first left, the rest right.
    align: str = ""
    # Columns before which a LaTeX table too wide for the page may be cut (default: any).
    breaks: tuple[int, ...] = ()

    def alignment(self) -> str:
        return self.align or "l" + "r" * (len(self.columns) - 1)


TableBuilder = Callable[[Mapping[str, Any]], list[PaperTable]]


# -- numbers ----------------------------------------------------------------------------------


def number(value: Any, digits: int = 3) -> str:
    """A plain number, or n/a for a missing or NaN value (a CI of one case has none)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "n/a"
    return f"{value:.{digits}f}"


def with_ci(
    entry: Mapping[str, Any] | None,
    digits: int = 3,
    *,
    key: str = "mean",
    bounds: tuple[str, str] = ("ci_low", "ci_high"),
) -> str:
    """``0.133 [0.102, 0.164]``: ``entry[key]`` with the interval ``entry[bounds[0]]``,
    ``entry[bounds[1]]``; n/a when absent."""
    if not entry or entry.get(key) is None:
        return "n/a"
    low, high = entry.get(bounds[0]), entry.get(bounds[1])
    interval = (
        "" if low is None or high is None else f" [{number(low, digits)}, {number(high, digits)}]"
    )
    return number(entry[key], digits) + interval


def paper_stats(section: Mapping[str, Any]) -> StatsConfig:
    """The run's bootstrap settings, as `report_tables` puts them in a section."""
    return StatsConfig(
        resamples=int(section.get("bootstrap_resamples", 1000)),
        confidence=float(section.get("confidence", 0.95)),
        seed=int(section.get("seed", 0)),
    )


def seed_interval(values: Sequence[float], section: Mapping[str, Any], digits: int = 3) -> str:
    """``0.133 [0.102, 0.164]``: the mean of per-case values with the seeds' interval, the
    percentile bootstrap over cases (module docstring); n/a with no values."""
    if not values:
        return "n/a"
    from pytest_doceval.stats.interval import PERCENTILE_BOOTSTRAP  # on use: numpy is heavy
    from pytest_doceval.stats.intervals import mean_interval

    c = paper_stats(section)
    interval = mean_interval(
        values,
        method=PERCENTILE_BOOTSTRAP,
        resamples=c.resamples,
        confidence=c.confidence,
        seed=c.seed,
    )
    entry = {"mean": interval.mean, "ci_low": interval.ci_low, "ci_high": interval.ci_high}
    return with_ci(entry, digits)


def interval_note(section: Mapping[str, Any], over: str) -> str:
    """The note naming a table's interval: the percentile bootstrap over `over`."""
    c = paper_stats(section)
    return (
        f"{c.confidence:.0%} CI: percentile bootstrap over {over}, {c.resamples:,} resamples, "
        f"seed {c.seed} (the interval of seeds 000 and 001); the JSON report keeps each "
        "metric's own interval."
    )


def percent(value: Any, digits: int = 1) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "n/a"
    return f"{value * 100:.{digits}f}%"


def points(value: Any, digits: int = 1) -> str:
    """A difference of two rates in percentage points, signed: ``+2.2pp``."""
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "n/a"
    return f"{value * 100:+.{digits}f}pp"


def flag_reasons(
    rows: Iterable[Mapping[str, Any]], metric: str, system: str | None = None
) -> list[str]:
    """The distinct reasons measured rows (of `system`, if given) give for flagging `metric`
    (`rows.flag_reasons`, the one reading of a row's flags, without the counts)."""
    by_system = rows_flag_reasons(rows, metric, None if system is None else [system])
    return list(dict.fromkeys(r for reasons in by_system.values() for r in reasons))


def flag_note(flagged: Mapping[str, Sequence[str]]) -> list[str]:
    """One note per flagged metric: ``† chunk_score: reason; reason``."""
    return [
        f"{DAGGER} {metric}: {'; '.join(reasons)}" for metric, reasons in flagged.items() if reasons
    ]


# -- rendering --------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$",
    "±": r"$\pm$",
    "η": r"$\eta$",
    "Σ": r"$\Sigma$",
    "²": r"$^2$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "−": "--",
    "–": "--",
    "×": r"$\times$",
    DAGGER: r"$^\dagger$",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))


def latex_escape(text: str) -> str:
    """Text safe in a LaTeX table (specials escaped, the few symbols tables use as math)."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], text)


def markdown_escape(text: str) -> str:
    """Text safe in a Markdown table cell: a pipe would end the cell, markup would render."""
    return re.sub(r"([\\|*_`<])", r"\\\1", text).replace("\n", " ")


def _cell_text(cell: Cell, escape: Callable[[str], str]) -> str:
    return escape(cell.text + (DAGGER if cell.flagged else ""))


# -- fitting a page (module docstring) ----------------------------------------------------------

TEXT_WIDTH_PT = 345.0  # a plain article's \textwidth at 10 pt
PARAGRAPH_PT = 100.0  # the width of a wrapping text column ("p")
_COLUMN_GAP_PT = 12.0  # \tabcolsep on each side of a column
_SMALL = 0.85  # \footnotesize (cmr8) against the normal size (cmr10)
# A value and what goes under it: its interval or its count.
_STACKED = re.compile(r"^(\S+) ([\[(][^\[\]()]*[\])])$")


def _text_pt(text: str) -> float:
    """A generous estimate of `text`'s width in Computer Modern at 10 pt."""
    width = 0.0
    for ch in text:
        if ch.isdigit():
            width += 5.0
        elif ch in " .,:;'|!()[]ijlft":
            width += 3.4
        elif ch in "mwMW":
            width += 8.4
        elif ch.isupper() or not ch.isascii():
            width += 7.6
        else:
            width += 5.1
    return width


def _stacked(cell: Cell, how: str) -> tuple[str, str] | None:
    """A number column's ``value [low, high]`` or ``value (k/n)`` as (value, under it)."""
    found = _STACKED.match(cell.text) if how == "r" else None
    return None if found is None else (found.group(1), found.group(2))


def _cell_pt(cell: Cell, how: str) -> float:
    if how == "p":
        return PARAGRAPH_PT
    stacked = _stacked(cell, how)
    flag = _text_pt(DAGGER) if cell.flagged else 0.0
    if stacked is None:
        return _text_pt(cell.text) + flag
    return max(_text_pt(stacked[0]) + flag, _SMALL * _text_pt(stacked[1]))


def _latex_cell(cell: Cell, how: str) -> str:
    stacked = _stacked(cell, how)
    if stacked is not None:
        value = latex_escape(stacked[0] + (DAGGER if cell.flagged else ""))
        under = latex_escape(stacked[1])
        return (
            rf"\begin{{tabular}}[t]{{@{{}}r@{{}}}}{value}\\{{\footnotesize {under}}}\end{{tabular}}"
        )
    text = _cell_text(cell, latex_escape)
    if how == "p":
        return rf"\parbox[t]{{{PARAGRAPH_PT:g}pt}}{{\raggedright {text}}}"
    return text


def _column_pts(table: PaperTable) -> list[float]:
    align = table.alignment()
    widths = []
    for i, name in enumerate(table.columns):
        cells = [_cell_pt(row[i], align[i]) for row in table.rows if i < len(row)]
        widths.append(max([_text_pt(name), *cells]) + _COLUMN_GAP_PT)
    return widths


def _parts(table: PaperTable) -> list[list[int]]:
    """The columns of each LaTeX table `table` is printed as (the first column in each): one
    part while it fits the text width, else cut at its `breaks` (at any column where a part
    between two breaks is too wide alone)."""
    widths = _column_pts(table)
    first, rest = widths[0], range(1, len(widths))
    if sum(widths) <= TEXT_WIDTH_PT or not rest:
        return [list(range(len(widths)))]
    cuts = set(table.breaks) or set(rest)
    segments: list[list[int]] = []
    for i in rest:
        if not segments or i in cuts:
            segments.append([])
        segments[-1].append(i)
    parts: list[list[int]] = []
    used = TEXT_WIDTH_PT  # a new part before the first segment
    for segment in segments:
        pieces = (
            [segment]
            if first + sum(widths[i] for i in segment) <= TEXT_WIDTH_PT
            else [[i] for i in segment]
        )
        for piece in pieces:
            size = sum(widths[i] for i in piece)
            if used + size > TEXT_WIDTH_PT:
                parts.append([0])
                used = first
            parts[-1] += piece
            used += size
    return parts


def to_latex(table: PaperTable) -> str:
    """A ``table`` float with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``), or
    several when one would not fit the page (module docstring)."""
    parts = _parts(table)
    align = table.alignment()
    out = []
    for number_, columns in enumerate(parts):
        title = table.title + (" (continued)" if number_ else "")
        lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(title)}}}"]
        if table.label and not number_:
            lines.append(rf"\label{{{table.label}}}")
        spec = "".join("l" if align[i] == "p" else align[i] for i in columns)
        lines += [
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(latex_escape(table.columns[i]) for i in columns) + r" \\",
            r"\midrule",
        ]
        lines += [
            " & ".join(_latex_cell(row[i], align[i]) for i in columns) + r" \\"
            for row in table.rows
        ]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if table.notes and number_ == len(parts) - 1:
            notes = r"\\ ".join(latex_escape(n) for n in table.notes)
            lines += [r"\par\smallskip", rf"{{\footnotesize\raggedright {notes}\par}}"]
        lines.append(r"\end{table}")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def to_markdown(table: PaperTable) -> str:
    """A titled GitHub-flavoured Markdown table, its notes below it."""
    head = "| " + " | ".join(markdown_escape(c) for c in table.columns) + " |"
    rule = "|" + "|".join("---:" if a == "r" else ":---" for a in table.alignment()) + "|"
    body = [
        "| " + " | ".join(_cell_text(c, markdown_escape) for c in row) + " |" for row in table.rows
    ]
    notes = [f"{markdown_escape(n)}  " for n in table.notes]
    return "\n".join([f"**{markdown_escape(table.title)}**", "", head, rule, *body, "", *notes])


def render(tables: Sequence[PaperTable], fmt: str) -> str:
    if fmt not in FORMATS:
        raise DocevalError(f"paper table format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt == "latex":
        head = "% doceval paper tables: \\usepackage{booktabs} in the preamble\n\n"
        return head + "\n\n".join(to_latex(t) for t in tables) + "\n"
    return "\n\n".join(to_markdown(t) for t in tables).rstrip() + "\n"
