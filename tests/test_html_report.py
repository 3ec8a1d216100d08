"""The HTML report without a browser: content, escaping, missing parts, data blocks, atomicity.

The page's own script is exercised in a real browser by ``test_html_chromium.py``; here the
data it reads (JSON blocks, packed blocks, the shared-truth diff encoding, view blocks) is
decoded in Python and checked against the report it came from. The reports are built by hand
to the report contract: a documents-like suite (specs, views, no labels) and a suite of a kind
the HTML code has never heard of (labels, unknown views, unknown analyses).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import io
import json
import os
import re
import tokenize
import zlib
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.report.html import cases as html_cases
from pytest_doceval.report.html import render_html, write_html

XSS = "<script>alert(1)</script>"
BLOB = re.compile(r'<script type="([^"]+)" id="([^"]+)">(.*?)</script>', re.S)
PACKAGE = Path(__file__).resolve().parents[1] / "pytest_doceval" / "report" / "html"
ASSETS = PACKAGE.parent / "assets"


def edit_counts(hits: int, s: int, d: int, i: int) -> dict[str, int]:
    return {
        "hits": hits,
        "substitutions": s,
        "deletions": d,
        "insertions": i,
        "reference_length": hits + s + d,
    }


def delta(system: str, metric: str, diff: float, low: float, high: float, verdict: str) -> dict:
    return {
        "system": system,
        "metric": metric,
        "n": 5,
        "current_mean": 0.5 + diff,
        "baseline_mean": 0.5,
        "mean_diff": diff,
        "ci_low": low,
        "ci_high": high,
        "p_ttest": 0.04 if verdict != "unchanged" else 0.4,
        "p_wilcoxon": 0.06,
        "significant": verdict != "unchanged",
        "verdict": verdict,
        "method": "paired-bootstrap",
    }


def agg(mean: float, low: float, high: float, n: int = 5, **extra: Any) -> dict[str, Any]:
    return {
        "mean": mean,
        "ci_low": low,
        "ci_high": high,
        "n": n,
        "method": "percentile-bootstrap",
        "small_n": n < 10,
        **extra,
    }


def documents_report() -> dict[str, Any]:
    """Two systems, three cases, every optional part present, hostile strings everywhere."""
    rows = [
        {
            "suite": "papers",
            "case": "tidal-storage",
            "system": "pymupdf",
            "labels": {},
            "nodeid": "cases/papers/suite.toml::tidal-storage[pymupdf]",
            "outcome": "failed",
            "message": f"cer 0.153 > baseline 0.121 + 0.5pp {XSS}",
            "metrics": {"cer": 0.153, "wer": 0.2, "structure_f1": 0.75, "structure_f1_table": 1},
            "baseline": {"cer": 0.121, "wer": 0.2, "structure_f1": 0.8},
            "counts": {"cer": edit_counts(980, 5, 3, 4)},
            "details": {"structure_counts": {"all": {"tp": 3, "fp": 1, "fn": 0}}},
            "notes": [f"row note {XSS}"],
            "views": {
                "text_diff": {
                    "metric": "cer",
                    "ops": [
                        ["=", f"truth {XSS} shared text "],
                        ["S", "ref", f"hyp {XSS}"],
                        ["D", f"gone {XSS}"],
                        ["…", 1234],
                        ["=", "tail context"],
                        ["I", f" extra {XSS}"],
                    ],
                },
                "output_diff": {
                    "ops": [["=", "hyp "], ["S", "ok", f"bad {XSS}"], ["…", 40]],
                    "previous_cache_key": "abc123",
                },
            },
        },
        {
            "suite": "papers",
            "case": "tidal-storage",
            "system": "rapidocr",
            "labels": {},
            "nodeid": "cases/papers/suite.toml::tidal-storage[rapidocr]",
            "outcome": "passed",
            "message": None,
            "metrics": {"cer": 0.01, "wer": 0.05, "structure_f1": 0.9},
            "baseline": {"cer": 0.02, "wer": 0.05, "structure_f1": 0.9},
            "views": {
                "text_diff": {
                    "metric": "cer",
                    "ops": [
                        ["=", f"truth {XSS} sha"],
                        ["S", "r", "R"],
                        ["=", f"ed text refgone {XSS}"],
                        ["…", 1234],
                        ["=", "tail context"],
                    ],
                }
            },
        },
        {
            "suite": "papers",
            "case": f"case {XSS}",
            "system": "pymupdf",
            "labels": {},
            "outcome": "skipped",
            "message": "no output",
            "metrics": {},
            "baseline": None,
        },
    ]
    return {
        "schema": "doceval-report/1",
        "created": "2026-11-22T10:00:00Z",
        "environment": {
            "python": "3.11.7",
            "platform": "Linux",
            "packages": {"pymupdf": "1.26", XSS: "1.0"},
        },
        "config": {"bootstrap_resamples": 1000, "confidence": 0.95, "seed": 0},
        "interrupted": False,
        "suites": {
            "papers": {
                "kind": "documents",
                "path": "cases/papers",
                "scoring_id": "fair-v1",
                "language": "en",
                "normalization": "fair-v1",
                "systems": ["pymupdf", "rapidocr"],
                "metrics": {
                    "cer": {
                        "direction": "lower",
                        "headline": True,
                        "counts": "cer",
                        "binary": False,
                        "description": f"character error rate {XSS}",
                    },
                    "wer": {"direction": "lower", "headline": True, "description": "word errors"},
                    "structure_f1": {
                        "direction": "higher",
                        "headline": True,
                        "description": "headings, lists and tables found",
                    },
                    "structure_f1_table": {"direction": "higher", "headline": False},
                },
                "analysis_keys": ["comparisons"],
                "notes": [f"rapidocr does not read Korean {XSS}", "see https://example.org"],
                "results": rows,
                "aggregates": {
                    "pymupdf": {
                        "cer": agg(0.012, 0.008, 0.017, corpus=0.011),
                        "structure_f1": agg(0.8, 0.7, 0.9),
                        "structure_f1_table": agg(1.0, 1.0, 1.0),
                    },
                    "rapidocr": {
                        "cer": agg(0.05, 0.03, 0.07, n=12),
                        "structure_f1": agg(0.6, 0.5, 0.7, n=12),
                    },
                },
                "comparisons": [
                    {
                        "a": "pymupdf",
                        "b": "rapidocr",
                        "metric": "cer",
                        "n": 5,
                        "mean_diff": -0.038,
                        "ci_low": -0.05,
                        "ci_high": -0.02,
                        "p_ttest": 0.003,
                        "p_wilcoxon": 0.06,
                        "cohens_d": -1.2,
                        "p_bonferroni": 0.009,
                        "p_mcnemar": 0.5,
                    },
                ],
                "baseline_deltas": [
                    delta("pymupdf", "cer", 0.001, 0.0005, 0.003, "worse"),
                    delta("rapidocr", "cer", -0.002, -0.004, 0.001, "unchanged"),
                    delta("pymupdf", "structure_f1", 0.0, 0.0, 0.0, "unchanged"),
                    delta("rapidocr", "structure_f1", 0.05, 0.01, 0.09, "better"),
                ],
                "gates": [
                    {
                        "system": "pymupdf",
                        "metric": "cer",
                        "rule": "significant:+0.5pp",
                        "passed": False,
                        "evaluated": True,
                        "message": f"cer regressed {XSS}",
                    },
                    {
                        "system": "rapidocr",
                        "metric": "cer",
                        "rule": "significant:+0.5pp",
                        "passed": True,
                        "evaluated": True,
                        "message": "no significant regression",
                    },
                ],
                "unused_baseline": [f"old-case[pymupdf] {XSS}"],
                "baseline_changes": [],
            }
        },
    }


def unknown_kind_report() -> dict[str, Any]:
    """A kind nobody told the HTML about: a higher-is-better metric that improved, labels,
    views and analyses without renderers, and hostile text in all of them."""
    rows = []
    for number in range(4):
        for model, goodness in (("m-small", 0.6), ("m-large", 0.8)):
            rows.append(
                {
                    "suite": "quiz",
                    "case": f"q{number}",
                    "system": f"{model}-A",
                    "labels": {"model": model, "track": "hard" if number % 2 else f"easy {XSS}"},
                    "nodeid": f"cases/quiz/suite.toml::q{number}[{model}-A]",
                    "outcome": "passed",
                    "message": None,
                    "metrics": {"goodness": goodness, "seconds": 1.5, "hidden_score": 0.1},
                    "baseline": {"goodness": goodness - 0.1},
                    "views": {
                        "answer": {"raw": f"B {XSS}", "parsed": "B", "correct": True},
                        "trace": {"steps": [{"tool": XSS, "ok": True}], "depth": 2},
                    },
                    "details": {"why": f"because {XSS}"},
                }
            )
    return {
        "schema": "doceval-report/1",
        "config": {"confidence": 0.9},
        "interrupted": False,
        "suites": {
            "quiz": {
                "kind": f"trivia {XSS}",
                "path": "cases/quiz",
                "scoring_id": f"seed-001@{XSS}",
                "systems": ["m-small-A", "m-large-A"],
                "metrics": {
                    "goodness": {
                        "direction": "higher",
                        "headline": True,
                        "binary": False,
                        "description": f"share of right answers {XSS}",
                    },
                    "seconds": {"direction": "lower", "headline": True, "description": "latency"},
                    "hidden_score": {"direction": "higher", "headline": False},
                },
                "analysis_keys": ["by_track", "odd_analysis", "absent_analysis"],
                "by_track": [
                    {"track": f"easy {XSS}", "system": "m-large-A", "goodness": 0.8, "n": 2},
                    {"track": "hard", "system": "m-large-A", "goodness": None, "n": 2},
                ],
                "odd_analysis": {"nested": {"deeper": [1, 2, f"{XSS}"]}},
                "results": rows,
                "aggregates": {
                    "m-small-A": {"goodness": agg(0.6, 0.5, 0.7, n=4)},
                    "m-large-A": {"goodness": agg(0.8, 0.7, 0.9, n=4)},
                },
                "baseline_deltas": [
                    delta("m-small-A", "goodness", 0.1, 0.05, 0.15, "better"),
                    # no verdict: the page reads the direction from the spec
                    {**delta("m-large-A", "goodness", 0.1, 0.05, 0.15, "better"), "verdict": None},
                ],
                "gates": [],
            }
        },
    }


def blobs(document: str) -> dict[str, Any]:
    """Every data block of the page, decoded as the page's script decodes it."""
    out = {}
    for kind, ident, body in BLOB.findall(document):
        if kind == "application/json":
            out[ident] = json.loads(body)
        else:
            assert kind == "application/x-doceval-deflate-b85"
            packed = base64.b85decode(body.translate(str.maketrans(".,:", "<>&")))
            out[ident] = json.loads(zlib.decompress(packed, -15).decode("utf-8"))
    return out


def expand(diff: dict[str, Any], chunk: dict[str, Any]) -> list[list[Any]]:
    """The ops of a diff reference from a detail chunk (Python twin of the page's `diffOps`)."""
    if "ops" in diff:
        return diff["ops"]
    segments, position = [], 0
    for piece in chunk["refs"][diff["g"]]:
        if isinstance(piece, int):
            position += piece
        else:
            segments.append((position, piece))
            position += len(piece)

    def take(at: int, n: int) -> str:
        for start, text in segments:
            if start <= at and at + n <= start + len(text):
                return text[at - start : at - start + n]
        raise AssertionError(f"no truth text at {at}+{n}")

    ops: list[list[Any]] = []
    at = 0
    for x in chunk["scripts"][diff["s"]]:
        if isinstance(x, int):
            if x > 0:
                ops.append(["=", take(at, x)])
                at += x
            else:
                ops.append(["…", -x])
                at -= x
        elif isinstance(x[0], str):
            ops.append(["I", x[0]])
        else:
            ops.append(["S", take(at, x[0]), x[1]] if len(x) > 1 else ["D", take(at, x[0])])
            at += x[0]
    return ops


def details(document: str, suite: int = 0) -> dict[int, tuple[dict[str, Any], dict[str, Any]]]:
    """Row number -> (detail, chunk) for one suite (its index in the report)."""
    out = {}
    for ident, chunk in blobs(document).items():
        if ident.startswith(f"doceval-s{suite}-d"):
            for number, detail in chunk["rows"].items():
                out[int(number)] = (detail, chunk)
    return out


def view_block(detail: dict[str, Any], title_part: str) -> dict[str, Any]:
    found = [b for b in detail.get("views", []) if title_part in b["title"]]
    assert len(found) == 1, [b["title"] for b in detail.get("views", [])]
    return found[0]


def without_empty_equals(ops: list[list[Any]]) -> list[list[Any]]:
    return [list(op) for op in ops if not (op[0] == "=" and op[1] == "")]


def between(document: str, start: str, end: str) -> str:
    part = document[document.index(start) :]
    return part[: part.index(end)]


def page_text(document: str) -> str:
    """The server-rendered body of the page (without the stylesheet and data blocks)."""
    return document[document.index("<body>") : document.index("<script")]


@pytest.fixture(params=["plain", "packed"])
def packing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with detail chunks as plain JSON and as deflate+base85."""
    monkeypatch.setattr(html_cases, "INLINE_LIMIT", 0 if request.param == "packed" else 10**9)
    return request.param


def test_renders_a_complete_document() -> None:
    document = render_html(documents_report())
    assert document.startswith("<!DOCTYPE html>")
    assert document.rstrip().endswith("</html>")
    for text in (
        "papers",
        "fair-v1",
        "documents",
        "cases/papers",
        "Run summary",
        "What changed against the baseline",
        "Pairwise comparisons",
        "Suite gates",
        "<svg",
        "doceval-rows-0",
    ):
        assert text in document, text
    assert "failed 1" in document and "passed 1" in document and "skipped 1" in document
    assert "interrupted" not in page_text(document).lower()


@pytest.mark.parametrize("build", [documents_report, unknown_kind_report])
def test_hostile_strings_are_never_markup(build: Any, packing: str) -> None:
    document = render_html(build())
    assert XSS not in document
    assert "alert(1)</script" not in document
    # Every <script> element is the page's own: one code block plus data blocks.
    tags = re.findall(r"<script\b[^>]*>", document)
    assert tags.count("<script>") == 1
    for tag in tags:
        assert tag == "<script>" or re.fullmatch(
            r'<script type="application/(json|x-doceval-deflate-b85)" id="doceval-[a-z0-9-]+">',
            tag,
        )
    # Data blocks hold no '<', '>' or '&' at all, so nothing in them can end the element.
    for _, _, body in BLOB.findall(document):
        assert not set(body) & set("<>&")
    # Server-rendered strings are escaped where they show.
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert page_text(document).count(escaped) >= 3
    # The data still holds the strings, intact, for the page to show as text.
    data = json.dumps(blobs(document), ensure_ascii=False)
    assert data.count(XSS) >= 3


def test_documents_strings_reach_the_page_escaped(packing: str) -> None:
    document = render_html(documents_report())
    assert "rapidocr does not read Korean &lt;script&gt;alert(1)&lt;/script&gt;" in document
    assert "cer regressed &lt;script&gt;alert(1)&lt;/script&gt;" in document
    assert "character error rate &lt;script&gt;" in document  # the legend's description
    data = json.dumps(blobs(document), ensure_ascii=False)
    for where in ("case ", "hyp ", "gone ", " extra ", "row note ", "bad "):
        assert where + XSS in data, where


def test_summary_table_numbers() -> None:
    document = render_html(documents_report())
    summary = between(document, '<table class="summary">', "</table>")
    assert '<div class="mean">0.0120</div>' in summary
    assert '<div class="ci">[0.0080, 0.0170]</div>' in summary
    assert "n=5 · corpus 0.0110" in summary
    assert "↓ lower is better" in summary and "↑ higher is better" in summary
    assert '<div class="method">CI: percentile-bootstrap</div>' in summary
    text = " ".join(re.sub(r"<[^>]+>", " ", summary).split())
    # pymupdf cer got significantly worse: red, bold, marked, the change and its CI as numbers
    assert '<div class="delta worse sig"' in summary
    assert "▲ +0.0010 [+0.0005, +0.0030] vs baseline significant" in text
    # structure_f1 (higher is better) up significantly for rapidocr: better, arrow up
    assert '<div class="delta better sig"' in summary
    assert "▲ +0.0500 [+0.0100, +0.0900] vs baseline significant" in text
    # a change within its CI is muted, its numbers still shown, and says why it is not a verdict
    assert '<div class="delta better ns"' in summary
    assert "-0.0020 [-0.0040, +0.0010] vs baseline not significant at n = 5" in text
    assert "≈ baseline" not in summary
    assert summary.count("sigmark") == 2
    shown = re.sub(r' title="[^"]*"', "", summary)
    assert "+0.0000" not in shown  # a change that rounds to zero is unsigned


def test_a_baseline_change_at_n_1_is_not_testable() -> None:
    report = documents_report()
    suite = report["suites"]["papers"]
    for entry in suite["baseline_deltas"]:
        entry.update(n=1, significant=False, verdict="unchanged", ci_low=None, ci_high=None)
    text = " ".join(re.sub(r"<[^>]+>", " ", page_text(render_html(report))).split())
    assert "+0.0010 [n/a, n/a] vs baseline not testable (n = 1)" in text
    assert "not significant at n = 1" not in text


def test_small_n_is_marked_with_an_explanation() -> None:
    summary = between(render_html(documents_report()), '<table class="summary">', "</table>")
    # pymupdf has n=5 (small), rapidocr n=12 (not)
    pymupdf = between(summary, "<th>pymupdf</th>", "</tr>")
    rapidocr = between(summary, "<th>rapidocr</th>", "</tr>")
    assert pymupdf.count('class="badge small-n" title="Only 5 cases') == 2
    assert "small-n" not in rapidocr


def test_headline_metrics_come_from_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    document = render_html(documents_report())
    summary = between(document, '<table class="summary">', "</table>")
    heads = re.findall(r"<th>([a-z_0-9]+)<div", summary)
    assert heads == ["cer", "wer", "structure_f1"]  # declaration order; not the non-headline one
    legend = between(document, '<table class="metric-legend">', "</table>")
    assert re.findall(r"<td><b>([a-z_0-9]+)</b></td>", legend) == heads
    assert "headings, lists and tables found" in legend
    assert "structure_f1_table" not in page_text(document)
    rows = blobs(document)["doceval-rows-0"]
    assert rows["metrics"] == ["cer", "wer", "structure_f1"]
    monkeypatch.setattr(html_cases, "ROW_METRICS", 2)
    rows = blobs(render_html(documents_report()))["doceval-rows-0"]
    assert rows["metrics"] == ["cer", "wer"]
    assert all(len(row[3]) == 2 and len(row[4]) == 2 for row in rows["rows"])


def _string_literals(path: Path) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [t.string for t in tokens if t.type == tokenize.STRING]


def test_the_html_code_names_no_metric() -> None:
    """Everything about a metric comes from its spec: no metric name in the code or assets."""
    names = re.compile(r"\b(cer|wer|body_cer|cer_raw|structure_f1|structure)\b")
    for path in PACKAGE.glob("*.py"):
        assert "PER_TYPE_PREFIXES" not in path.read_text(encoding="utf-8")
        for literal in _string_literals(path):
            if not literal.startswith(('"""', "'''")):  # docstrings may give examples
                assert not names.search(literal), (path.name, literal)
    for asset in ("report.js", "report.css"):
        assert not names.search((ASSETS / asset).read_text(encoding="utf-8")), asset


def test_metric_without_a_spec_is_neutral() -> None:
    """An old report without specs: every metric shown, none given a direction by its name."""
    report = documents_report()
    suite = report["suites"]["papers"]
    del suite["metrics"]
    for entry in suite["baseline_deltas"]:
        entry.pop("verdict")
    document = render_html(report)
    summary = between(document, '<table class="summary">', "</table>")
    assert "lower is better" not in summary and "higher is better" not in summary
    assert summary.count("direction not stated") == 3  # cer, structure_f1, structure_f1_table
    assert '<div class="delta changed sig"' in summary  # significant, but which way is unknown
    assert "worse" not in summary and "better sig" not in summary
    rows = blobs(document)["doceval-rows-0"]
    assert rows["dirs"] == [None, None, None] and rows["directions"] == {}
    assert rows["metrics"] == ["cer", "structure_f1", "structure_f1_table"]  # as measured
    assert rows["rows"][0][4] == "~~."  # changed, changed, no baseline


def test_unknown_kind_renders(packing: str) -> None:
    document = render_html(unknown_kind_report())
    text = page_text(document)
    # a higher-is-better improvement is better: from the verdict, and from the spec without one
    summary = between(document, '<table class="summary">', "</table>")
    assert summary.count('<div class="delta better sig"') == 2
    assert summary.count('▲ <span class="diff-mean">+0.1000</span>') == 2
    changed = between(document, '<section class="what-changed">', "</section>")
    lead = changed.split("<details")[0]
    assert lead.count('<td class="verdict delta better sig">▲ better</td>') == 2
    assert "worse" not in lead
    # headline metrics, in declaration order; the legend escapes descriptions
    assert re.findall(r"<th>([a-z_]+)<div", summary) == ["goodness", "seconds"]
    assert "share of right answers &lt;script&gt;" in text
    # unknown analyses: a list of flat dicts is a table, anything else escaped JSON
    by_track = between(document, '<h3>by track <span class="key">(by_track)</span>', "</table>")
    assert "<th>track</th><th>system</th><th>goodness</th><th>n</th>" in by_track
    assert "easy &lt;script&gt;alert(1)&lt;/script&gt;" in by_track
    assert '<td class="num">0.8000</td>' in by_track and "<td>n/a</td>" in by_track
    odd = between(document, '<span class="key">(odd_analysis)</span>', "</pre>")
    assert '<pre class="json">' in odd and "&lt;script&gt;alert(1)&lt;/script&gt;" in odd
    assert "absent_analysis" not in text  # listed but not in the section: nothing to show
    # labels: a column in the table, and in the details
    rows = blobs(document)["doceval-rows-0"]
    assert rows["labels"][rows["rows"][0][8]] == f"model=m-small, track=easy {XSS}"
    assert '<th data-key="labels">' in document
    detail, _ = details(document)[0]
    assert detail["labels"] == {"model": "m-small", "track": f"easy {XSS}"}
    # unknown views: a flat dict as a key/value table, anything else as JSON text
    answer = view_block(detail, "answer")
    assert answer["t"] == "table" and answer["head"] == ["key", "value"]
    assert ["raw", f"B {XSS}"] in answer["rows"] and ["correct", True] in answer["rows"]
    trace = view_block(detail, "trace")
    assert trace["t"] == "pre" and json.loads(trace["text"])["steps"][0]["tool"] == XSS
    assert detail["extras"] == [
        {
            "t": "table",
            "title": "details",
            "head": ["key", "value"],
            "rows": [["why", f"because {XSS}"]],
        }
    ]


def test_documents_without_labels_has_no_labels_column() -> None:
    document = render_html(documents_report())
    assert 'data-key="labels"' not in document
    rows = blobs(document)["doceval-rows-0"]
    assert rows["labels"] == [] and {len(row) for row in rows["rows"]} == {8}


def test_what_changed_leads_with_significant_changes_worse_first() -> None:
    document = render_html(documents_report())
    section = between(document, '<section class="suite"', "Cases (")
    changed = between(section, '<section class="what-changed">', "</section>")
    assert section.index("What changed") < section.index("Summary")
    lead = changed.split("<details")[0]
    verdicts = re.findall(r'<td class="verdict delta (\w+) sig">', lead)
    assert verdicts == ["worse", "better"]
    worse_row = between(lead, '<td class="verdict delta worse sig">', "</tr>")
    for shown in ("pymupdf", "cer", "+0.0010", "[+0.0005, +0.0030]", "0.040", "0.060"):
        assert shown in worse_row, shown
    assert "2 metrics × systems not significantly changed (within their CIs)." in lead
    assert "0.0000" not in lead  # the unchanged ones are not listed
    full = between(changed, '<details class="all-deltas">', "</details>")
    assert '<details class="all-deltas" open' not in document  # collapsed
    assert full.count("<tr>") == 5  # header + all four deltas
    assert "yes, worse" in full and "yes, better" in full and full.count("<td>no</td>") == 2


def test_nothing_changed_is_one_line() -> None:
    report = documents_report()
    suite = report["suites"]["papers"]
    suite["baseline_deltas"] = [
        delta("pymupdf", "cer", 0.0, 0.0, 0.0, "unchanged"),
    ]
    suite["results"] = [r for r in suite["results"] if r["outcome"] not in ("failed", "error")]
    changed = between(render_html(report), '<section class="what-changed">', "</section>")
    lead = changed.split("<details")[0]
    assert "No metric changed significantly." in lead
    assert "1 metric × system not significantly changed (within its CI)." in lead
    assert "<table" not in lead


def _suite(outcomes: list[str], deltas: list[dict[str, Any]], gates_pass: bool = True) -> dict:
    return {
        "kind": "documents",
        "metrics": {"m": {"direction": "lower", "headline": True}},
        "results": [
            {"case": f"c{n}", "system": "s", "outcome": o, "metrics": {"m": 0.1}}
            for n, o in enumerate(outcomes)
        ],
        "baseline_deltas": deltas,
        "gates": [{"system": "s", "metric": "m", "rule": "r", "passed": gates_pass}],
    }


def test_suites_needing_attention_come_first() -> None:
    report = {
        "suites": {
            "a-calm": _suite(["passed"], [delta("s", "m", 0.0, -0.1, 0.1, "unchanged")]),
            "b-changed": _suite(["passed"], [delta("s", "m", -0.1, -0.2, -0.05, "better")]),
            "c-gate": _suite(["passed"], [], gates_pass=False),
            "d-failed": _suite(["passed", "failed"], []),
            "e-error": _suite(["error"], []),
        }
    }
    document = render_html(report)
    order = re.findall(r'<section class="suite" id="suite-(\d)"><h2>([\w-]+)</h2>', document)
    assert [name for _, name in order] == ["c-gate", "d-failed", "e-error", "b-changed", "a-calm"]
    assert [int(i) for i, _ in order] == [2, 3, 4, 1, 0]  # anchors keep the report's order
    toc = between(document, '<nav class="toc">', "</nav>")
    assert re.findall(r'href="#suite-\d">([\w-]+)</a>', toc) == [n for _, n in order]
    assert toc.count("needs attention") == 3 and toc.count("changed against the baseline") == 1


def test_interrupted_run_has_a_banner() -> None:
    report = documents_report()
    report["interrupted"] = True
    text = page_text(render_html(report))
    banner = between(text, '<div class="interrupted" role="alert">', "</div>")
    assert "This run was interrupted." in banner and "partial" in banner
    assert text.index("interrupted") < text.index("Run summary")


def test_missing_and_non_finite_numbers_show_as_na() -> None:
    report = documents_report()
    suite = report["suites"]["papers"]
    suite["aggregates"]["pymupdf"]["cer"].update(mean=None, ci_low=float("nan"))
    suite["aggregates"]["pymupdf"]["structure_f1"].update(mean=float("inf"), n=None)
    suite["baseline_deltas"][0].update(mean_diff=None, p_ttest=None)
    suite["results"][0]["metrics"].update(cer=None, wer=float("nan"), structure_f1=float("inf"))
    document = render_html(report)
    document.encode("utf-8")
    summary = between(document, '<table class="summary">', "</table>")
    assert summary.count('<div class="mean">n/a</div>') == 2
    assert '<div class="ci">[n/a, 0.0170]</div>' in summary and "n=n/a" in summary
    assert not re.search(r"nan|inf|None", re.sub(r' title="[^"]*"', "", summary), re.I)
    full = between(document, '<details class="all-deltas">', "</details>")
    assert ">n/a<" in full and not re.search(r"nan|None", full)
    data = blobs(document)  # json.loads accepts it: no NaN/Infinity were written
    assert data["doceval-rows-0"]["rows"][0][3] == [None, None, None]
    detail, _ = details(document)[0]
    assert detail["metrics"]["cer"] is None and detail["metrics"]["structure_f1"] is None


def test_outcome_counts_are_the_rows_outcomes() -> None:
    outcomes = ["passed"] * 3 + ["failed"] * 2 + ["error", "skipped", "xfailed"]
    report = {"suites": {"s": _suite(outcomes, [])}}
    document = render_html(report)
    summary = between(document, '<section class="run-summary">', "</section>")
    assert "1 suite, 8 tests" in summary
    assert "1 error, 2 failed, 1 skipped, 3 passed, 1 xfailed" in summary
    assert re.search(r"<title>doceval: 1 error, 2 failed · s</title>", document)
    options = between(document, '<select class="f-outcome">', "</select>")
    for shown in ("all (8)", "not passed (5)", "error (1)", "failed (2)", "passed (3)"):
        assert shown in options, shown


def test_shared_truth_encoding_round_trips(packing: str) -> None:
    report = documents_report()
    document = render_html(report)
    rows = report["suites"]["papers"]["results"]
    found = details(document)
    assert set(found) == {0, 1, 2}
    for number in (0, 1):
        detail, chunk = found[number]
        block = view_block(detail, "truth → output (cer)")
        assert block["t"] == "diff" and (block["from"], block["to"]) == ("truth", "output")
        assert "g" in block["d"], "diffs of one case should share the truth text"
        expected = rows[number]["views"]["text_diff"]["ops"]
        assert expand(block["d"], chunk) == without_empty_equals(expected)
    # the shared truth holds "truth <script>... shared text" once, not once per system
    refs = found[0][1]["refs"]
    assert len(refs) == 1 and sum(piece.count("shared") for piece in refs[0][:1]) == 1
    assert "views" not in found[2][0]


def test_output_diff_is_shown_beside_the_truth_diff(packing: str) -> None:
    report = documents_report()
    detail, chunk = details(render_html(report))[0]
    titles = [b["title"] for b in detail["views"]]
    assert titles == ["Aligned diff: truth → output (cer)", "previous output → this output"]
    block = detail["views"][1]
    assert block["note"] == "where did this change make it worse"
    assert (block["from"], block["to"]) == ("previous output", "this output")
    assert (
        expand(block["d"], chunk)
        == report["suites"]["papers"]["results"][0]["views"]["output_diff"]["ops"]
    )


@pytest.mark.parametrize(
    ("ops_a", "ops_b", "shared"),
    [
        # elided in one, shown in the other: the union is kept
        (
            [["=", "abcdef"], ["…", 20], ["=", "xyz"]],
            [
                ["=", "ab"],
                ["D", "c"],
                ["=", "def"],
                ["=", "0123456789"],
                ["…", 10],
                ["S", "x", "X"],
                ["=", "yz"],
            ],
            True,
        ),
        # two different truths: each diff kept as given
        ([["=", "abc"]], [["=", "abd"]], False),
        # characters beyond U+FFFF count twice in JavaScript: kept as given
        ([["=", "a😀b"]], [["=", "a😀b"]], False),
    ],
    ids=["overlap", "conflict", "astral"],
)
def test_diff_encoding_cases(ops_a: list[list[Any]], ops_b: list[list[Any]], shared: bool) -> None:
    report = {
        "suites": {
            "s": {
                "results": [
                    {
                        "case": "c",
                        "system": system,
                        "outcome": "passed",
                        "views": {"text_diff": {"metric": "m", "ops": ops}},
                    }
                    for system, ops in (("a", ops_a), ("b", ops_b))
                ]
            }
        }
    }
    found = details(render_html(report))
    for number, ops in ((0, ops_a), (1, ops_b)):
        detail, chunk = found[number]
        block = view_block(detail, "truth → output")
        assert ("g" in block["d"]) is shared
        assert expand(block["d"], chunk) == without_empty_equals(ops)


def test_details_are_chunked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_cases, "CHUNK_BYTES", 1)
    data = blobs(render_html(documents_report()))
    chunk_ids = sorted(i for i in data if i.startswith("doceval-s0-d"))
    assert len(chunk_ids) == 2  # one per case: rows of a case stay together
    assert [row[6] for row in data["doceval-rows-0"]["rows"]] == [0, 0, 1]


def test_row_table_flags_follow_direction() -> None:
    rows_blob = blobs(render_html(documents_report()))["doceval-rows-0"]
    assert rows_blob["metrics"] == ["cer", "wer", "structure_f1"]
    assert rows_blob["dirs"] == ["lower", "lower", "higher"]
    assert rows_blob["directions"]["structure_f1_table"] == "higher"  # for the detail panel
    first, second, third = rows_blob["rows"]
    assert first[4] == "+=+"  # cer up (worse), wer same, structure_f1 down (worse)
    assert second[4] == "-=="  # cer down (better)
    assert third[4] == "..."  # no baseline
    assert rows_blob["outcomes"][first[2]] == "failed"
    assert [row[7] for row in rows_blob["rows"]] == [1, 1, 0]  # which rows have views
    # higher is better, from the spec: a rise is better
    quiz = blobs(render_html(unknown_kind_report()))["doceval-rows-0"]
    assert quiz["metrics"] == ["goodness", "seconds"] and {r[4] for r in quiz["rows"]} == {"-."}


def test_no_external_resources_and_csp_matches() -> None:
    document = render_html(documents_report())
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:)?//""", document, re.I)
    assert not re.search(r"@import|url\(", document)
    assert "https://example.org" in document  # a note's text, shown, not linked
    match = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', document)
    assert match
    csp = match.group(1)
    assert "default-src 'none'" in csp
    for tag in ("script", "style"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", document, re.S)
        assert body
        digest = base64.b64encode(hashlib.sha256(body.group(1).encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp


def test_stylesheet_escapes_are_single() -> None:
    """CSS reads ``\\\\2195`` as a backslash and the text 2195: every escape in the stylesheet
    (the one the page embeds, byte for byte) is a single backslash and a code point."""
    css = re.search(r"<style>(.*?)</style>", render_html(documents_report()), re.S)
    assert css
    assert "\\\\" not in css.group(1)
    escapes = re.findall(r'content:"[^"]*"', css.group(1))
    assert escapes and all(re.fullmatch(r'content:" \\[0-9A-F]{4}"', e) for e in escapes)


def test_write_html_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out" / "report.html"
    assert write_html(documents_report(), target) == target
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert os.listdir(target.parent) == ["report.html"]
    # a failing replace leaves the old file and no temporary file behind
    target.write_text("old", encoding="utf-8")

    def refuse(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_html(documents_report(), target)
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(target.parent) == ["report.html"]


def test_large_suite_stays_lazy() -> None:
    """Hundreds of rows: no per-case markup in the page, details packed and compressed."""
    base = documents_report()["suites"]["papers"]["results"][0]
    rows = []
    for number in range(300):
        for system in ("a", "b"):
            row = copy.deepcopy(base)
            row.update(case=f"case-{number}", system=system)
            ops = row["views"]["text_diff"]["ops"]
            ops[0] = ["=", f"case {number} " + "lorem ipsum dolor " * 60]
            rows.append(row)
    document = render_html({"suites": {"big": {"results": rows}}})
    assert "application/x-doceval-deflate-b85" in document
    assert '<tr class="case"' not in document and "<del" not in document
    assert len(document) < 300_000


def test_suite_error_and_baseline_lists() -> None:
    report = documents_report()
    suite = report["suites"]["papers"]
    suite["error"] = f"unknown system 'x' {XSS}"
    suite["baseline_changes"] = ["tidal-storage[pymupdf]: cer 0.121 -> 0.153"]
    document = render_html(report)
    assert (
        '<p class="suite-error"><b>Suite error:</b> unknown system &#39;x&#39; '
        "&lt;script&gt;alert(1)&lt;/script&gt;</p>" in document
    )
    assert "1 suite(s) could not run" in document
    assert "1 baseline changes written by this run" in document
    assert "1 baseline entries without a current result" in document


def test_failed_gate_stands_out() -> None:
    document = render_html(documents_report())
    gates = between(document, '<table class="gates">', "</table>")
    first_row = gates[gates.index("<tbody>") :]
    assert first_row.startswith('<tbody><tr class="gate-fail"><td class="verdict">✗ FAILED')
    assert '<tr class="gate-pass">' in gates
    assert "Suite gates: 1 of 2 failed" in document
    assert "1 of 2 suite gates failed" in document  # run summary
    assert "1 gate failed" in document  # suite header


def test_float_noise_is_not_a_significant_change() -> None:
    """Without the analysis's verdict, a 'significant' difference of 1e-17 is no change."""
    report = documents_report()
    entry = report["suites"]["papers"]["baseline_deltas"][1]
    entry.update(mean_diff=-1e-17, ci_low=-1e-17, ci_high=-1e-17, significant=True, verdict=None)
    summary = between(render_html(report), '<table class="summary">', "</table>")
    assert '<div class="delta same ns"' in summary
    assert summary.count("sigmark") == 2  # pymupdf's real regression, rapidocr's improvement


def _stripped(report: dict[str, Any], *paths: tuple[str, ...]) -> dict[str, Any]:
    report = copy.deepcopy(report)
    suite = report["suites"]["papers"]
    for path in paths:
        if len(path) > 1:
            for row in suite["results"]:
                row.pop(path[1], None)
        else:
            suite.pop(path[0], None)
    return report


@pytest.mark.parametrize(
    "paths",
    [
        [("comparisons",)],
        [("analysis_keys",)],
        [("baseline_deltas",), ("results", "baseline")],
        [("results", "views")],
        [("gates",), ("aggregates",), ("notes",), ("unused_baseline",), ("metrics",)],
        [("results",)],
    ],
    ids=["no-comparisons", "no-analysis-keys", "no-baseline", "no-views", "bare", "no-results"],
)
def test_missing_optional_parts_still_render(paths: list[tuple[str, ...]]) -> None:
    document = render_html(_stripped(documents_report(), *paths))
    assert "</html>" in document and "papers" in document
    if ("comparisons",) in paths or ("analysis_keys",) in paths:
        assert "Pairwise comparisons" not in document
    if ("baseline_deltas",) in paths:  # the failed test is still listed first
        assert "Tests that did not pass" in document and "All baseline deltas" not in document
    if ("results", "views") in paths:
        assert all("views" not in d for d, _ in details(document).values())
        assert [row[7] for row in blobs(document)["doceval-rows-0"]["rows"]] == [0, 0, 0]


@pytest.mark.parametrize(
    "report",
    [
        {},
        {"suites": None},
        {"suites": {"s": None}},
        {"suites": {"s": {"results": None, "gates": None, "notes": None, "systems": None}}},
        {"suites": {"s": {"results": [None, "x", {"outcome": None, "metrics": None}]}}},
        {"suites": {"s": {"aggregates": {"a": {"m": {"mean": None}}}, "metrics": None}}},
        {"suites": {"s": {"metrics": {"m": None, "n": {"direction": 3, "headline": "yes"}}}}},
        {"suites": {"s": {"analysis_keys": "x", "x": [1, {"a": [2]}]}}},
        {"suites": {"s": {"analysis_keys": ["x", None], "x": float("nan")}}},
        {"suites": {"s": {"baseline_deltas": [{"verdict": "worse"}, None, {"mean_diff": "x"}]}}},
        {
            "suites": {
                "s": {
                    "results": [
                        {
                            "case": "c",
                            "system": "a",
                            "outcome": "passed",
                            "labels": {"k": None, "n": [1]},
                            "views": {
                                "text_diff": {"ops": [["?", 1], "junk", ["…", "x"]]},
                                "output_diff": "not a mapping",
                                "weird": float("inf"),
                            },
                            "details": ["not", "a", "mapping"],
                        }
                    ]
                }
            }
        },
    ],
    ids=[
        "empty",
        "suites-none",
        "suite-none",
        "parts-none",
        "junk-rows",
        "no-values",
        "junk-specs",
        "junk-analysis",
        "nan-analysis",
        "junk-deltas",
        "junk-views",
    ],
)
def test_odd_reports_do_not_crash(report: dict[str, Any]) -> None:
    document = render_html(report)
    assert document.startswith("<!DOCTYPE html>")
    blobs(document)  # every data block is valid JSON


def test_renders_a_report_built_by_the_analysis() -> None:
    """The real producer: the documents kind's specs (as the session orders them for the
    metrics measured), `analyse_suite` with the kind's analyses, `build_report`."""
    from pytest_doceval.config import StatsConfig
    from pytest_doceval.report.analysis import analyse_suite
    from pytest_doceval.report.json_report import build_report

    try:
        from pytest_doceval.kinds.documents.suite import DocumentsSuite
        from pytest_doceval.metrics.spec import ordered_specs

        declared, analyses = DocumentsSuite.metrics, DocumentsSuite.analyses
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"the documents kind does not declare metric specs yet ({exc})")
    rows = []
    for number in range(4):
        for system, cer in (("pymupdf", 0.01), ("rapidocr", 0.05)):
            value = cer + number / 100
            rows.append(
                {
                    "suite": "papers",
                    "case": f"case-{number}",
                    "system": system,
                    "labels": {},
                    "nodeid": f"cases/papers/suite.toml::case-{number}[{system}]",
                    "outcome": "passed",
                    "message": None,
                    "metrics": {
                        "cer": value,
                        "wer": 2 * value,
                        "structure_f1": 1 - value,
                        "structure_f1_heading": 1.0,
                    },
                    "counts": {"cer": edit_counts(95, 2, 2, 1)},
                    "baseline": {"cer": value - 0.002, "structure_f1": 1 - value},
                    "details": {},
                    "views": {
                        "text_diff": {"metric": "cer", "ops": [["=", "abc"], ["S", "d", "e"]]}
                    },
                    "notes": [],
                }
            )
    measured = {m for row in rows for m in row["metrics"]}
    specs = {name: spec.to_dict() for name, spec in ordered_specs(declared, measured).items()}
    meta = {
        "kind": "documents",
        "path": "cases/papers",
        "systems": ["pymupdf", "rapidocr"],
        "metrics": specs,
        "gate_rules": {"suite": {"cer": "significant:+0.1pp"}},
    }
    config = StatsConfig(resamples=200)
    section = analyse_suite(meta, rows, config, analyses)
    document = render_html(build_report({"papers": section}, config.to_dict()))
    assert section["analysis_keys"] == ["comparisons"]
    assert "Pairwise comparisons" in document and '<table class="gates">' in document
    assert "What changed" in document and "small n" in document
    summary = between(document, '<table class="summary">', "</table>")
    assert re.findall(r"<th>([a-z_0-9]+)<div", summary) == ["cer", "wer", "structure_f1"]
    assert "structure_f1_heading" not in page_text(document)
    found = details(document)
    assert set(found) == set(range(8))
    detail, chunk = found[0]
    assert expand(view_block(detail, "truth → output")["d"], chunk) == [
        ["=", "abc"],
        ["S", "d", "e"],
    ]


# --------------------------------------------------------------- issue 27: the page fits


def test_the_summary_leads_with_the_terminals_columns() -> None:
    from pytest_doceval.report.terminal import TERMINAL_COLUMNS

    report = documents_report()
    suite = report["suites"]["papers"]
    names = [f"m{k}" for k in range(8)]
    suite["metrics"] = {m: {"direction": "lower", "headline": True} for m in names}
    suite["metrics"]["m0"]["headline"] = False
    # m1 is not measured: it goes behind the toggle whatever its place
    suite["aggregates"] = {"pymupdf": {m: agg(0.1, 0.0, 0.2) for m in names if m != "m1"}}
    document = render_html(report)
    lead = between(document, '<table class="summary">', "</table>")
    assert re.findall(r"<th>(m\d)<div", lead) == ["m2", "m3", "m4", "m5", "m6"]
    assert TERMINAL_COLUMNS == 5
    folded = between(document, '<details class="more-metrics">', "</details>")
    assert "<summary>2 more metrics: m1, m7</summary>" in folded
    assert re.findall(r"<th>(m\d)<div", folded) == ["m1", "m7"]


def test_a_pairwise_comparison_at_n_1_is_not_testable() -> None:
    from pytest_doceval.html.model import Spec, SuiteView
    from pytest_doceval.report.html.analyses import comparisons

    view = SuiteView(0, "s", {}, 0.95, specs={"cer": Spec("lower")})
    at = {"metric": "cer", "a": "x", "b": "y", "mean_diff": 0.2, "p_bonferroni": 0.001}
    assert "not testable (n = 1)" in comparisons("comparisons", [at | {"n": 1}], view)
    assert "<b>y</b> better" in comparisons("comparisons", [at | {"n": 9}], view)
    assert "not testable" not in comparisons("comparisons", [at | {"n": 2}], view)


def test_the_exam_pairwise_table_has_words_not_keys() -> None:
    from pytest_doceval.html.model import SuiteView
    from pytest_doceval.kinds.exam.html import pairwise

    hostile = "<b>m</b>"
    entry = {
        "track": "A",
        "a": hostile,
        "b": "small",
        "n": 20,
        "diff": -0.15,
        "ci_low": -0.3,
        "ci_high": -0.05,
        "p_mcnemar": 0.004,
        "p_bonferroni": 0.012,
        "significant": True,
    }
    page = pairwise("pairwise", [entry], SuiteView(0, "exams", {}, 0.95))
    text = re.sub(r"<[^>]+>", " ", page)
    assert "p_mcnemar" not in text and "ci_low" not in text and "True" not in text
    assert "-15.0%" in text and "[-30.0%, -5.0%]" in text and "0.004" in text
    assert "<b>small</b> better" in page  # a - b < 0: b is better
    assert "&lt;b&gt;m&lt;/b&gt;" in page and hostile not in page
    assert "not testable (n = 1)" in pairwise(
        "pairwise", [entry | {"n": 1}], SuiteView(0, "e", {}, 0.95)
    )
    from pytest_doceval.kinds.exam.html import deltas

    track = {"model": "m", "delta": "A-B1", "value": 1.0, "supported": False}
    assert "not testable (n = 1)" in deltas(
        "deltas", [track | {"n": 1}], SuiteView(0, "e", {}, 0.95)
    )
    assert "not supported" in deltas("deltas", [track | {"n": 9}], SuiteView(0, "e", {}, 0.95))


def test_pytest_html_skip_reason_and_summary_columns() -> None:
    from pytest_doceval.report.pytest_html import skip_log, summary_html

    data = ["('/ci/x/test_a.py', 3, 'Skipped: needs &lt;GPU&gt;')\n", "captured"]
    skip_log(("/ci/x/test_a.py", 3, "Skipped: needs <GPU>"), data)
    assert data == ["Skipped: needs &lt;GPU&gt;\n", "captured"]
    untouched = ["text"]
    skip_log("not a tuple", untouched)
    assert untouched == ["text"]
    report = documents_report()
    suite = report["suites"]["papers"]
    suite["metrics"] = {f"m{k}": {"direction": "lower", "headline": True} for k in range(7)}
    suite["aggregates"] = {"<s>": {f"m{k}": agg(0.1, 0.0, 0.2) for k in range(7)}}
    suite["gates"] = []
    page = summary_html(report)
    assert page.startswith("<style>") and "color:#1f2328" in page
    assert re.findall(r"<th>(m\d)</th>", page) == ["m0", "m1", "m2", "m3", "m4"]
    assert "<td>&lt;s&gt;</td>" in page


def test_an_analysis_without_a_renderer_reads_like_the_rest() -> None:
    from pytest_doceval.html.analysis import generic
    from pytest_doceval.html.model import SuiteView

    value = [{"p_mcnemar": 0.01234567, "ci_low": None, "significant": False, "n": 3}]
    page = generic("pair_table", value, SuiteView(0, "s", {}, 0.95))
    heads = re.findall(r"<th>([^<]*)</th>", page)
    assert heads == ["p mcnemar", "ci low", "significant", "n"]
    assert re.findall(r"<td[^>]*>([^<]*)</td>", page) == ["0.0123", "n/a", "no", "3"]
