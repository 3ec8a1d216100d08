"""One suite's section, in the order a reviewer reads it: what it is and how its tests came
out, what changed (the tests that failed, then the baseline deltas), the gates, the summary
with its legend, plots (means, then distributions), baseline bookkeeping, the per-case table,
and, folded below it, the kind's analyses."""

from __future__ import annotations

from markupsafe import Markup

from pytest_doceval.html.codec import Blobs
from pytest_doceval.html.distributions import distributions
from pytest_doceval.html.fmt import as_text, mapping, strings
from pytest_doceval.html.model import SuiteView, outcome_counts
from pytest_doceval.html.plots import plots
from pytest_doceval.metrics.cost import cost_columns
from pytest_doceval.report.html.analyses import analyses
from pytest_doceval.report.html.cases import cases_block
from pytest_doceval.report.html.changes import what_changed
from pytest_doceval.report.html.frame import facts_line, gate_badge, outcome_badges
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


def suite_section(view: SuiteView, blobs: Blobs) -> Markup:
    return Markup().join(
        [
            Markup('<section class="suite" id="suite-{}">').format(view.index),
            suite_header(view),
            what_changed(view),
            gate_table(view),
            summary_table(view),
            cost_table(view),
            plots(view),
            distributions(view, cost_columns(mapping(view.data.get("aggregates")))),
            baseline_lists(view),
            cases_block(view, blobs),
            folded_analyses(view),
            Markup("</section>"),
        ]
    )


def folded_analyses(view: SuiteView) -> Markup:
    """The kind's analyses below the cases, folded: a reviewer first needs what failed and
    what moved; comparisons of every system pair, ANOVAs and breakdowns are for the paper."""
    body = analyses(view)
    if not body:
        return Markup()
    keys = [k for k in strings(view.data.get("analysis_keys")) if k in view.data]
    return Markup('<details class="analyses"><summary>Analyses: {}</summary>{}</details>').format(
        ", ".join(k.replace("_", " ") for k in keys), body
    )


def suite_header(view: SuiteView) -> Markup:
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
    notes = Markup().join(Markup("<li>{}</li>").format(n) for n in strings(data.get("notes")))
    error = data.get("error")
    error_html = (
        Markup('<p class="suite-error"><b>Suite error:</b> {}</p>').format(as_text(error))
        if error
        else Markup()
    )
    return (
        Markup('<h2>{}</h2><p class="facts">{}</p><p>{}{}</p>').format(
            view.name, facts_line(facts), outcome_badges(outcome_counts(data)), gate_badge(data)
        )
        + error_html
        + (Markup('<ul class="notes">{}</ul>').format(notes) if notes else Markup())
    )
