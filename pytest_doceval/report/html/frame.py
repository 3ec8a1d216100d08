"""The page frame: the HTML document with its Content-Security-Policy, inline CSS and script,
the page header, the interrupted-run banner, the run summary and the table of contents."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from pytest_doceval.html.fmt import esc, mapping, mappings, plural
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

_OUTCOME_CLASS = {"passed": "o-passed", "failed": "o-failed", "error": "o-error"}

# CSS and JS are files beside the package (package data) so each is read and edited as what
# it is; they go into the page byte for byte (so the CSP hashes below match what is served).
_ASSETS = resources.files("pytest_doceval.report") / "assets"
CSS = "\n" + (_ASSETS / "report.css").read_text(encoding="utf-8")
JS = "\n" + (_ASSETS / "report.js").read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def document(title: str, body: str, blobs: str) -> str:
    csp = (
        f"default-src 'none'; script-src {_csp_hash(JS)}; style-src {_csp_hash(CSS)}; "
        "base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"{body}\n<noscript><p>The per-case table and its details need JavaScript; the tables "
        f"above do not.</p></noscript>\n{blobs}<script>{JS}</script>\n</body>\n</html>\n"
    )


def outcome_phrase(counts: Mapping[str, int]) -> str:
    """``2 failed, 1 error, 5 passed``: pytest's words, pytest's numbers."""
    words = {"error": ("error", "errors")}
    parts = []
    for outcome in ordered_outcomes(counts):
        one, many = words.get(outcome, (outcome, outcome))
        parts.append(f"{counts[outcome]:,} {one if counts[outcome] == 1 else many}")
    return ", ".join(parts) or "no tests"


def title(views: Sequence[SuiteView]) -> str:
    counts = total_outcomes(views)
    gates = sum(failed_gates(v.data) for v in views)
    failing = {o: counts[o] for o in FAILING if counts.get(o)}
    status = outcome_phrase(failing) if failing else "all passed" if counts else "no tests"
    if gates:
        status += f", {plural(gates, 'gate')} failed"
    names = ", ".join(v.name for v in views[:3]) + (" …" if len(views) > 3 else "")
    return f"doceval: {status}" + (f" · {names}" if names else "")


def page_header(report: Report) -> str:
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
    shown = "".join(
        f"<span><b>{esc(k)}</b> {esc(v)}</span>" for k, v in facts if v not in (None, "")
    )
    packages = mapping(env.get("packages"))
    package_rows = "".join(
        f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in packages.items()
    )
    details = (
        f'<details class="packages"><summary>{len(packages)} package versions</summary>'
        f"<table><tr><th>package</th><th>version</th></tr>{package_rows}</table></details>"
        if packages
        else ""
    )
    return f'<header><h1>doceval report</h1><p class="facts">{shown}</p>{details}</header>'


def interrupted_banner(report: Report) -> str:
    """A run stopped early (Ctrl-C, ``-x``, a crash) wrote what it had: say so before any
    number, since means, intervals and gates cover only the tests that ran."""
    if report.get("interrupted") is not True:
        return ""
    return (
        '<div class="interrupted" role="alert"><b>This run was interrupted.</b> '
        "The numbers below are partial: they cover only the tests that finished before it "
        "stopped, so means, intervals, baseline deltas and gates are not the full suite's.</div>"
    )


def outcome_badges(counts: Mapping[str, int]) -> str:
    return " ".join(
        f'<span class="badge {_OUTCOME_CLASS.get(o, "o-other")}">{esc(o)} {counts[o]:,}</span>'
        for o in ordered_outcomes(counts)
    )


def gate_badge(suite: Mapping[str, Any]) -> str:
    failed = failed_gates(suite)
    return f' <span class="badge o-failed">{plural(failed, "gate")} failed</span>' if failed else ""


def run_summary(views: Sequence[SuiteView]) -> str:
    totals = total_outcomes(views)
    gates = [g for v in views for g in mappings(v.data.get("gates"))]
    failed = sum(1 for g in gates if g.get("passed") is False)
    gate_text = (
        f'<span class="badge o-failed">{failed} of {len(gates)} suite gates failed</span>'
        if failed
        else f'<span class="badge o-passed">{len(gates)} suite gates passed</span>'
        if gates
        else ""
    )
    errors = sum(1 for v in views if v.data.get("error"))
    error_text = (
        f' <span class="badge o-error">{errors} suite(s) could not run</span>' if errors else ""
    )
    return (
        '<section class="run-summary"><h2>Run summary</h2>'
        f"<p>{plural(len(views), 'suite')}, {plural(sum(totals.values()), 'test')}: "
        f'<span class="outcomes">{esc(outcome_phrase(totals))}</span></p>'
        f"<p>{outcome_badges(totals)} {gate_text}{error_text}</p></section>"
    )


def toc(views: Sequence[SuiteView]) -> str:
    """Suites in page order (failing first, then significant changes), each with why."""
    if len(views) < 2:
        return ""
    why = {0: "needs attention", 1: "changed against the baseline"}
    items = []
    for view in views:
        level = attention(view)
        mark = f' <span class="badge attn-{level}">{why[level]}</span>' if level in why else ""
        items.append(
            f'<li><a href="#suite-{view.index}">{esc(view.name)}</a>{mark} '
            f"{outcome_badges(outcome_counts(view.data))}{gate_badge(view.data)}</li>"
        )
    return f'<nav class="toc"><h2>Suites</h2><ul>{"".join(items)}</ul></nav>'
