"""The reviewer's page fits and says what moved (issue 27), in real headless Chromium: element
widths in a 1,400 px window and the text as rendered, never pixels.

Geometry is read by a probe: the test copies the page, drops its Content-Security-Policy (the
probe is not one of the page's hashed scripts) and appends a script that, once the page's own
script has run, writes what it measured as JSON into ``data-probe`` on ``<html>``; Chromium's
``--dump-dom`` returns it.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_html_chromium import CHROMIUM, chromium, diff_report
from test_html_report import agg, delta

from pytest_doceval.kinds.documents.suite import DocumentsSuite
from pytest_doceval.report.html import render_html
from pytest_doceval.report.terminal import TERMINAL_COLUMNS

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")
pytest_plugins = ["pytester"]

WINDOW = 1400

# Layout helpers for the probes: the widest table of a selector, the page's own width.
_PROBE_LIB = """
const widths = (sel) => [...document.querySelectorAll(sel)].map(
  (e) => Math.ceil(e.getBoundingClientRect().width));
const texts = (sel) => [...document.querySelectorAll(sel)].map((e) => e.innerText);
"""


def probe(page_html: str, expression: str, tmp_path: Path, fragment: str = "") -> Any:
    """`expression` (JavaScript, may use `widths` and `texts`) evaluated in Chromium after
    the page's scripts ran, in a `WINDOW`-wide window."""
    page_html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page_html)
    script = (
        f"<script>{_PROBE_LIB}window.addEventListener('load', () => setTimeout(() => {{"
        f"document.documentElement.dataset.probe = JSON.stringify({expression});}}, 800));"
        "</script>"
    )
    page = tmp_path / "probe.html"
    page.write_text(page_html.replace("</body>", script + "</body>"), encoding="utf-8")
    dom = chromium(
        page.as_uri() + fragment, tmp_path / "profile", "--dump-dom", f"--window-size={WINDOW},900"
    )
    found = re.search(r'data-probe="([^"]*)"', dom)
    assert found, dom[:2000]
    return json.loads(html.unescape(found.group(1)))


def papers_report() -> dict[str, Any]:
    """The shipped papers suite's shape: the documents kind's headline metrics (12 of them
    measured), three systems, a baseline delta on every cell, small n, long method
    names; mean CER 0.009 -> 0.152 at n = 2, not significant (the issue's example)."""
    specs = {
        name: spec.to_dict()
        for name, spec in DocumentsSuite.metrics.items()
        if not any(ch in name for ch in "*?[")
    }
    headline = [name for name, spec in DocumentsSuite.metrics.items() if spec.headline]
    measured = [m for m in headline if "*" not in m][:12]  # table_teds_s not measured
    systems = ["pymupdf", "rapidocr-with-a-long-name", "docling"]
    aggregates = {
        s: {
            m: agg(0.5123, 0.4012, 0.6234, n=2, method="bootstrap-t", flagged={"repeats": 1})
            for m in measured
        }
        for s in systems
    }
    aggregates["pymupdf"]["cer"] = agg(0.152, 0.0, 0.4123, n=2, method="t")
    deltas = [
        delta(s, m, -0.0123, -0.1234, 0.0987, "unchanged") | {"n": 2}
        for s in systems
        for m in measured
    ]
    deltas[0] = delta("pymupdf", "cer", 0.143, -0.01, 0.3, "unchanged") | {
        "n": 2,
        "baseline_mean": 0.009,
        "current_mean": 0.152,
    }
    deltas[1] = delta("pymupdf", measured[1], 0.2512, 0.1234, 0.3789, "worse") | {"n": 2}
    return {
        "schema": "doceval-report/1",
        "config": {"confidence": 0.95},
        "suites": {
            "papers": {
                "kind": "documents",
                "systems": systems,
                "metrics": specs,
                "analysis_keys": ["comparisons"],
                "comparisons": [
                    {"metric": "cer", "a": "pymupdf", "b": "docling", "n": 1, "mean_diff": 0.1},
                    {
                        "metric": "cer",
                        "a": "pymupdf",
                        "b": "rapidocr-with-a-long-name",
                        "n": 8,
                        "mean_diff": -0.05,
                        "ci_low": -0.1,
                        "ci_high": 0.02,
                        "p_bonferroni": 0.3,
                    },
                ],
                "results": [],
                "aggregates": aggregates,
                "baseline_deltas": deltas,
            }
        },
    }


def test_the_summary_fits_a_1400_px_window(tmp_path: Path) -> None:
    report = papers_report()
    measured = probe(
        render_html(report),
        "{lead: widths('table.summary')[0], page: document.documentElement.scrollWidth,"
        " inner: window.innerWidth, heads: [...document.querySelector('table.summary')"
        " .querySelectorAll('thead th')].map((th) => th.firstChild.textContent),"
        " toggle: texts('details.more-metrics > summary'),"
        " folded: (document.querySelector('details.more-metrics').open = true,"
        " widths('details.more-metrics table.summary'))}",
        tmp_path,
    )
    assert measured["inner"] == WINDOW
    assert measured["lead"] <= WINDOW and measured["page"] <= WINDOW, measured
    assert measured["folded"] and max(measured["folded"]) <= WINDOW, measured
    # the terminal's five lead, in the kind's order; the others are one click away
    assert measured["heads"] == ["system", "cer", "ned", "wer", "body_cer", "cer_raw"]
    assert len(measured["heads"]) == 1 + TERMINAL_COLUMNS
    # the rest in tables of five (15 more columns: three tables)
    rest = sum(1 for spec in DocumentsSuite.metrics.values() if spec.headline) - TERMINAL_COLUMNS
    assert len(measured["folded"]) == -(-rest // TERMINAL_COLUMNS)
    assert measured["toggle"][0].startswith(f"{rest} more metrics: structure_f1, refs_delta")


def test_each_cell_shows_the_change_and_its_interval(tmp_path: Path) -> None:
    cells = probe(render_html(papers_report()), "texts('table.summary td.cell')", tmp_path)
    first = " ".join(cells[0].split())
    assert first.startswith("0.1520")
    assert "+0.1430 [-0.0100, +0.3000] vs baseline not significant at n = 2" in first
    second = " ".join(cells[1].split())  # significantly worse: arrow, numbers, the mark
    assert "▲ +0.2512 [+0.1234, +0.3789] vs baseline significant" in second.lower()


def test_a_pair_at_n_1_is_not_testable(tmp_path: Path) -> None:
    text = probe(
        render_html(papers_report()),
        "(document.querySelector('details.analyses').open = true,"
        " texts('table.comparisons tr').slice(1))",
        tmp_path,
    )
    one, eight = (" ".join(row.split()) for row in text)
    assert one.endswith("not testable (n = 1)")
    assert eight.endswith("no significant difference")


EXAM_PAIRWISE = [
    {
        "track": "A",
        "a": "qwen",
        "b": "smollm2",
        "n": 40,
        "accuracy_a": 0.55,
        "accuracy_b": 0.425,
        "diff": 0.125,
        "ci_low": 0.025,
        "ci_high": 0.225,
        "only_a": 7,
        "only_b": 2,
        "p_mcnemar": 0.1797,
        "cohens_d": 0.2833,
        "p_ttest": 0.08,
        "mde": 0.21,
        "p_bonferroni": 0.5391,
        "significant": False,
    },
    {
        "track": "B1",
        "a": "qwen",
        "b": "smollm2",
        "n": 1,
        "accuracy_a": 1.0,
        "accuracy_b": 0.0,
        "diff": 1.0,
        "ci_low": None,
        "ci_high": None,
        "only_a": 1,
        "only_b": 0,
        "p_mcnemar": 1.0,
        "cohens_d": None,
        "p_ttest": None,
        "mde": None,
        "p_bonferroni": 1.0,
        "significant": False,
    },
]


def test_the_exam_pairwise_table_reads_like_the_rest(tmp_path: Path) -> None:
    exams = {"kind": "exam", "results": [], "analysis_keys": ["pairwise"]}
    report = {
        "schema": "doceval-report/1",
        "suites": {"exams": exams | {"pairwise": EXAM_PAIRWISE}},
    }
    shown = probe(
        render_html(report),
        "(document.querySelector('details.analyses').open = true, texts('table.exam-pairwise')[0])",
        tmp_path,
    )
    text = " ".join(shown.split())
    for raw in ("p_mcnemar", "ci_low", "accuracy_a", "only_b", "False", "None", "0.1797"):
        assert raw not in text, raw
    assert "p (McNemar) p (Bonferroni) Cohen's d" in text
    assert "A qwen smollm2 40 55.0% − 42.5% +12.5% [+2.5%, +22.5%] 7 / 2 0.180 0.539 0.28" in text
    assert "0.28 21.0pp no significant difference" in text
    assert "not testable (n = 1)" in text


def test_a_failed_rows_link_puts_it_at_the_top(tmp_path: Path) -> None:
    """`diff_report`'s failed row (row 0) is drawn first; above it sit the header, gates and
    summary, below it 300 more rows: it can scroll to the top, and must."""
    top = probe(
        render_html(diff_report()),
        "(() => { const tr = document.querySelector('tr.case[data-i=\"0\"]');"
        " return {top: tr.getBoundingClientRect().top, open: tr.getAttribute('aria-expanded'),"
        " scrolled: window.scrollY}; })()",
        tmp_path,
        fragment="#case-s0-r0",
    )
    assert top["open"] == "true" and top["scrolled"] > 0, top
    assert 0 <= top["top"] <= 40, top  # at the top (a small margin), not the bottom


def test_pytest_html_summary_is_readable_and_its_table_fits(pytester: pytest.Pytester) -> None:
    from tests.conftest import write_suite

    long = "tidal storage moves water between two basins and returns it after sunset " * 3
    name = "a-case-with-a-very-long-name-" + "x" * 120
    # no baseline: the case fails, with a long message in its log
    write_suite(pytester.path, "tides", {name: {"truth": long, "sys": long}}, systems=["sys"])
    pytester.makepyfile(
        test_gpu="import pytest\n\ndef test_needs_gpu():\n    pytest.skip('needs a GPU')\n"
    )
    result = pytester.runpytest_subprocess(
        "--doceval", "--html=report.html", "--self-contained-html", "cases", "test_gpu.py"
    )
    result.assert_outcomes(failed=1, skipped=1)
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    measured = probe(
        page,
        "{table: widths('#results-table')[0], page: document.documentElement.scrollWidth,"
        " colour: getComputedStyle(document.querySelector('.doceval-summary td')).color,"
        " logs: [...document.querySelectorAll('.log')].map((e) => e.textContent)}",
        pytester.path,
    )
    assert measured["table"] <= WINDOW and measured["page"] <= WINDOW, measured
    red, green, blue = map(int, re.findall(r"\d+", measured["colour"])[:3])
    assert max(red, green, blue) < 80  # dark text (pytest-html's own is #999 on white)
    skip = next(log for log in measured["logs"] if "GPU" in log)
    assert skip.strip() == "Skipped: needs a GPU"
    assert "('" not in " ".join(measured["logs"])


def test_pytest_html_shows_columns_only_for_what_ran_unbroken(pytester: pytest.Pytester) -> None:
    """Two suites of two kinds, one selected with -k: pytest-html's header was made before the
    run knew, yet the page shows only the columns of metrics a test measured (no `goodness` of
    the kind that did not run, no `table_teds` where no document has a table), and a header
    wraps at an underscore, never inside a word."""
    from tests.conftest import GOOD, TRUTH, write_suite
    from tests.test_e2e_kinds import example_kind, write_guesses

    pytester.makeconftest(example_kind())
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    write_guesses(pytester.path)
    write_suite(pytester.path, "tides", {"c0": {"truth": TRUTH, "sys": GOOD}}, systems=["sys"])
    result = pytester.runpytest_subprocess(
        "--doceval", "-k", "tides", "--html=report.html", "--self-contained-html"
    )
    result.assert_outcomes(failed=1)  # no baseline yet
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert 'data-column-type="goodness"' in page  # in the header pytest-html built ...
    measured = probe(
        page,
        "{heads: [...document.querySelectorAll('#results-table th')]"
        ".filter((e) => getComputedStyle(e).display !== 'none')"
        ".map((e) => [e.textContent, e.getClientRects().length,"
        " getComputedStyle(e).overflowWrap, getComputedStyle(e).wordBreak]),"
        " cells: [...document.querySelectorAll('#results-table tbody tr:first-child td')]"
        ".filter((e) => getComputedStyle(e).display !== 'none').length}",
        pytester.path,
    )
    shown = [text for text, *_ in measured["heads"]]
    assert "goodness" not in shown and "table_teds" not in shown, shown  # ... but not shown
    assert {"cer", "wer", "structure_f1"} <= set(shown), shown
    assert measured["cells"] == len(shown)  # each row shows the same columns as its header
    for text, _, wrap, word_break in measured["heads"]:
        assert (wrap, word_break) == ("normal", "normal"), (text, wrap, word_break)
    assert "structure_<wbr>f1" in page


def test_a_case_table_of_long_unbroken_names_fits(tmp_path: Path) -> None:
    """OmniDocBench's image stems are 60-80 characters without a space (issue 37: its case
    table was 1,885 px wide): the case cell breaks them, and the page fits the window."""
    metrics = ["text_edit", "formula_edit", "table_teds", "table_teds_s", "reading_order_edit"]
    stems = [
        "docstructbench_dianzishu_zhongwenzaixian-o.O-61520612.pdf_140",
        "jiaocaineedrop_jiaocai_needrop_en_1527-64-jpg-and-other-long-parts-of-a-page-name",
        "yanbaopptmerge_yanbaoPPT_1090-a-research-report-slide-with-a-long-name",
    ]
    rows = [
        {
            "case": stem,
            "system": "omnidocbench-demo",
            "labels": {"data_source": "book", "language": "simplified_chinese"},
            "outcome": "passed",
            "metrics": dict.fromkeys(metrics, 0.5),
        }
        for stem in stems
    ]
    report = {
        "schema": "doceval-report/1",
        "config": {"confidence": 0.95},
        "interrupted": False,
        "suites": {
            "omnidocbench": {
                "kind": "omnidocbench",
                "systems": ["omnidocbench-demo"],
                "metrics": {m: {"direction": "lower", "headline": True} for m in metrics},
                "analysis_keys": [],
                "results": rows,
                "aggregates": {"omnidocbench-demo": {m: agg(0.5, 0.4, 0.6, n=3) for m in metrics}},
            }
        },
    }
    measured = probe(
        render_html(report),
        "{table: widths('.case-table')[0], page: document.documentElement.scrollWidth,"
        " cases: texts('.case-table tbody tr.case td:first-child')}",
        tmp_path,
    )
    assert measured["cases"] == stems  # broken for the eye only: the text is whole
    assert measured["table"] <= WINDOW and measured["page"] <= WINDOW, measured
