"""'What changed': the block that leads each suite. The metrics whose baseline delta is
significant, worse first, with mean difference, CI and p-values; everything else folded into
one line; the full table of deltas kept, collapsed, for whoever wants every number."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.fmt import as_text, fmt, fmt_ci, fmt_int, fmt_p, fmt_signed, num
from pytest_doceval.html.model import (
    FAILING,
    Change,
    SuiteView,
    case_anchor,
    changes,
    not_testable,
)
from pytest_doceval.rows import outcome_count

# Worse first: a reviewer's first question is "what did this change break".
_ORDER = {"worse": 0, "better": 1, "changed": 2}


def _arrow(delta: Mapping[str, Any]) -> str:
    """Which way the mean moved (up or down); the verdict beside it says if that is good."""
    diff = num(delta.get("mean_diff"))
    return "" if diff is None else "▲" if diff > 0 else "▼"


def _row(delta: Mapping[str, Any], reading: Change, verdict_cell: Markup) -> Markup:
    css = f"{reading.verdict} {'sig' if reading.significant else 'ns'}" if reading.verdict else ""
    return Markup(
        '<tr>{verdict}<td>{system}</td><td>{metric}</td><td class="num delta {css}">{diff}</td>'
        '<td class="num">{ci}</td><td class="num">{p_t}</td><td class="num">{p_w}</td>'
        '<td class="num">{current}</td><td class="num">{baseline}</td><td class="num">{n}</td>'
        "</tr>"
    ).format(
        verdict=verdict_cell,
        system=as_text(delta.get("system")),
        metric=as_text(delta.get("metric")),
        css=css,
        diff=fmt_signed(delta.get("mean_diff")),
        ci=fmt_ci(delta),
        p_t=fmt_p(delta.get("p_ttest")),
        p_w=fmt_p(delta.get("p_wilcoxon")),
        current=fmt(delta.get("current_mean")),
        baseline=fmt(delta.get("baseline_mean")),
        n=fmt_int(delta.get("n")),
    )


def _head(first: Markup, level: float) -> Markup:
    return Markup(
        "<thead><tr>{}<th>system</th><th>metric</th><th>Δ mean</th>"
        "<th>{:.0%} CI</th><th>p (t)</th><th>p (Wilcoxon)</th><th>current</th>"
        "<th>baseline</th><th>n</th></tr></thead>"
    ).format(first, level)


# The failing tests listed by name under "What changed"; the rest are one filter away.
MOST_FAILURES = 25
# A message is cut to this many characters in that list (the row has all of it).
FAILURE_CHARS = 240


def failing_tests(view: SuiteView) -> Markup:
    """The suite's errored and failed tests, errors first: case, system and the cause (the
    gate's message), each linking to its row in the case table."""
    rows = view.rows()
    outcomes = [rows.table.outcomes[i] for i in rows.order]  # from the table: none decoded
    failing = sorted(
        (k for k, outcome in enumerate(outcomes) if outcome in FAILING),
        key=lambda k: (FAILING.index(outcomes[k]), k),
    )
    if not failing:
        return Markup()
    items = []
    for i in failing[:MOST_FAILURES]:
        row = rows[i]
        message = " ".join(str(row.get("message") or "").split())
        if len(message) > FAILURE_CHARS:
            message = message[: FAILURE_CHARS - 1] + "…"
        outcome = str(row.get("outcome"))
        cause = Markup(' <span class="cause">{}</span>').format(message) if message else Markup()
        items.append(
            Markup(
                '<li><span class="badge o-{outcome}">{outcome}</span> '
                '<a href="#{anchor}">{case} [{system}]</a>{cause}</li>'
            ).format(
                outcome=outcome,
                anchor=case_anchor(view.index, i),
                case=as_text(row.get("case")),
                system=as_text(row.get("system")),
                cause=cause,
            )
        )
    more = len(failing) - MOST_FAILURES
    rest = (
        Markup(
            '<li>… and {:,} more: <a href="#q=failed">filter the cases</a> by outcome</li>'
        ).format(more)
        if more > 0
        else Markup()
    )
    counts = {o: sum(outcomes[k] == o for k in failing) for o in FAILING}
    words = ", ".join(outcome_count(n, o) for o, n in counts.items() if n)
    return Markup('<h4>Tests that did not pass: {}</h4><ul class="failing">{}{}</ul>').format(
        words, Markup().join(items), rest
    )


def what_changed(view: SuiteView) -> Markup:
    read = changes(view)
    failures = failing_tests(view)
    if not read and not failures:
        return Markup()
    significant = sorted(
        (pair for pair in read if pair[1].significant),
        key=lambda pair: _ORDER.get(pair[1].verdict, 3),
    )
    unchanged = len(read) - len(significant)
    parts = [
        Markup('<section class="what-changed"><h3>What changed against the baseline</h3>'),
        failures,
    ]
    if not read:
        parts.append(Markup("</section>"))
        return Markup().join(parts)
    if significant and failures:
        parts.append(Markup("<h4>Suite means that moved beyond their confidence interval</h4>"))
    if significant:
        verdict = Markup('<td class="verdict delta {verdict} sig">{arrow} {verdict}</td>')
        rows = Markup().join(
            _row(d, c, verdict.format(verdict=c.verdict, arrow=_arrow(d))) for d, c in significant
        )
        parts.append(
            Markup('<table class="changes">{}<tbody>{}</tbody></table>').format(
                _head(Markup("<th>verdict</th>"), view.confidence), rows
            )
        )
    elif failures:
        # Never "nothing changed" above failed tests: single cases broke their gates even if
        # no suite mean moved beyond its interval.
        parts.append(
            Markup(
                '<p class="no-change">No suite mean moved beyond its confidence interval; the '
                "tests above failed on their own cases.</p>"
            )
        )
    else:
        parts.append(Markup('<p class="no-change">No metric changed significantly.</p>'))
    if unchanged:
        pairs = "metric × system" if unchanged == 1 else "metrics × systems"
        within = "its CI" if unchanged == 1 else "their CIs"
        parts.append(
            Markup(
                '<p class="unchanged">{:,} {} not significantly changed (within {}).</p>'
            ).format(unchanged, pairs, within)
        )
    parts.append(_all_deltas(view, read))
    parts.append(Markup("</section>"))
    return Markup().join(parts)


def _significant_words(delta: Mapping[str, Any], reading: Change) -> str:
    """Text (escaped where it meets the table)."""
    if reading.significant:
        return f"yes, {reading.verdict}"
    return not_testable(delta.get("n")) or "no"


def _all_deltas(view: SuiteView, read: list[tuple[Mapping[str, Any], Change]]) -> Markup:
    cell = Markup("<td>{}</td>")
    rows = Markup().join(_row(d, c, cell.format(_significant_words(d, c))) for d, c in read)
    return Markup(
        '<details class="all-deltas"><summary>All baseline deltas '
        "({:,}, paired: current \u2212 baseline)</summary>"
        '<table class="baseline">{}<tbody>{}</tbody></table></details>'
    ).format(len(read), _head(Markup("<th>significant</th>"), view.confidence), rows)
