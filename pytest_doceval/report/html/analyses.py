"""Renderers for a suite's kind analyses: the keys ``section["analysis_keys"]`` names.

`SHARED` renders the analyses any kind may list; a kind draws its own through
``Suite.html_analyses`` (see `kinds`). A key without a renderer still shows, generically: a
list of flat dicts (or a dict of them, or a flat dict) as a table, anything else as JSON in a
``<pre>``; every string escaped either way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.analysis import AnalysisRenderer, as_markup, generic
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
    num,
    strings,
)
from pytest_doceval.html.model import SuiteView, judge, not_testable
from pytest_doceval.report.html.kinds import kind_html
from pytest_doceval.report.html.summary import flag_mark
from pytest_doceval.rows import FLAG_MARK

# (analysis key, its value in the section, the suite) -> HTML


def _verdict(c: Mapping[str, Any], direction: str | None, alpha: float) -> Markup:
    """Which system is better, if the difference is significant: Bonferroni p below alpha
    when there is one, else a CI that excludes zero."""
    untestable = not_testable(c.get("n"))
    if untestable:
        return Markup('<td class="ns">{}</td>').format(untestable)
    p = num(c.get("p_bonferroni"))
    low, high = num(c.get("ci_low")), num(c.get("ci_high"))
    if p is not None:
        significant = p < alpha
    else:
        significant = low is not None and high is not None and (low > 0 or high < 0)
    judged = judge(num(c.get("mean_diff")), direction)
    if not significant or judged not in ("better", "worse"):
        return Markup('<td class="ns">no significant difference</td>')
    winner = c.get("a") if judged == "better" else c.get("b")
    return Markup('<td class="sig"><b>{}</b> better</td>').format(as_text(winner))


def comparisons(key: str, value: Any, view: SuiteView) -> Markup:
    """Every pair of systems on every headline metric (paired over the cases both measured)."""
    entries = mappings(value)
    if not entries:
        return Markup()
    alpha = 1 - view.confidence
    has_mcnemar = any(c.get("p_mcnemar") is not None for c in entries)
    rows = []
    for c in entries:
        metric = str(c.get("metric"))
        mcnemar = (
            Markup('<td class="num">{}</td>').format(fmt_p(c.get("p_mcnemar")))
            if has_mcnemar
            else Markup()
        )
        flagged = mapping(c.get("flagged"))
        a, b = (
            Markup("{}{}").format(
                as_text(c.get(side)), flag_mark({"flagged": flagged.get(str(c.get(side)))})
            )
            for side in ("a", "b")
        )
        rows.append(
            Markup(
                '<tr><td>{metric}</td><td>{a}</td><td>{b}</td><td class="num">{n}</td>'
                '<td class="num">{diff}</td><td class="num">{ci}</td><td class="num">{p_t}</td>'
                '<td class="num">{p_w}</td><td class="num">{p_b}</td>{mcnemar}'
                '<td class="num">{d}</td><td class="num">{mde}</td>{verdict}</tr>'
            ).format(
                metric=metric,
                a=a,
                b=b,
                n=fmt_int(c.get("n")),
                diff=fmt_signed(c.get("mean_diff")),
                ci=fmt_ci(c),
                p_t=fmt_p(c.get("p_ttest")),
                p_w=fmt_p(c.get("p_wilcoxon")),
                p_b=fmt_p(c.get("p_bonferroni")),
                mcnemar=mcnemar,
                d=fmt(c.get("cohens_d"), 2),
                mde=fmt_pp(c.get("mde")),
                verdict=_verdict(c, view.direction(metric), alpha),
            )
        )
    mcnemar_head = Markup("<th>p (McNemar)</th>") if has_mcnemar else Markup()
    legend = (
        Markup(
            '<p class="flag-legend">{} the kind flagged some of that system\'s cases on '
            "this metric: its value may mislead (the reasons are in the mark's tooltip).</p>"
        ).format(FLAG_MARK)
        if any(c.get("flagged") for c in entries)
        else Markup()
    )
    return Markup(
        "<h3>Pairwise comparisons (paired: A \u2212 B)</h3>"
        '<table class="comparisons"><thead><tr><th>metric</th><th>A</th><th>B</th><th>n</th>'
        "<th>Δ mean</th><th>CI</th><th>p (t)</th><th>p (Wilcoxon)</th><th>p (Bonferroni)</th>"
        "{}<th>Cohen's d</th>"
        '<th title="minimum detectable effect: the difference this comparison detects with '
        '80% power for its n and spread (two-sided, before Bonferroni)">MDE</th>'
        "<th>verdict (\u03b1={:.2g})</th></tr></thead>"
        "<tbody>{}</tbody></table>{}"
    ).format(mcnemar_head, alpha, Markup().join(rows), legend)


# Analyses any kind may list (kinds.analyses), beside each kind's own (Suite.html_analyses).
SHARED: dict[str, AnalysisRenderer] = {"comparisons": comparisons}


def analyses(view: SuiteView) -> Markup:
    """The suite's analyses in the order the kind lists them."""
    renderers = {**SHARED, **kind_html(view.data.get("kind")).analyses}
    out = []
    for key in strings(view.data.get("analysis_keys")):
        if key in view.data and view.data[key] not in (None, [], {}):
            renderer = renderers.get(key, generic)
            out.append(as_markup(renderer(key, view.data[key], view)))
    return Markup().join(out)
