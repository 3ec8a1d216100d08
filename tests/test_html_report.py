"""The HTML report without a browser: content, escaping, missing parts, data blocks, atomicity.

The page's own script is exercised in a real browser by ``test_html_chromium.py``; here the
data it reads (JSON blocks, packed blocks, the shared-truth diff encoding) is decoded in
Python and checked against the report it came from.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.report import html as report_html
from pytest_doceval.report.html import render_html, write_html

XSS = "<script>alert(1)</script>"
BLOB = re.compile(r'<script type="([^"]+)" id="([^"]+)">(.*?)</script>', re.S)


def make_report() -> dict[str, Any]:
    """Two systems, three cases, every optional part present, hostile strings everywhere."""
    rows = [
        {
            "case": "tidal-storage",
            "system": "pymupdf",
            "nodeid": "cases/papers/suite.toml::tidal-storage[pymupdf]",
            "outcome": "failed",
            "message": f"cer 0.153 > baseline 0.121 + 0.5pp {XSS}",
            "metrics": {"cer": 0.153, "wer": 0.2, "structure_f1": 0.75},
            "baseline": {"cer": 0.121, "wer": 0.2, "structure_f1": 0.8},
            "counts": {
                "cer": {
                    "hits": 980,
                    "substitutions": 5,
                    "deletions": 3,
                    "insertions": 4,
                    "reference_length": 988,
                }
            },
            "notes": [f"row note {XSS}"],
            "diff": {
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
        },
        {
            "case": "tidal-storage",
            "system": "rapidocr",
            "nodeid": "cases/papers/suite.toml::tidal-storage[rapidocr]",
            "outcome": "passed",
            "message": None,
            "metrics": {"cer": 0.01, "wer": 0.05, "structure_f1": 0.9},
            "baseline": {"cer": 0.02, "wer": 0.05, "structure_f1": 0.9},
            "diff": {
                "metric": "cer",
                "ops": [
                    ["=", f"truth {XSS} sha"],
                    ["S", "r", "R"],
                    ["=", f"ed text refgone {XSS}"],
                    ["…", 1234],
                    ["=", "tail context"],
                ],
            },
        },
        {
            "case": f"case {XSS}",
            "system": "pymupdf",
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
        "suites": {
            "papers": {
                "kind": "documents",
                "path": "cases/papers",
                "language": "en",
                "normalization": "fair-v1",
                "systems": ["pymupdf", "rapidocr"],
                "metrics": {
                    "cer": {"direction": "lower"},
                    "wer": {"direction": "lower"},
                    "structure_f1": {"direction": "higher"},
                },
                "notes": [f"rapidocr does not read Korean {XSS}", "see https://example.org"],
                "results": rows,
                "aggregates": {
                    "pymupdf": {
                        "cer": {
                            "mean": 0.012,
                            "ci_low": 0.008,
                            "ci_high": 0.017,
                            "n": 5,
                            "corpus": 0.011,
                        },
                        "structure_f1": {"mean": 0.8, "ci_low": 0.7, "ci_high": 0.9, "n": 5},
                    },
                    "rapidocr": {
                        "cer": {"mean": 0.05, "ci_low": 0.03, "ci_high": 0.07, "n": 5},
                        "structure_f1": {"mean": 0.6, "ci_low": 0.5, "ci_high": 0.7, "n": 5},
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
                    {
                        "system": "pymupdf",
                        "metric": "cer",
                        "n": 5,
                        "current_mean": 0.012,
                        "baseline_mean": 0.011,
                        "mean_diff": 0.001,
                        "ci_low": 0.0005,
                        "ci_high": 0.003,
                        "p_ttest": 0.04,
                        "p_wilcoxon": 0.06,
                        "significant": True,
                    },
                    {
                        "system": "rapidocr",
                        "metric": "cer",
                        "n": 5,
                        "current_mean": 0.05,
                        "baseline_mean": 0.052,
                        "mean_diff": -0.002,
                        "ci_low": -0.004,
                        "ci_high": 0.001,
                        "p_ttest": 0.4,
                        "p_wilcoxon": 0.5,
                        "significant": False,
                    },
                ],
                "gates": [
                    {
                        "system": "pymupdf",
                        "metric": "cer",
                        "rule": "significant:+0.5pp",
                        "passed": False,
                        "message": f"cer regressed {XSS}",
                    },
                    {
                        "system": "rapidocr",
                        "metric": "cer",
                        "rule": "significant:+0.5pp",
                        "passed": True,
                        "message": "no significant regression",
                    },
                ],
                "unused_baseline": [f"old-case[pymupdf] {XSS}"],
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
    """The ops of a diff from a detail chunk (Python twin of the page's `diffOps`)."""
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


def details(document: str, suite: int = 0) -> dict[int, dict[str, Any]]:
    """Row number -> (detail, chunk) for one suite."""
    data = blobs(document)
    out = {}
    for ident, chunk in data.items():
        if ident.startswith(f"doceval-s{suite}-d"):
            for number, detail in chunk["rows"].items():
                out[int(number)] = (detail, chunk)
    return out


def without_empty_equals(ops: list[list[Any]]) -> list[list[Any]]:
    return [list(op) for op in ops if not (op[0] == "=" and op[1] == "")]


@pytest.fixture(params=["plain", "packed"])
def packing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with detail chunks as plain JSON and as deflate+base85."""
    monkeypatch.setattr(report_html, "INLINE_LIMIT", 0 if request.param == "packed" else 10**9)
    return request.param


def test_renders_a_complete_document() -> None:
    document = render_html(make_report())
    assert document.startswith("<!DOCTYPE html>")
    assert document.rstrip().endswith("</html>")
    for text in (
        "papers",
        "fair-v1",
        "documents",
        "cases/papers",
        "Run summary",
        "Pairwise comparisons",
        "Suite gates",
        "<svg",
        "doceval-rows-0",
    ):
        assert text in document
    # run summary counts by outcome
    assert "failed 1" in document and "passed 1" in document and "skipped 1" in document


def test_hostile_strings_are_never_markup(packing: str) -> None:
    document = render_html(make_report())
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
    assert "rapidocr does not read Korean &lt;script&gt;alert(1)&lt;/script&gt;" in document
    assert "cer regressed &lt;script&gt;alert(1)&lt;/script&gt;" in document
    # The data still holds the strings, intact, for the page to show as text.
    data = json.dumps(blobs(document), ensure_ascii=False)
    for where in ("case ", "hyp ", "gone ", " extra ", "row note ", "baseline 0.121 + 0.5pp "):
        assert where + XSS in data


def test_summary_table_numbers() -> None:
    document = render_html(make_report())
    summary = document[document.index('<table class="summary">') :]
    summary = summary[: summary.index("</table>")]
    assert '<div class="mean">0.0120</div>' in summary
    assert '<div class="ci">[0.0080, 0.0170]</div>' in summary
    assert "n=5 · corpus 0.0110" in summary
    assert "↓ lower is better" in summary and "↑ higher is better" in summary
    # pymupdf cer got significantly worse: red, bold, marked; rapidocr's change is not significant
    assert '<div class="delta worse sig"' in summary and "▲ +0.0010 vs baseline" in summary
    assert '<span class="sigmark">significant</span>' in summary
    assert '<div class="delta better ns"' in summary and "▼ -0.0020 vs baseline" in summary


def test_comparison_and_baseline_tables() -> None:
    document = render_html(make_report())
    comparisons = document[document.index('<table class="comparisons">') :]
    comparisons = comparisons[: comparisons.index("</table>")]
    assert "-0.0380" in comparisons and "[-0.0500, -0.0200]" in comparisons
    assert "0.009" in comparisons and "-1.20" in comparisons and "p (McNemar)" in comparisons
    assert "<b>pymupdf</b> better" in comparisons  # lower cer, Bonferroni p < 0.05
    assert '<table class="baseline">' in document


def test_failed_gate_stands_out() -> None:
    document = render_html(make_report())
    gates = document[document.index('<table class="gates">') :]
    gates = gates[: gates.index("</table>")]
    first_row = gates[gates.index("<tbody>") :]
    assert first_row.startswith('<tbody><tr class="gate-fail"><td class="verdict">✗ FAILED')
    assert '<tr class="gate-pass">' in gates
    assert "Suite gates: 1 of 2 failed" in document
    assert "1 of 2 suite gates failed" in document  # run summary
    assert "1 gate(s) failed" in document  # suite header
    assert document.count("gate-fail") >= 1


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
        [("baseline_deltas",), ("results", "baseline")],
        [("results", "diff")],
        [("gates",), ("aggregates",), ("notes",), ("unused_baseline",), ("metrics",)],
        [("results",)],
    ],
    ids=["no-comparisons", "no-baseline", "no-diff", "bare-suite", "no-results"],
)
def test_missing_optional_parts_still_render(paths: list[tuple[str, ...]]) -> None:
    report = _stripped(make_report(), *paths)
    document = render_html(report)
    assert "</html>" in document and "papers" in document
    if ("comparisons",) in paths:
        assert "Pairwise comparisons" not in document
    if ("results", "diff") in paths:
        assert all("diff" not in d for d, _ in details(document).values())
        rows = blobs(document)["doceval-rows-0"]["rows"]
        assert [row[7] for row in rows] == [0, 0, 0]


@pytest.mark.parametrize(
    "report",
    [
        {},
        {"suites": None},
        {"suites": {"s": None}},
        {"suites": {"s": {"results": None, "gates": None, "notes": None, "systems": None}}},
        {"suites": {"s": {"results": [None, "x", {"outcome": None, "metrics": None}]}}},
        {"suites": {"s": {"aggregates": {"a": {"cer": {"mean": None}}}, "metrics": None}}},
        {
            "suites": {
                "s": {
                    "results": [
                        {
                            "case": "c",
                            "system": "a",
                            "outcome": "passed",
                            "diff": {"ops": [["?", 1], "junk", ["…", "x"]]},
                        }
                    ]
                }
            }
        },
    ],
    ids=["empty", "suites-none", "suite-none", "parts-none", "junk-rows", "no-values", "junk-diff"],
)
def test_odd_reports_do_not_crash(report: dict[str, Any]) -> None:
    assert render_html(report).startswith("<!DOCTYPE html>")


def test_non_finite_numbers_and_lone_surrogates() -> None:
    report = make_report()
    row = report["suites"]["papers"]["results"][0]
    row["metrics"]["cer"] = float("nan")
    row["metrics"]["wer"] = float("inf")
    row["diff"]["ops"][0] = ["=", "broken \ud800 surrogate"]
    report["suites"]["papers"]["aggregates"]["pymupdf"]["cer"]["mean"] = float("nan")
    document = render_html(report)
    document.encode("utf-8")  # strict: nothing unencodable is left
    data = blobs(document)  # json.loads rejects nothing: NaN/Infinity were not written
    assert data["doceval-rows-0"]["rows"][0][3][:2] == ["nan", "inf"]
    assert '<div class="mean">NaN</div>' in document


def test_shared_truth_encoding_round_trips(packing: str) -> None:
    report = make_report()
    document = render_html(report)
    rows = report["suites"]["papers"]["results"]
    found = details(document)
    assert set(found) == {0, 1, 2}
    for number in (0, 1):
        detail, chunk = found[number]
        assert "g" in detail["diff"], "diffs of one case should share the truth text"
        assert expand(detail["diff"], chunk) == without_empty_equals(rows[number]["diff"]["ops"])
    # the shared truth holds "truth <script>... shared text" once, not once per system
    refs = found[0][1]["refs"]
    assert len(refs) == 1 and sum(piece.count("shared") for piece in refs[0][:1]) == 1


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
                        "system": "a",
                        "outcome": "passed",
                        "diff": {"metric": "cer", "ops": ops_a},
                    },
                    {
                        "case": "c",
                        "system": "b",
                        "outcome": "passed",
                        "diff": {"metric": "cer", "ops": ops_b},
                    },
                ]
            }
        }
    }
    found = details(render_html(report))
    for number, ops in ((0, ops_a), (1, ops_b)):
        detail, chunk = found[number]
        assert ("g" in detail["diff"]) is shared
        assert expand(detail["diff"], chunk) == without_empty_equals(ops)


def test_details_are_chunked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_html, "CHUNK_BYTES", 1)
    report = make_report()
    document = render_html(report)
    data = blobs(document)
    chunk_ids = sorted(i for i in data if i.startswith("doceval-s0-d"))
    assert len(chunk_ids) == 2  # one per case: rows of a case stay together
    rows = data["doceval-rows-0"]["rows"]
    assert [row[6] for row in rows] == [0, 0, 1]


def test_row_table_flags_follow_direction() -> None:
    rows_blob = blobs(render_html(make_report()))["doceval-rows-0"]
    assert rows_blob["metrics"] == ["cer", "wer", "structure_f1"]
    assert rows_blob["dirs"] == ["lower", "lower", "higher"]
    first, second, third = rows_blob["rows"]
    assert first[4] == "+=+"  # cer up (worse), wer same, structure_f1 down (worse)
    assert second[4] == "-=="  # cer down (better)
    assert third[4] == "..."  # no baseline
    assert rows_blob["outcomes"][first[2]] == "failed"


def test_no_external_resources_and_csp_matches() -> None:
    document = render_html(make_report())
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:)?//""", document, re.I)
    assert not re.search(r"@import|url\(", document)
    assert "https://example.org" in document  # a note's text, shown, not linked
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', document).group(1)
    assert "default-src 'none'" in csp
    for tag in ("script", "style"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", document, re.S).group(1)
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp


def test_write_html_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out" / "report.html"
    assert write_html(make_report(), target) == target
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert os.listdir(target.parent) == ["report.html"]
    # a failing replace leaves the old file and no temporary file behind
    target.write_text("old", encoding="utf-8")

    def refuse(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_html(make_report(), target)
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(target.parent) == ["report.html"]


def test_large_suite_stays_lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hundreds of rows: no per-case markup in the page, details packed and compressed."""
    base = make_report()["suites"]["papers"]["results"][0]
    rows = []
    for number in range(300):
        for system in ("a", "b"):
            row = copy.deepcopy(base)
            row.update(case=f"case-{number}", system=system)
            row["diff"]["ops"][0] = ["=", f"case {number} " + "lorem ipsum dolor " * 60]
            rows.append(row)
    document = render_html({"suites": {"big": {"results": rows}}})
    assert "application/x-doceval-deflate-b85" in document
    assert '<tr class="case"' not in document and "<del" not in document
    assert len(document) < 300_000


def test_suite_error_and_baseline_lists() -> None:
    report = make_report()
    suite = report["suites"]["papers"]
    suite["error"] = f"unknown system 'x' {XSS}"
    suite["baseline_changes"] = ["tidal-storage[pymupdf]: cer 0.121 -> 0.153"]
    document = render_html(report)
    assert (
        '<p class="suite-error"><b>Suite error:</b> unknown system &#x27;x&#x27; '
        "&lt;script&gt;alert(1)&lt;/script&gt;</p>" in document
    )
    assert "1 suite(s) could not run" in document
    assert "1 baseline changes written by this run" in document
    assert "1 baseline entries without a current result" in document


def test_float_noise_is_not_a_significant_change() -> None:
    report = make_report()
    delta = report["suites"]["papers"]["baseline_deltas"][1]
    delta.update(mean_diff=-1e-17, ci_low=-1e-17, ci_high=-1e-17, significant=True)
    document = render_html(report)
    summary = document[document.index('<table class="summary">') :]
    summary = summary[: summary.index("</table>")]
    assert '<div class="delta same ns"' in summary and "• 0.0000 vs baseline" in summary
    assert summary.count("sigmark") == 1  # only pymupdf's real regression


def test_renders_a_report_built_by_the_analysis() -> None:
    """The real producer's shape: `analyse_suite` + `build_report` on a few rows."""
    from pytest_doceval.config import StatsConfig
    from pytest_doceval.report.analysis import analyse_suite
    from pytest_doceval.report.json_report import build_report

    rows = []
    for number in range(4):
        for system, cer in (("pymupdf", 0.01), ("rapidocr", 0.05)):
            value = cer + number / 100
            rows.append(
                {
                    "suite": "papers",
                    "case": f"case-{number}",
                    "system": system,
                    "nodeid": f"cases/papers/suite.toml::case-{number}[{system}]",
                    "outcome": "passed",
                    "message": None,
                    "metrics": {
                        "cer": value,
                        "structure_f1": 1 - value,
                        "structure_f1_heading": 1.0,
                    },
                    "baseline": {"cer": value - 0.002, "structure_f1": 1 - value},
                    "counts": {
                        "cer": {
                            "hits": 95,
                            "substitutions": 2,
                            "deletions": 2,
                            "insertions": 1,
                            "reference_length": 99,
                        },
                    },
                    "details": {"structure_counts": {"all": {"tp": 3, "fp": 1, "fn": 0}}},
                    "notes": [],
                    "diff": {"metric": "cer", "ops": [["=", "abc"], ["S", "d", "e"]]},
                }
            )
    meta = {
        "kind": "documents",
        "path": "cases/papers",
        "systems": ["pymupdf", "rapidocr"],
        "gate_rules": {"suite": {"cer": "significant:+0.1pp"}},
    }
    config = StatsConfig(resamples=200)
    report = build_report({"papers": analyse_suite(meta, rows, config)}, config.to_dict())
    document = render_html(report)
    assert "Pairwise comparisons" in document and '<table class="gates">' in document
    assert "structure_f1_heading" not in document[: document.index("<script type=")]
    found = details(document)
    assert set(found) == set(range(8))
    detail, chunk = found[0]
    assert detail["counts"]["structure_all"] == {"tp": 3, "fp": 1, "fn": 0}
    assert expand(detail["diff"], chunk) == [["=", "abc"], ["S", "d", "e"]]
