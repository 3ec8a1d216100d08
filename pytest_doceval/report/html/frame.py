"""The page frame: the HTML document with its Content-Security-Policy, inline CSS and script,
the page header, the interrupted-run banner, the run summary and the table of contents."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.fmt import as_text, mapping, mappings, plural, script_json
from pytest_doceval.html.model import (
    FAILING,
    SuiteView,
    attention,
    failed_gates,
    ordered_outcomes,
    outcome_counts,
    total_outcomes,
)
from pytest_doceval.report.schema import Report
from pytest_doceval.report.terminal import limited_line
from pytest_doceval.rows import outcome_count

_OUTCOME_CLASS = {"passed": "o-passed", "failed": "o-failed", "error": "o-error"}

# CSS and JS are files beside the package (package data) so each is read and edited as what
# it is; they go into the page byte for byte (so the CSP hashes below match what is served).
_ASSETS = resources.files("pytest_doceval.report") / "assets"
# Markup: our own files, not report data, and the page must carry them unchanged.
CSS = Markup("\n" + (_ASSETS / "report.css").read_text(encoding="utf-8"))
JS = Markup("\n" + (_ASSETS / "report.js").read_text(encoding="utf-8"))


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def document(
    title: str, body: Markup, blobs: Markup, *, data: tuple[str, str] | None = None
) -> Markup:
    """The page. With `data` (the data folder's URL relative to the page, and the render id its
    files carry), the page's script loads its data blocks from there, and the policy lets it
    (``'strict-dynamic'``: a script the page's own script adds; none written in markup)."""
    scripts = Markup("'{}'").format(_csp_hash(JS))
    config = Markup()
    if data is not None:
        scripts += Markup(" 'strict-dynamic'")
        folder, render = data
        config = Markup('<script type="application/json" id="doceval-data">{}</script>\n').format(
            Markup(script_json({"folder": folder, "render": render}))
        )
    csp = Markup(
        "default-src 'none'; script-src {}; style-src '{}'; base-uri 'none'; form-action 'none'"
    ).format(scripts, _csp_hash(CSS))
    return Markup(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>{title}</title>\n<style>{css}</style>\n</head>\n<body>\n"
        "{body}\n<noscript><p>The per-case table and its details need JavaScript; the tables "
        "above do not.</p></noscript>\n{config}{blobs}<script>{js}</script>\n</body>\n</html>\n"
    ).format(csp=csp, title=title, css=CSS, body=body, config=config, blobs=blobs, js=JS)


def outcome_phrase(counts: Mapping[str, int]) -> str:
    """``2 failed, 1 error, 5 passed``: pytest's words, pytest's numbers."""
    return ", ".join(outcome_count(counts[o], o) for o in ordered_outcomes(counts)) or "no tests"


def title(views: Sequence[SuiteView]) -> str:
    counts = total_outcomes(views)
    gates = sum(failed_gates(v.data) for v in views)
    failing = {o: counts[o] for o in FAILING if counts.get(o)}
    status = outcome_phrase(failing) if failing else "all passed" if counts else "no tests"
    if gates:
        status += f", {plural(gates, 'gate')} failed"
    names = ", ".join(v.name for v in views[:3]) + (" …" if len(views) > 3 else "")
    return f"doceval: {status}" + (f" · {names}" if names else "")


def page_header(report: Report) -> Markup:
    env = mapping(report.get("environment"))
    config = mapping(report.get("config"))
    facts = [
        ("created", report.get("created")),
        ("schema", report.get("schema")),
        ("python", env.get("python")),
        ("platform", env.get("platform")),
        ("bootstrap resamples", config.get("bootstrap_resamples")),
        ("confidence", config.get("confidence")),
        ("seed", config.get("seed")),
    ]
    packages = mapping(env.get("packages"))
    package_rows = Markup().join(
        Markup("<tr><td>{}</td><td>{}</td></tr>").format(k, as_text(v)) for k, v in packages.items()
    )
    details = (
        Markup(
            '<details class="packages"><summary>{} package versions</summary>'
            "<table><tr><th>package</th><th>version</th></tr>{}</table></details>"
        ).format(len(packages), package_rows)
        if packages
        else Markup()
    )
    return Markup('<header><h1>doceval report</h1><p class="facts">{}</p>{}</header>').format(
        facts_line(facts), details
    )


def facts_line(facts: Sequence[tuple[str, Any]]) -> Markup:
    """``name value`` pairs, the name bold; a pair whose value is None or empty is left out."""
    return Markup().join(
        Markup("<span><b>{}</b> {}</span>").format(k, v) for k, v in facts if v not in (None, "")
    )


def interrupted_banner(report: Report) -> Markup:
    """A run stopped early (Ctrl-C, ``-x``, a crash) wrote what it had: say so before any
    number, since means, intervals and gates cover only the tests that ran; so does a run
    limited to the first cases of each suite."""
    banner = Markup()
    if report.get("interrupted") is True:
        banner += Markup(
            '<div class="interrupted" role="alert"><b>This run was interrupted.</b> '
            "The numbers below are partial: they cover only the tests that finished before it "
            "stopped, so means, intervals, baseline deltas and gates are not the full suite's."
            "</div>"
        )
    limit = report.get("limit")
    if isinstance(limit, int):
        # A smoke run (--doceval-limit) is partial by design: said as plainly.
        banner += Markup('<div class="interrupted" role="alert">{}</div>').format(
            limited_line(limit)
        )
    return banner


def outcome_badges(counts: Mapping[str, int]) -> Markup:
    return Markup(" ").join(
        Markup('<span class="badge {}">{} {:,}</span>').format(
            _OUTCOME_CLASS.get(o, "o-other"), o, counts[o]
        )
        for o in ordered_outcomes(counts)
    )


def gate_badge(suite: Mapping[str, Any]) -> Markup:
    failed = failed_gates(suite)
    if not failed:
        return Markup()
    return Markup(' <span class="badge o-failed">{} failed</span>').format(plural(failed, "gate"))


def run_summary(views: Sequence[SuiteView]) -> Markup:
    totals = total_outcomes(views)
    gates = [g for v in views for g in mappings(v.data.get("gates"))]
    failed = sum(1 for g in gates if g.get("passed") is False)
    gate_text = (
        Markup('<span class="badge o-failed">{} of {} suite gates failed</span>').format(
            failed, len(gates)
        )
        if failed
        else Markup('<span class="badge o-passed">{} suite gates passed</span>').format(len(gates))
        if gates
        else Markup()
    )
    errors = sum(1 for v in views if v.data.get("error"))
    error_text = (
        Markup(' <span class="badge o-error">{} suite(s) could not run</span>').format(errors)
        if errors
        else Markup()
    )
    return Markup(
        '<section class="run-summary"><h2>Run summary</h2><p>{}, {}: '
        '<span class="outcomes">{}</span></p><p>{} {}{}</p></section>'
    ).format(
        plural(len(views), "suite"),
        plural(sum(totals.values()), "test"),
        outcome_phrase(totals),
        outcome_badges(totals),
        gate_text,
        error_text,
    )


def toc(views: Sequence[SuiteView]) -> Markup:
    """Suites in page order (failing first, then significant changes), each with why."""
    if len(views) < 2:
        return Markup()
    why = {0: "needs attention", 1: "changed against the baseline"}
    items = []
    for view in views:
        level = attention(view)
        mark = (
            Markup(' <span class="badge attn-{}">{}</span>').format(level, why[level])
            if level in why
            else Markup()
        )
        items.append(
            Markup('<li><a href="#suite-{}">{}</a>{} {}{}</li>').format(
                view.index,
                view.name,
                mark,
                outcome_badges(outcome_counts(view.data)),
                gate_badge(view.data),
            )
        )
    return Markup('<nav class="toc"><h2>Suites</h2><ul>{}</ul></nav>').format(Markup().join(items))
