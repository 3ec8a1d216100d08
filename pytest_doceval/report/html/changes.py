"""'What changed': the block that leads each suite. The metrics whose baseline delta is
significant, worse first, with mean difference, CI and p-values; everything else folded into
one line; the full table of deltas kept, collapsed, for whoever wants every number."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_doceval.html.fmt import esc, fmt, fmt_ci, fmt_int, fmt_p, fmt_signed, num
from pytest_doceval.html.model import FAILING, Change, SuiteView, case_anchor, changes

# Worse first: a reviewer's first question is "what did this change break".
_ORDER = {"worse": 0, "better": 1, "changed": 2}


def _arrow(delta: Mapping[str, Any]) -> str:
    """Which way the mean moved (up or down); the verdict beside it says if that is good."""
    diff = num(delta.get("mean_diff"))
    return "" if diff is None else "▲" if diff > 0 else "▼"


def _row(delta: Mapping[str, Any], reading: Change, verdict_cell: str) -> str:
    css = f"{reading.verdict} {'sig' if reading.significant else 'ns'}" if reading.verdict else ""
    return (
        f"<tr>{verdict_cell}<td>{esc(delta.get('system'))}</td><td>{esc(delta.get('metric'))}</td>"
        f'<td class="num delta {css}">{fmt_signed(delta.get("mean_diff"))}</td>'
        f'<td class="num">{fmt_ci(delta)}</td>'
        f'<td class="num">{fmt_p(delta.get("p_ttest"))}</td>'
        f'<td class="num">{fmt_p(delta.get("p_wilcoxon"))}</td>'
        f'<td class="num">{fmt(delta.get("current_mean"))}</td>'
        f'<td class="num">{fmt(delta.get("baseline_mean"))}</td>'
        f'<td class="num">{fmt_int(delta.get("n"))}</td></tr>'
    )


def _head(first: str, level: float) -> str:
    return (
        f"<thead><tr>{first}<th>system</th><th>metric</th><th>Δ mean</th>"
        f"<th>{level:.0%} CI</th><th>p (t)</th><th>p (Wilcoxon)</th><th>current</th>"
        "<th>baseline</th><th>n</th></tr></thead>"
    )


# The failing tests listed by name under "What changed"; the rest are one filter away.
MOST_FAILURES = 25
# A message is cut to this many characters in that list (the row has all of it).
FAILURE_CHARS = 240


def failing_tests(view: SuiteView) -> str:
    """The suite's errored and failed tests, errors first: case, system and the cause (the
    gate's message), each linking to its row in the case table."""
    rows = view.rows()
    failing = sorted(
        (i for i, row in enumerate(rows) if row.get("outcome") in FAILING),
        key=lambda i: (FAILING.index(str(rows[i].get("outcome"))), i),
    )
    if not failing:
        return ""
    items = []
    for i in failing[:MOST_FAILURES]:
        row = rows[i]
        message = " ".join(str(row.get("message") or "").split())
        if len(message) > FAILURE_CHARS:
            message = message[: FAILURE_CHARS - 1] + "…"
        outcome = str(row.get("outcome"))
        items.append(
            f'<li><span class="badge o-{esc(outcome)}">{esc(outcome)}</span> '
            f'<a href="#{case_anchor(view.index, i)}">{esc(row.get("case"))} '
            f"[{esc(row.get('system'))}]</a>"
            + (f' <span class="cause">{esc(message)}</span>' if message else "")
            + "</li>"
        )
    more = len(failing) - MOST_FAILURES
    rest = (
        f'<li>… and {more:,} more: <a href="#q=failed">filter the cases</a> by outcome</li>'
        if more > 0
        else ""
    )
    counts = {o: sum(rows[i].get("outcome") == o for i in failing) for o in FAILING}
    words = ", ".join(
        f"{n:,} {'errors' if o == 'error' and n != 1 else o}" for o, n in counts.items() if n
    )
    return (
        f'<h4>Tests that did not pass: {words}</h4><ul class="failing">{"".join(items)}{rest}</ul>'
    )


def what_changed(view: SuiteView) -> str:
    read = changes(view)
    failures = failing_tests(view)
    if not read and not failures:
        return ""
    significant = sorted(
        (pair for pair in read if pair[1].significant),
        key=lambda pair: _ORDER.get(pair[1].verdict, 3),
    )
    unchanged = len(read) - len(significant)
    parts = ['<section class="what-changed"><h3>What changed against the baseline</h3>', failures]
    if not read:
        parts.append("</section>")
        return "".join(parts)
    if significant and failures:
        parts.append("<h4>Suite means that moved beyond their confidence interval</h4>")
    if significant:
        rows = "".join(
            _row(d, c, f'<td class="verdict delta {c.verdict} sig">{_arrow(d)} {c.verdict}</td>')
            for d, c in significant
        )
        parts.append(
            '<table class="changes">'
            f"{_head('<th>verdict</th>', view.confidence)}<tbody>{rows}</tbody></table>"
        )
    elif failures:
        # Never "nothing changed" above failed tests: single cases broke their gates even if
        # no suite mean moved beyond its interval.
        parts.append(
            '<p class="no-change">No suite mean moved beyond its confidence interval; the tests '
            "above failed on their own cases.</p>"
        )
    else:
        parts.append('<p class="no-change">No metric changed significantly.</p>')
    if unchanged:
        pairs = "metric × system" if unchanged == 1 else "metrics × systems"
        within = "its CI" if unchanged == 1 else "their CIs"
        parts.append(
            f'<p class="unchanged">{unchanged:,} {pairs} not significantly changed (within '
            f"{within}).</p>"
        )
    parts.append(_all_deltas(view, read))
    parts.append("</section>")
    return "".join(parts)


def _all_deltas(view: SuiteView, read: list[tuple[Mapping[str, Any], Change]]) -> str:
    rows = "".join(
        _row(d, c, f"<td>{'yes, ' + c.verdict if c.significant else 'no'}</td>") for d, c in read
    )
    return (
        '<details class="all-deltas"><summary>All baseline deltas '
        f"({len(read):,}, paired: current \u2212 baseline)</summary>"
        f'<table class="baseline">{_head("<th>significant</th>", view.confidence)}'
        f"<tbody>{rows}</tbody></table></details>"
    )
