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
    align: str = ""  # one of l/r per column; default: the first left, the rest right

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


def to_latex(table: PaperTable) -> str:
    """A ``table`` float with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``)."""
    spec = table.alignment()
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_escape(table.title)}}}",
    ]
    if table.label:
        lines.append(rf"\label{{{table.label}}}")
    lines += [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in table.columns) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(_cell_text(c, latex_escape) for c in row) + r" \\" for row in table.rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.notes:
        notes = r"\\ ".join(latex_escape(n) for n in table.notes)
        lines += [r"\par\smallskip", rf"{{\footnotesize\raggedright {notes}\par}}"]
    lines.append(r"\end{table}")
    return "\n".join(lines)


def to_markdown(table: PaperTable) -> str:
    """A titled GitHub-flavoured Markdown table, its notes below it."""
    head = "| " + " | ".join(markdown_escape(c) for c in table.columns) + " |"
    rule = "|" + "|".join(":---" if a == "l" else "---:" for a in table.alignment()) + "|"
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
