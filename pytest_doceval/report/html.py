"""The HTML report: one self-contained page a pull-request reviewer opens from a CI artifact.

``render_html(report)`` turns a ``doceval-report/1`` report (a dict) into a complete HTML5
document with inline CSS, inline JavaScript and inline SVG; it never references anything
outside itself, and a Content-Security-Policy (``default-src 'none'`` plus the hashes of its
own script and style) makes the browser enforce that. ``write_html`` writes it atomically.

Per suite the page shows a header (kind, path, normalisation, language, notes), a systems x
metrics summary (mean, CI, n, delta to baseline coloured by direction and significance), one
small SVG plot per metric, the baseline, pairwise-comparison and gate tables, and a per-case
table whose rows open the aligned truth-vs-output diff.

Escaping. Every string from the report reaches the page either through ``html.escape`` (the
server-rendered parts) or as JSON data in ``<script type="application/json">`` with ``<``,
``>`` and ``&`` written as ``\\u003c``/``\\u003e``/``\\u0026`` (so ``</script>`` in data cannot
end the element); the page's script reads that data with ``JSON.parse`` and puts it into the
document only with ``textContent`` and text nodes, never ``innerHTML``.

Scale. Per-case rows are a compact JSON table drawn by the script, a page of rows at a time.
Everything else about a case (node id, all metrics, counts, notes and the diff) is packed into
chunks of about ``CHUNK_BYTES``, decoded only when a row is opened. The diffs of one case share
its truth text: the text is stored once per case and each system's diff becomes a short edit
script into it. When a report's details exceed ``INLINE_LIMIT`` the chunks are raw-deflated
and base85-encoded (decoded in the browser with ``DecompressionStream``; the base85 alphabet
used has no ``<``, ``>`` or ``&``), otherwise they are plain JSON. Truth text, edit scripts and
row details sit in separate arrays of a chunk, which compresses them better.

Self-test hook. Opening the page with ``#selftest`` makes its script open the first case row
that has a diff once the page is ready, then set ``data-selftest`` on ``<html>`` to ``ok`` (or
``error: ...``). The page always records ``data-ready-ms``, ``performance.now()`` when its
script has drawn the page. Both exist for headless-browser tests and the benchmark.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_doceval.atomic import write_text_atomic
from pytest_doceval.metrics.structure import PER_TYPE_PREFIXES

__all__ = ["render_html", "write_html"]

# Details are packed into chunks of about this many bytes of JSON (before compression).
CHUNK_BYTES = 400_000
# Above this many bytes of detail JSON in a report, chunks are deflated and base85-encoded.
INLINE_LIMIT = 256_000
# At most this many metrics get a column in the per-case table (all are in the row details).
ROW_METRICS = 5
# Row messages longer than this are cut in the table; the details hold the whole message.
ROW_MESSAGE_CHARS = 300

_OUTCOMES = ("error", "failed", "skipped", "passed")
_OUTCOME_CLASS = {"passed": "o-passed", "failed": "o-failed", "error": "o-error"}
_PREFERRED = ("cer", "wer", "structure_f1")
# Python's base85 alphabet with <, > and & swapped for characters it does not use, so an
# encoded chunk holds nothing HTML could read as markup.
_B85_SAFE = str.maketrans("<>&", ".,:")
_DEFLATE_LEVEL = 9


# --------------------------------------------------------------------------- public API


def render_html(report: Mapping[str, Any]) -> str:
    """A complete, self-contained HTML5 document for a ``doceval-report/1`` report.

    Absent or ``None`` optional parts are skipped; nothing in the report is trusted as markup.
    """
    report = report if isinstance(report, Mapping) else {}
    suites = _suites(report)
    confidence = _confidence(report)
    blobs = _Blobs()
    sections = [
        _suite_section(index, name, suite, confidence, blobs)
        for index, (name, suite) in enumerate(suites)
    ]
    if not sections:
        sections = ['<p class="empty">This report has no suites.</p>']
    body = "".join([_page_header(report), _run_summary(suites), _toc(suites), *sections])
    document = _document(_title(suites), body, blobs.render())
    # Lone surrogates (possible in JSON strings) cannot be written as UTF-8: make them '?'.
    return document.encode("utf-8", "replace").decode("utf-8")


def write_html(report: Mapping[str, Any], path: Path) -> Path:
    """Render `report` and write it to `path` atomically (temporary file beside it, then
    ``os.replace``); returns the path."""
    return write_text_atomic(Path(path), render_html(report))


# --------------------------------------------------------------------------- small helpers


def _esc(value: Any) -> str:
    """Text for HTML content or a quoted attribute value."""
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: Any) -> float | None:
    """A number from the report, or None (bools and strings are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _nonfinite(x: float) -> str | None:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "\u221e" if x > 0 else "\u2212\u221e"
    return None


def _fmt(value: Any, digits: int = 4) -> str:
    """A metric value: fixed decimals, ``—`` when absent."""
    x = _num(value)
    if x is None:
        return "—"
    return _nonfinite(x) or f"{x:.{digits}f}"


def _fmt_signed(value: Any, digits: int = 4) -> str:
    """A difference with its sign; one that rounds to zero is shown unsigned."""
    x = _num(value)
    if x is None:
        return "—"
    if math.isfinite(x) and round(x, digits) == 0:
        return f"{0:.{digits}f}"
    return _nonfinite(x) or f"{x:+.{digits}f}"


def _fmt_p(value: Any) -> str:
    """A p-value: three decimals, ``<0.001`` below that."""
    x = _num(value)
    if x is None:
        return "—"
    return _nonfinite(x) or ("<0.001" if x < 0.001 else f"{x:.3f}")


def _fmt_int(value: Any) -> str:
    x = _num(value)
    if x is None:
        return "—"
    return _nonfinite(x) or f"{round(x):,}"


def _ci(entry: Mapping[str, Any]) -> str:
    """``[low, high]`` of a signed difference."""
    return f"[{_fmt_signed(entry.get('ci_low'))}, {_fmt_signed(entry.get('ci_high'))}]"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _items(value: Any) -> list[Any]:
    """A list from the report; None, a string or a mapping give an empty list."""
    if isinstance(value, list | tuple):
        return list(value)
    return []


def _mappings(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in _items(value) if isinstance(item, Mapping)]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(item) for item in _items(value) if item is not None]


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _judge(diff: float | None, direction: str | None) -> str:
    """``better``/``worse``/``same`` for a change in a metric, ``changed`` when the metric's
    direction is unknown, ``""`` without a finite number."""
    if diff is None or not math.isfinite(diff):
        return ""
    if abs(diff) < 5e-7:  # baselines keep 6 decimals
        return "same"
    if direction not in ("lower", "higher"):
        return "changed"
    worse = diff > 0 if direction == "lower" else diff < 0
    return "worse" if worse else "better"


def _plain(value: Any, digits: int | None = None) -> Any:
    """JSON-safe builtins: non-finite floats become strings (JSON has no NaN); with `digits`,
    floats keep that many significant digits."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, digits) for v in value]
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return float(f"{value:.{digits}g}") if digits else value
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _row_number(value: Any) -> float | str | None:
    """A metric for the row table: rounded (display has 4 decimals), or a string if not finite."""
    x = _num(value)
    if x is None:
        return None
    return round(x, 6) if math.isfinite(x) else str(x)


def _script_json(data: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --------------------------------------------------------------------------- report access


def _suites(report: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [
        (str(name), s)
        for name, s in _mapping(report.get("suites")).items()
        if isinstance(s, Mapping)
    ]


def _confidence(report: Mapping[str, Any]) -> float:
    value = _num(_mapping(report.get("config")).get("confidence"))
    return value if value is not None and 0 < value < 1 else 0.95


def _outcome_counts(suite: Mapping[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in _mappings(suite.get("results")):
        outcome = str(row.get("outcome") or "unknown")
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def _direction(suite: Mapping[str, Any], metric: str) -> str | None:
    direction = _mapping(_mapping(suite.get("metrics")).get(metric)).get("direction")
    return direction if direction in ("lower", "higher") else None


def _all_metrics(suite: Mapping[str, Any]) -> list[str]:
    """Metric names in the report's order: declared ones, then any found in aggregates."""
    names = [str(m) for m in _mapping(suite.get("metrics"))]
    for per_system in _mapping(suite.get("aggregates")).values():
        names.extend(str(m) for m in _mapping(per_system))
    if not names:
        for row in _mappings(suite.get("results")):
            names.extend(str(m) for m in _mapping(row.get("metrics")))
    return _unique(names)


def _headline_metrics(suite: Mapping[str, Any]) -> list[str]:
    """Metrics for the summary: all but per-element-type ones (unless that is all there is)."""
    names = _all_metrics(suite)
    headline = [m for m in names if not m.startswith(PER_TYPE_PREFIXES)]
    return headline or names


def _row_metrics(suite: Mapping[str, Any]) -> list[str]:
    """The few metrics that get a column in the per-case table: CER, WER, Structure F1 first."""
    headline = _headline_metrics(suite)
    preferred = [m for m in _PREFERRED if m in headline]
    return _unique([*preferred, *headline])[:ROW_METRICS]


def _systems(suite: Mapping[str, Any]) -> list[str]:
    names = _strings(suite.get("systems"))
    names.extend(str(s) for s in _mapping(suite.get("aggregates")))
    names.extend(str(r.get("system")) for r in _mappings(suite.get("results")) if r.get("system"))
    return _unique(names)


def _failed_gates(suite: Mapping[str, Any]) -> int:
    return sum(1 for g in _mappings(suite.get("gates")) if g.get("passed") is False)


# --------------------------------------------------------------------------- page frame


def _title(suites: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    failed = sum(
        n for _, s in suites for o, n in _outcome_counts(s).items() if o in ("failed", "error")
    )
    gates = sum(_failed_gates(s) for _, s in suites)
    status = "all passed" if not failed and not gates else f"{failed} failed"
    if gates:
        status += f", {gates} gate(s) failed"
    names = ", ".join(name for name, _ in suites[:3]) + (" …" if len(suites) > 3 else "")
    return f"doceval: {status}" + (f" · {names}" if names else "")


def _page_header(report: Mapping[str, Any]) -> str:
    env = _mapping(report.get("environment"))
    config = _mapping(report.get("config"))
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
        f"<span><b>{_esc(k)}</b> {_esc(v)}</span>" for k, v in facts if v not in (None, "")
    )
    packages = _mapping(env.get("packages"))
    package_rows = "".join(
        f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td></tr>" for k, v in packages.items()
    )
    details = (
        f'<details class="packages"><summary>{len(packages)} package versions</summary>'
        f"<table><tr><th>package</th><th>version</th></tr>{package_rows}</table></details>"
        if packages
        else ""
    )
    return f'<header><h1>doceval report</h1><p class="facts">{shown}</p>{details}</header>'


def _outcome_badges(counts: Mapping[str, int]) -> str:
    order = [o for o in _OUTCOMES if o in counts] + sorted(o for o in counts if o not in _OUTCOMES)
    return " ".join(
        f'<span class="badge {_OUTCOME_CLASS.get(o, "o-other")}">{_esc(o)} {counts[o]:,}</span>'
        for o in order
    )


def _run_summary(suites: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    totals: dict[str, int] = {}
    for _, suite in suites:
        for outcome, n in _outcome_counts(suite).items():
            totals[outcome] = totals.get(outcome, 0) + n
    gates = [g for _, s in suites for g in _mappings(s.get("gates"))]
    failed_gates = sum(1 for g in gates if g.get("passed") is False)
    gate_text = (
        f'<span class="badge o-failed">{failed_gates} of {len(gates)} suite gates failed</span>'
        if failed_gates
        else f'<span class="badge o-passed">{len(gates)} suite gates passed</span>'
        if gates
        else ""
    )
    total = sum(totals.values())
    errors = sum(1 for _, s in suites if s.get("error"))
    error_text = (
        f' <span class="badge o-error">{errors} suite(s) could not run</span>' if errors else ""
    )
    return (
        '<section class="run-summary"><h2>Run summary</h2>'
        f"<p>{len(suites)} suite(s), {total:,} case tests: {_outcome_badges(totals)} "
        f"{gate_text}{error_text}</p></section>"
    )


def _toc(suites: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    if len(suites) < 2:
        return ""
    items = "".join(
        f'<li><a href="#suite-{i}">{_esc(name)}</a> {_outcome_badges(_outcome_counts(s))}'
        + (
            f' <span class="badge o-failed">{_failed_gates(s)} gate(s) failed</span>'
            if _failed_gates(s)
            else ""
        )
        + "</li>"
        for i, (name, s) in enumerate(suites)
    )
    return f'<nav class="toc"><ul>{items}</ul></nav>'


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _document(title: str, body: str, blobs: str) -> str:
    csp = (
        f"default-src 'none'; script-src {_csp_hash(_JS)}; style-src {_csp_hash(_CSS)}; "
        "base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"{body}\n<noscript><p>The per-case table and diffs need JavaScript; the tables above "
        f"do not.</p></noscript>\n{blobs}<script>{_JS}</script>\n</body>\n</html>\n"
    )


# --------------------------------------------------------------------------- suite sections


def _suite_section(
    index: int, name: str, suite: Mapping[str, Any], confidence: float, blobs: _Blobs
) -> str:
    metrics = _headline_metrics(suite)
    systems = _systems(suite)
    parts = [
        f'<section class="suite" id="suite-{index}">',
        _suite_header(name, suite),
        _summary_table(suite, systems, metrics, confidence),
        _plots(suite, systems, metrics, confidence),
        _gate_table(suite),
        _baseline_table(suite),
        _comparison_table(suite, confidence),
        _baseline_lists(suite),
        _cases_block(index, suite, blobs),
        "</section>",
    ]
    return "".join(parts)


def _suite_header(name: str, suite: Mapping[str, Any]) -> str:
    facts = [
        ("kind", suite.get("kind")),
        ("path", suite.get("path")),
        ("normalization", suite.get("normalization")),
        ("language", suite.get("language")),
        ("systems", ", ".join(_strings(suite.get("systems"))) or None),
    ]
    shown = "".join(
        f"<span><b>{_esc(k)}</b> {_esc(v)}</span>" for k, v in facts if v not in (None, "")
    )
    notes = "".join(f"<li>{_esc(n)}</li>" for n in _strings(suite.get("notes")))
    failed = _failed_gates(suite)
    gate_badge = f' <span class="badge o-failed">{failed} gate(s) failed</span>' if failed else ""
    return (
        f"<h2>{_esc(name)}</h2>"
        f'<p class="facts">{shown}</p>'
        f"<p>{_outcome_badges(_outcome_counts(suite))}{gate_badge}</p>"
        + _suite_error(suite)
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
    )


def _suite_error(suite: Mapping[str, Any]) -> str:
    """A suite that could not run at all (bad ``suite.toml``, unknown system, ...)."""
    error = suite.get("error")
    if not error:
        return ""
    return f'<p class="suite-error"><b>Suite error:</b> {_esc(error)}</p>'


def _direction_label(direction: str | None) -> str:
    return {"lower": "↓ lower is better", "higher": "↑ higher is better"}.get(
        direction or "", "direction unknown"
    )


def _delta_index(suite: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {
        (str(d.get("system")), str(d.get("metric"))): d
        for d in _mappings(suite.get("baseline_deltas"))
    }


def _delta_significant(delta: Mapping[str, Any]) -> bool:
    """The report's ``significant``; without it, whether the CI excludes zero."""
    flag = delta.get("significant")
    if isinstance(flag, bool):
        return flag
    low, high = _num(delta.get("ci_low")), _num(delta.get("ci_high"))
    return low is not None and high is not None and (low > 0 or high < 0)


def _delta_html(delta: Mapping[str, Any], direction: str | None, confidence: float) -> str:
    diff = _num(delta.get("mean_diff"))
    verdict = _judge(diff, direction)
    if not verdict:
        return ""
    significant = _delta_significant(delta) and verdict != "same"
    arrow = {
        "worse": "▲" if direction == "lower" else "▼",
        "better": "▼" if direction == "lower" else "▲",
    }.get(verdict, "•")
    word = {"worse": "worse", "better": "better", "same": "unchanged"}.get(verdict, "changed")
    title = (
        f"vs baseline {_fmt(delta.get('baseline_mean'))}: {_fmt_signed(diff)} "
        f"[{_fmt_signed(delta.get('ci_low'))}, {_fmt_signed(delta.get('ci_high'))}] "
        f"{confidence:.0%} CI, n={_fmt_int(delta.get('n'))}, "
        f"p(t)={_fmt_p(delta.get('p_ttest'))}, p(Wilcoxon)={_fmt_p(delta.get('p_wilcoxon'))}"
        f" — {'significantly ' if significant else 'not significantly '}{word}"
    )
    classes = f"delta {verdict} {'sig' if significant else 'ns'}"
    mark = ' <span class="sigmark">significant</span>' if significant else ""
    return (
        f'<div class="{classes}" title="{_esc(title)}">{arrow} {_esc(_fmt_signed(diff))} '
        f"vs baseline{mark}</div>"
    )


def _summary_table(
    suite: Mapping[str, Any], systems: list[str], metrics: list[str], confidence: float
) -> str:
    aggregates = _mapping(suite.get("aggregates"))
    if not aggregates or not metrics:
        return ""
    deltas = _delta_index(suite)
    head = "".join(
        f'<th>{_esc(m)}<div class="dir">{_direction_label(_direction(suite, m))}</div></th>'
        for m in metrics
    )
    rows = []
    for system in systems:
        per_metric = _mapping(aggregates.get(system))
        cells = []
        for metric in metrics:
            agg = _mapping(per_metric.get(metric))
            delta = deltas.get((system, metric))
            cells.append(_summary_cell(agg, delta, _direction(suite, metric), confidence))
        rows.append(f"<tr><th>{_esc(system)}</th>{''.join(cells)}</tr>")
    return (
        f"<h3>Summary: mean, {confidence:.0%} CI, n, delta to baseline</h3>"
        f'<table class="summary"><thead><tr><th>system</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _summary_cell(
    agg: Mapping[str, Any],
    delta: Mapping[str, Any] | None,
    direction: str | None,
    confidence: float,
) -> str:
    if not agg and not delta:
        return '<td class="cell empty">—</td>'
    parts = [f'<div class="mean">{_esc(_fmt(agg.get("mean")))}</div>']
    if _num(agg.get("ci_low")) is not None or _num(agg.get("ci_high")) is not None:
        parts.append(
            f'<div class="ci">[{_esc(_fmt(agg.get("ci_low")))}, '
            f"{_esc(_fmt(agg.get('ci_high')))}]</div>"
        )
    extra = [f"n={_fmt_int(agg.get('n'))}"] if agg.get("n") is not None else []
    if _num(agg.get("corpus")) is not None:
        extra.append(f"corpus {_fmt(agg.get('corpus'))}")
    if extra:
        parts.append(f'<div class="n">{_esc(" · ".join(extra))}</div>')
    if delta:
        parts.append(_delta_html(delta, direction, confidence))
    return f'<td class="cell">{"".join(parts)}</td>'


def _gate_table(suite: Mapping[str, Any]) -> str:
    gates = _mappings(suite.get("gates"))
    if not gates:
        return ""
    ordered = sorted(gates, key=lambda g: g.get("passed") is not False)
    rows = []
    for gate in ordered:
        passed = gate.get("passed")
        if passed is False:
            css, verdict = "gate-fail", "✗ FAILED"
        elif gate.get("evaluated") is False:
            css, verdict = "gate-skip", "\u2013 not evaluated"
        else:
            css, verdict = "gate-pass", "✓ passed"
        rows.append(
            f'<tr class="{css}"><td class="verdict">{verdict}</td><td>{_esc(gate.get("system"))}'
            f"</td><td>{_esc(gate.get('metric'))}</td><td><code>{_esc(gate.get('rule'))}</code>"
            f"</td><td>{_esc(gate.get('message'))}</td></tr>"
        )
    failed = _failed_gates(suite)
    title = f"Suite gates: {failed} of {len(gates)} failed" if failed else "Suite gates: all passed"
    return (
        f'<h3>{_esc(title)}</h3><table class="gates"><thead><tr><th>verdict</th><th>system</th>'
        "<th>metric</th><th>rule</th><th>message</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _baseline_table(suite: Mapping[str, Any]) -> str:
    deltas = _mappings(suite.get("baseline_deltas"))
    if not deltas:
        return ""
    rows = []
    for d in deltas:
        metric = str(d.get("metric"))
        verdict = _judge(_num(d.get("mean_diff")), _direction(suite, metric) or d.get("direction"))
        sig = _delta_significant(d) and verdict != "same"  # float noise is not a change
        css = f"{verdict} {'sig' if sig else 'ns'}" if verdict else ""
        rows.append(
            f"<tr><td>{_esc(d.get('system'))}</td><td>{_esc(metric)}</td>"
            f'<td class="num">{_fmt_int(d.get("n"))}</td>'
            f'<td class="num">{_fmt(d.get("current_mean"))}</td>'
            f'<td class="num">{_fmt(d.get("baseline_mean"))}</td>'
            f'<td class="num delta {css}">{_fmt_signed(d.get("mean_diff"))}</td>'
            f'<td class="num">{_ci(d)}</td>'
            f'<td class="num">{_fmt_p(d.get("p_ttest"))}</td>'
            f'<td class="num">{_fmt_p(d.get("p_wilcoxon"))}</td>'
            f'<td class="delta {css}">{"yes, " + verdict if sig else "no"}</td></tr>'
        )
    return (
        "<h3>Against the baseline (paired: current \u2212 baseline)</h3>"
        '<table class="baseline"><thead><tr><th>system</th><th>metric</th><th>n</th>'
        "<th>current</th><th>baseline</th><th>Δ mean</th><th>CI</th><th>p (t)</th>"
        "<th>p (Wilcoxon)</th><th>significant</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _comparison_verdict(c: Mapping[str, Any], direction: str | None, alpha: float) -> str:
    """Which system is better, if the difference is significant: Bonferroni p below alpha
    when there is one, else a CI that excludes zero."""
    diff = _num(c.get("mean_diff"))
    p = _num(c.get("p_bonferroni"))
    low, high = _num(c.get("ci_low")), _num(c.get("ci_high"))
    if p is not None:
        significant = p < alpha
    else:
        significant = low is not None and high is not None and (low > 0 or high < 0)
    judged = _judge(diff, direction)
    if not significant or judged not in ("better", "worse"):
        return '<td class="ns">no significant difference</td>'
    winner = c.get("a") if judged == "better" else c.get("b")
    return f'<td class="sig"><b>{_esc(winner)}</b> better</td>'


def _comparison_table(suite: Mapping[str, Any], confidence: float) -> str:
    comparisons = _mappings(suite.get("comparisons"))
    if not comparisons:
        return ""
    alpha = 1 - confidence
    has_mcnemar = any(c.get("p_mcnemar") is not None for c in comparisons)
    rows = []
    for c in comparisons:
        metric = str(c.get("metric"))
        mcnemar = f'<td class="num">{_fmt_p(c.get("p_mcnemar"))}</td>' if has_mcnemar else ""
        rows.append(
            f"<tr><td>{_esc(metric)}</td><td>{_esc(c.get('a'))}</td><td>{_esc(c.get('b'))}</td>"
            f'<td class="num">{_fmt_int(c.get("n"))}</td>'
            f'<td class="num">{_fmt_signed(c.get("mean_diff"))}</td>'
            f'<td class="num">{_ci(c)}</td>'
            f'<td class="num">{_fmt_p(c.get("p_ttest"))}</td>'
            f'<td class="num">{_fmt_p(c.get("p_wilcoxon"))}</td>'
            f'<td class="num">{_fmt_p(c.get("p_bonferroni"))}</td>{mcnemar}'
            f'<td class="num">{_fmt(c.get("cohens_d"), 2)}</td>'
            f"{_comparison_verdict(c, _direction(suite, metric), alpha)}</tr>"
        )
    mcnemar_head = "<th>p (McNemar)</th>" if has_mcnemar else ""
    return (
        "<h3>Pairwise comparisons (paired: A \u2212 B)</h3>"
        '<table class="comparisons"><thead><tr><th>metric</th><th>A</th><th>B</th><th>n</th>'
        "<th>Δ mean</th><th>CI</th><th>p (t)</th><th>p (Wilcoxon)</th><th>p (Bonferroni)</th>"
        f"{mcnemar_head}<th>Cohen's d</th><th>verdict (\u03b1={alpha:.2g})</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _baseline_lists(suite: Mapping[str, Any]) -> str:
    """Baseline entries no test used, and baseline changes this run wrote (``--doceval-update``)."""
    out = []
    for key, what in (
        ("unused_baseline", "baseline entries without a current result"),
        ("baseline_changes", "baseline changes written by this run"),
    ):
        entries = _strings(suite.get(key))
        if entries:
            items = "".join(f"<li><code>{_esc(e)}</code></li>" for e in entries)
            out.append(
                f'<details class="{key}"><summary>{len(entries)} {what}</summary>'
                f"<ul>{items}</ul></details>"
            )
    return "".join(out)


# --------------------------------------------------------------------------- SVG plots


def _plots(
    suite: Mapping[str, Any], systems: list[str], metrics: list[str], confidence: float
) -> str:
    aggregates = _mapping(suite.get("aggregates"))
    deltas = _delta_index(suite)
    charts = []
    for metric in metrics:
        points = []
        for system in systems:
            agg = _mapping(_mapping(aggregates.get(system)).get(metric))
            base = _num(_mapping(deltas.get((system, metric))).get("baseline_mean"))
            points.append(
                (
                    system,
                    _num(agg.get("mean")),
                    _num(agg.get("ci_low")),
                    _num(agg.get("ci_high")),
                    base,
                )
            )
        if any(p[1] is not None and math.isfinite(p[1]) for p in points):
            charts.append(_svg_metric(metric, _direction(suite, metric), points, confidence))
    if not charts:
        return ""
    return (
        f"<h3>Means with {confidence:.0%} CI (◇ baseline mean)</h3>"
        f'<div class="plots">{"".join(charts)}</div>'
    )


def _nice_step(span: float, count: int = 4) -> float:
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)


def _axis(values: list[float]) -> tuple[float, float, list[float], int]:
    """Domain (lo, hi), tick positions and tick decimals for `values`."""
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        pad = abs(lo) * 0.1 or 0.01
        lo, hi = lo - pad, hi + pad
    step = _nice_step(hi - lo)
    start, stop = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    ticks = [k * step for k in range(start, stop + 1)]
    decimals = 0
    while decimals < 12 and abs(round(step, decimals) - step) > step * 1e-6:
        decimals += 1
    return ticks[0], ticks[-1], ticks, decimals


def _svg_metric(
    metric: str,
    direction: str | None,
    points: list[tuple[str, float | None, float | None, float | None, float | None]],
    confidence: float,
) -> str:
    """Per-system mean (dot) with CI whisker and baseline mean (diamond) on one axis."""
    values = [v for p in points for v in p[1:] if v is not None and math.isfinite(v)]
    lo, hi, ticks, decimals = _axis(values)
    left, width, row_h, top = 120, 230, 22, 26
    height = top + row_h * len(points) + 26
    scale = width / (hi - lo)

    def x(v: float) -> float:
        return round(left + (v - lo) * scale, 1)

    out = [
        f'<svg class="plot" width="{left + width + 24}" height="{height}" role="img" '
        f'aria-label="{_esc(metric)} by system">',
        f'<text class="ptitle" x="4" y="15">{_esc(metric)}</text>'
        f'<text class="pdir" x="{left + width}" y="15" text-anchor="end">'
        f"{_esc(_direction_label(direction))}</text>",
    ]
    axis_y = top + row_h * len(points)
    for t in ticks:
        out.append(
            f'<line class="grid" x1="{x(t)}" x2="{x(t)}" y1="{top - 4}" y2="{axis_y}"/>'
            f'<text class="tick" x="{x(t)}" y="{axis_y + 14}" text-anchor="middle">'
            f"{t:.{decimals}f}</text>"
        )
    for row, (system, mean, low, high, base) in enumerate(points):
        y = top + row_h * row + row_h / 2
        label = system if len(system) <= 18 else system[:17] + "…"
        tip = (
            f"{system} {metric}: mean {_fmt(mean)} [{_fmt(low)}, {_fmt(high)}] "
            f"{confidence:.0%} CI" + (f", baseline {_fmt(base)}" if base is not None else "")
        )
        out.append(
            f"<g><title>{_esc(tip)}</title>"
            f'<text class="sys" x="{left - 8}" y="{y + 4}" text-anchor="end">'
            f"{_esc(label)}</text>"
        )
        if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
            out.append(
                f'<line class="whisker" x1="{x(low)}" x2="{x(high)}" y1="{y}" y2="{y}"/>'
                f'<line class="whisker" x1="{x(low)}" x2="{x(low)}" y1="{y - 5}" y2="{y + 5}"/>'
                f'<line class="whisker" x1="{x(high)}" x2="{x(high)}" y1="{y - 5}" y2="{y + 5}"/>'
            )
        if base is not None and math.isfinite(base):
            bx = x(base)
            out.append(
                f'<path class="base" d="M{bx} {y - 6}L{bx + 6} {y}L{bx} {y + 6}L{bx - 6} {y}Z"/>'
            )
        if mean is not None and math.isfinite(mean):
            out.append(f'<circle class="dot" cx="{x(mean)}" cy="{y}" r="4"/>')
        out.append("</g>")
    out.append(
        f'<line class="axis" x1="{left}" x2="{left + width}" y1="{axis_y}" y2="{axis_y}"/></svg>'
    )
    return "".join(out)


# --------------------------------------------------------------------------- per-case data


class _Blobs:
    """The data blocks of the page: ``<script>`` elements the page's script reads by id."""

    def __init__(self) -> None:
        # (id, JSON text) for plain blocks, (id, UTF-8 bytes) for blocks still to pack
        self._parts: list[tuple[str, str | bytes]] = []

    def json(self, ident: str, data: Any) -> None:
        self._parts.append((ident, _script_json(data)))

    def packed(self, ident: str, data: Any) -> None:
        """Raw deflate + base85 (alphabet without ``<>&``), for the browser's
        ``DecompressionStream("deflate-raw")``; compressed in `render`, in parallel."""
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        self._parts.append((ident, raw.encode("utf-8", "replace")))

    def render(self) -> str:
        raw = [data for _, data in self._parts if isinstance(data, bytes)]
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            deflated = iter(list(pool.map(_deflate, raw)))  # zlib releases the GIL
        out = []
        for ident, data in self._parts:
            if isinstance(data, bytes):
                text = base64.b85encode(next(deflated)).decode("ascii").translate(_B85_SAFE)
                kind = "application/x-doceval-deflate-b85"
            else:
                text, kind = data, "application/json"
            out.append(f'<script type="{kind}" id="{ident}">{text}</script>\n')
        return "".join(out)


def _deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(_DEFLATE_LEVEL, zlib.DEFLATED, -15, 9)
    return compressor.compress(data) + compressor.flush()


def _cases_block(index: int, suite: Mapping[str, Any], blobs: _Blobs) -> str:
    results = _mappings(suite.get("results"))
    if not results:
        return '<h3>Cases</h3><p class="empty">No per-case results.</p>'
    metrics = _row_metrics(suite)
    chunks, row_chunk = _detail_chunks(results)
    rows_id, prefix = f"doceval-rows-{index}", f"doceval-s{index}-d"
    blobs.json(rows_id, _rows_payload(suite, results, metrics, row_chunk))
    pack = sum(c["size"] for c in chunks) > INLINE_LIMIT
    for number, chunk in enumerate(chunks):
        data = {key: chunk[key] for key in ("refs", "scripts", "rows")}
        (blobs.packed if pack else blobs.json)(f"{prefix}{number}", data)
    counts = _outcome_counts(suite)
    options = "".join(
        f'<option value="{_esc(o)}">{_esc(o)} ({counts[o]:,})</option>'
        for o in [*(o for o in _OUTCOMES if o in counts), *sorted(set(counts) - set(_OUTCOMES))]
    )
    not_passed = sum(n for o, n in counts.items() if o != "passed")
    heads = "".join(
        f'<th class="num" data-key="m{i}"><button type="button">{_esc(m)}</button></th>'
        for i, m in enumerate(metrics)
    )
    return (
        f"<h3>Cases ({len(results):,}): click a row for its details and diff</h3>"
        f'<div class="cases" data-rows="{rows_id}" data-prefix="{prefix}">'
        '<div class="toolbar"><label>Outcome <select class="f-outcome">'
        f'<option value="">all ({len(results):,})</option>'
        f'<option value="!passed">not passed ({not_passed:,})</option>{options}</select></label>'
        ' <label>Filter <input type="search" class="f-text" placeholder="case, system, message">'
        '</label> <span class="count"></span></div>'
        '<table class="case-table"><thead><tr>'
        '<th data-key="case"><button type="button">case</button></th>'
        '<th data-key="system"><button type="button">system</button></th>'
        '<th data-key="outcome"><button type="button">outcome</button></th>'
        f'{heads}<th data-key="message"><button type="button">message</button></th>'
        "</tr></thead><tbody></tbody></table>"
        '<p><button type="button" class="more" hidden>show more</button> '
        '<button type="button" class="all" hidden>show all</button></p></div>'
    )


def _rows_payload(
    suite: Mapping[str, Any],
    results: list[Mapping[str, Any]],
    metrics: list[str],
    row_chunk: list[int],
) -> dict[str, Any]:
    """The per-case table as compact JSON: names once, then one short array per row:
    ``[case, system, outcome, values, flags, message, chunk, has_diff]`` where case, system and
    outcome index the name lists and flags has one character per metric against the row's
    baseline: ``+`` worse, ``-`` better, ``=`` same, ``~`` changed (direction unknown),
    ``.`` no baseline."""
    cases: dict[str, int] = {}
    systems: dict[str, int] = {}
    outcomes: dict[str, int] = {}
    directions = [_direction(suite, m) for m in metrics]
    flag_of = {"worse": "+", "better": "-", "same": "=", "changed": "~", "": "."}
    rows = []
    for number, row in enumerate(results):
        values = _mapping(row.get("metrics"))
        baseline = _mapping(row.get("baseline"))
        flags = ""
        for metric, direction in zip(metrics, directions, strict=True):
            current, base = _num(values.get(metric)), _num(baseline.get(metric))
            change = current - base if current is not None and base is not None else None
            flags += flag_of[_judge(change, direction)]
        message = row.get("message")
        message = None if message is None else str(message)
        if message and len(message) > ROW_MESSAGE_CHARS:
            message = message[: ROW_MESSAGE_CHARS - 1] + "…"
        rows.append(
            [
                cases.setdefault(str(row.get("case", "")), len(cases)),
                systems.setdefault(str(row.get("system", "")), len(systems)),
                outcomes.setdefault(str(row.get("outcome") or "unknown"), len(outcomes)),
                [_row_number(values.get(m)) for m in metrics],
                flags,
                message,
                row_chunk[number],
                1 if _diff_ops(row) is not None else 0,
            ]
        )
    return {
        "metrics": metrics,
        "dirs": directions,
        "cases": list(cases),
        "systems": list(systems),
        "outcomes": list(outcomes),
        "rows": rows,
    }


def _diff_ops(row: Mapping[str, Any]) -> list[Any] | None:
    ops = _mapping(row.get("diff")).get("ops")
    return ops if isinstance(ops, list) else None


def _detail(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a row's detail panel shows, apart from the diff. Metric values keep 6 significant
    digits (the panel shows 4 decimals; the JSON report has them all)."""
    out: dict[str, Any] = {}
    for key in ("nodeid", "message", "metrics", "baseline", "counts"):
        if row.get(key) is not None:
            out[key] = _plain(row[key], 6)
    # Kind-specific counts (structure TP/FP/FN) are drawn as count tables beside S/D/I.
    extra = _mapping(_mapping(row.get("details")).get("structure_counts"))
    if extra:
        counts = dict(_mapping(out.get("counts")))
        counts.update({f"structure_{kind}": _plain(value, 6) for kind, value in extra.items()})
        out["counts"] = counts
    notes = _strings(row.get("notes"))
    if notes:
        out["notes"] = notes
    return out


def _detail_chunks(results: list[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[int]]:
    """Row details packed into chunks of about CHUNK_BYTES, all rows of a case in one chunk
    (their diffs share the case's truth text): the chunks and each row's chunk number."""
    by_case: dict[str, list[int]] = {}
    for number, row in enumerate(results):
        by_case.setdefault(str(row.get("case", "")), []).append(number)
    chunks: list[dict[str, Any]] = []
    row_chunk = [0] * len(results)
    current = _new_chunk()
    for numbers in by_case.values():
        _add_case(current, results, numbers)
        for number in numbers:
            row_chunk[number] = len(chunks)
        if current["size"] >= CHUNK_BYTES:
            chunks.append(current)
            current = _new_chunk()
    if current["rows"]:
        chunks.append(current)
    return chunks, row_chunk


def _new_chunk() -> dict[str, Any]:
    """Truth texts, edit scripts and row details apart: each compresses better on its own."""
    return {"refs": [], "scripts": [], "rows": {}, "size": 0}


def _add_case(chunk: dict[str, Any], results: list[Mapping[str, Any]], numbers: list[int]) -> None:
    """Add the rows of one case to `chunk`; diffs on the same metric share one truth text."""
    details = {number: _detail(results[number]) for number in numbers}
    groups: dict[str, list[int]] = {}
    for number in numbers:
        if _diff_ops(results[number]) is not None:
            metric = str(_mapping(results[number].get("diff")).get("metric") or "")
            groups.setdefault(metric, []).append(number)
    size = 0
    for metric, members in groups.items():
        encoded = [_pieces(_diff_ops(results[n]) or []) for n in members]
        shared = [(n, e) for n, e in zip(members, encoded, strict=True) if e is not None]
        reference = _merge([e[0] for _, e in shared]) if shared else None
        if reference is not None:
            chunk["refs"].append(reference)
            size += sum(len(s) if isinstance(s, str) else 8 for s in reference)
            for number, (_, script) in shared:
                chunk["scripts"].append(script)
                details[number]["diff"] = {
                    "metric": metric,
                    "g": len(chunk["refs"]) - 1,
                    "s": len(chunk["scripts"]) - 1,
                }
                size += _script_size(script)
        for number in members:
            if "diff" not in details[number]:  # malformed, astral or inconsistent: as given
                ops = _plain(_diff_ops(results[number]))
                details[number]["diff"] = {"metric": metric, "ops": ops}
                size += len(json.dumps(ops, ensure_ascii=False))
    for number, detail in details.items():
        chunk["rows"][str(number)] = detail
        size += 200 + len(str(detail.get("message") or "")) + 40 * len(detail.get("metrics", {}))
    chunk["size"] += size


def _script_size(script: list[Any]) -> int:
    """Rough JSON size of an edit script: numbers and short output strings."""
    return 8 * len(script) + sum(
        len(x[-1]) for x in script if type(x) is list and type(x[-1]) is str
    )


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value >= 0 else None


def _pieces(ops: list[Any]) -> tuple[list[tuple[int, str]], list[Any]] | None:
    """The truth text a diff shows, as (position, text) runs, and the diff as an edit script
    into that text: ``n > 0`` n equal characters, ``n <= 0`` -n elided ones, ``[n]`` n deleted,
    ``[n, hyp]`` n substituted by hyp, ``[hyp]`` hyp inserted. None if an op is malformed
    or its truth holds a character beyond U+FFFF (JavaScript counts those as two)."""
    position, end = 0, -1
    runs: list[tuple[int, list[str]]] = []
    script: list[Any] = []
    for op in ops:
        if not isinstance(op, list | tuple) or len(op) < 2:
            return None
        kind, first = op[0], op[1]
        if kind == "…":
            count = _count(first)
            if count is None:
                return None
            script.append(-count)
            position += count
            continue
        if not isinstance(first, str):
            return None
        if kind == "I":
            script.append([first])
            continue
        if not (first.isascii() or max(first, default="") <= "\uffff"):
            return None
        if kind == "S":
            if len(op) < 3 or not isinstance(op[2], str):
                return None
            script.append([len(first), op[2]])
        elif kind == "D":
            script.append([len(first)])
        elif kind == "=":
            if not first:
                continue
            script.append(len(first))
        else:
            return None
        if first:
            if runs and end == position:
                runs[-1][1].append(first)
            else:
                runs.append((position, [first]))
            position += len(first)
            end = position
    return [(start, "".join(parts)) for start, parts in runs], script


def _merge(run_lists: list[list[tuple[int, str]]]) -> list[str | int] | None:
    """One truth text from the runs several diffs show of it, as text pieces and gap lengths
    (``["abc", 120, "def"]``); None if two diffs disagree about a character."""
    merged: list[list[Any]] = []
    for start, text in sorted((run for runs in run_lists for run in runs), key=lambda r: r[0]):
        if merged and start <= merged[-1][0] + len(merged[-1][1]):
            run_start, run_text = merged[-1]
            offset = start - run_start
            overlap = min(len(run_text) - offset, len(text))
            if run_text[offset : offset + overlap] != text[:overlap]:
                return None
            if overlap < len(text):
                merged[-1][1] = run_text + text[overlap:]
        else:
            merged.append([start, text])
    out: list[str | int] = []
    position = 0
    for start, text in merged:
        if start > position:
            out.append(start - position)
        out.append(text)
        position = start + len(text)
    return out


# --------------------------------------------------------------------------- CSS and JS
# Kept as files beside this module (package data) so each is read and edited as what it is.

_ASSETS = resources.files("pytest_doceval.report") / "assets"
_CSS = "\n" + (_ASSETS / "report.css").read_text(encoding="utf-8")
_JS = "\n" + (_ASSETS / "report.js").read_text(encoding="utf-8")
