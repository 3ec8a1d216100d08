"""One suite's section, in the order a reviewer reads it: what it is and how its tests came
out, what changed (the tests that failed, then the baseline deltas), the gates, the summary
with its legend, plots, baseline bookkeeping, the per-case table, and, folded below it, the
kind's analyses."""

from __future__ import annotations

from pytest_doceval.html.codec import Blobs
from pytest_doceval.html.fmt import esc, strings
from pytest_doceval.html.model import SuiteView, outcome_counts
from pytest_doceval.html.plots import plots
from pytest_doceval.report.html.analyses import analyses
from pytest_doceval.report.html.cases import cases_block
from pytest_doceval.report.html.changes import what_changed
from pytest_doceval.report.html.frame import gate_badge, outcome_badges
from pytest_doceval.report.html.summary import baseline_lists, cost_table, gate_table, summary_table

# Section keys that are not facts about the suite: shown elsewhere, or too big for its header.
_NOT_FACTS = {
    "kind",
    "path",
    "systems",
    "notes",
    "gate_rules",
    "metrics",
    "analysis_keys",
    "outcomes",
    "results",
    "aggregates",
    "baseline_deltas",
    "gates",
    "unused_baseline",
    "baseline_changes",
    "error",
}


def suite_section(view: SuiteView, blobs: Blobs) -> str:
    return "".join(
        [
            f'<section class="suite" id="suite-{view.index}">',
            suite_header(view),
            what_changed(view),
            gate_table(view),
            summary_table(view),
            cost_table(view),
            plots(view),
            baseline_lists(view),
            cases_block(view, blobs),
            folded_analyses(view),
            "</section>",
        ]
    )


def folded_analyses(view: SuiteView) -> str:
    """The kind's analyses below the cases, folded: a reviewer first needs what failed and
    what moved; comparisons of every system pair, ANOVAs and breakdowns are for the paper."""
    body = analyses(view)
    if not body:
        return ""
    keys = [k for k in strings(view.data.get("analysis_keys")) if k in view.data]
    return (
        '<details class="analyses"><summary>Analyses: '
        f"{esc(', '.join(k.replace('_', ' ') for k in keys))}</summary>{body}</details>"
    )


def suite_header(view: SuiteView) -> str:
    """Name, kind, path, systems and the kind's own scalar facts (``describe()``: language,
    normalization, scoring id, ...), outcome badges, a suite error and the notes."""
    data = view.data
    analysis = set(strings(data.get("analysis_keys")))
    facts = [("kind", data.get("kind")), ("path", data.get("path"))]
    facts += [
        (str(k), v)
        for k, v in data.items()
        if k not in _NOT_FACTS
        and k not in analysis
        and isinstance(v, str | int | float)
        and not isinstance(v, bool)
    ]
    facts.append(("systems", ", ".join(strings(data.get("systems"))) or None))
    shown = "".join(
        f"<span><b>{esc(k)}</b> {esc(v)}</span>" for k, v in facts if v not in (None, "")
    )
    notes = "".join(f"<li>{esc(n)}</li>" for n in strings(data.get("notes")))
    error = data.get("error")
    error_html = f'<p class="suite-error"><b>Suite error:</b> {esc(error)}</p>' if error else ""
    return (
        f"<h2>{esc(view.name)}</h2>"
        f'<p class="facts">{shown}</p>'
        f"<p>{outcome_badges(outcome_counts(data))}{gate_badge(data)}</p>"
        + error_html
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
    )
