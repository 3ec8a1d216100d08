"""What a reviewer reads first (issue 18), in real headless Chromium on rendered text: the
failed tests lead each suite and link to their rows, no words contradict an outcome, the case
table filters by outcome from the URL, analyses fold below the cases (exam ones as tables),
a passed row's note (a known failure, a repaired PDF) shows in the case table, and the page
counts tests as pytest does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_html_chromium import CHROMIUM, chromium, dump, shown_text
from test_html_report import documents_report

from tests.conftest import write_suite

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")
pytest_plugins = ["pytester"]


def _failed_row(report: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    rows = report["suites"]["papers"]["results"]
    return next((i, r) for i, r in enumerate(rows) if r["outcome"] == "failed")


@pytest.fixture(scope="module")
def lead_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shown_text(documents_report(), tmp_path_factory.mktemp("lead"), fragment="")


def test_what_changed_lists_the_failed_tests_before_anything_else(lead_text: str) -> None:
    report = documents_report()
    _, row = _failed_row(report)
    start = lead_text.index("What changed against the baseline")
    assert start < lead_text.index("Summary: mean")
    listed = lead_text[start : lead_text.index("Summary: mean")]
    assert "Tests that did not pass: 1 failed" in listed
    assert f"failed {row['case']} [{row['system']}]" in listed
    assert " ".join(row["message"].split())[:40] in listed  # the gate's message


def test_words_never_contradict_a_failed_test(lead_text: str) -> None:
    assert "No metric changed significantly" not in lead_text
    assert "≈ baseline" not in lead_text
    assert re.search(r"not significant at n = \d+", lead_text)


def test_hash_q_failed_filters_the_case_table(tmp_path: Path) -> None:
    report = documents_report()
    rows = report["suites"]["papers"]["results"]
    text = shown_text(report, tmp_path, fragment="#q=failed")
    failed = sum(r["outcome"] == "failed" for r in rows)
    assert f"showing {failed} of {failed} matching, {len(rows)} in all" in text


def test_a_failed_test_links_to_its_opened_row(tmp_path: Path) -> None:
    report = documents_report()
    number, _ = _failed_row(report)
    dom = dump(report, tmp_path, fragment=f"#case-s0-r{number}")
    assert f'href="#case-s0-r{number}"' in dom
    opened = re.findall(r'<tr class="case[^"]*"[^>]*data-i="(\d+)"[^>]*aria-expanded="true"', dom)
    opened += re.findall(r'<tr class="case[^"]*"[^>]*aria-expanded="true"[^>]*data-i="(\d+)"', dom)
    assert opened == [str(number)], opened


def test_analyses_fold_below_the_cases(lead_text: str) -> None:
    assert "Analyses: comparisons" in lead_text
    assert lead_text.index("Cases (") < lead_text.index("Analyses: comparisons")
    assert "Pairwise comparisons" not in lead_text  # folded: a click away


EXAM_ANALYSES = {
    "anova": [
        {
            "track": "B1",
            "n": 12,
            "method": "Type II sums of squares, additive OLS, model as block",
            "effects": [
                {
                    "name": "nation",
                    "ss": 0.5072,
                    "df": 2,
                    "f": 1.8502,
                    "p": 0.2264,
                    "eta_squared": 0.2254,
                    "partial_eta_squared": 0.3458,
                },
                {
                    "name": "task",
                    "ss": 0.7905,
                    "df": 2,
                    "f": 2.8838,
                    "p": 0.1220,
                    "eta_squared": 0.3514,
                    "partial_eta_squared": 0.4517,
                },
            ],
        }
    ],
    "consistency": [
        {
            "track": "B1",
            "models": [
                {
                    "model": "smollm2",
                    "n": 12,
                    "var_nation": 0.0625,
                    "var_task": 0.117,
                    "ratio": 0.534,
                    "larger": "task",
                }
            ],
            "nation_larger": 0,
            "task_larger": 1,
            "undecided": 0,
            "p_binomial": 1.0,
            "consistent": False,
        }
    ],
    "references": {
        "random": 0.2208,
        "random_by_track": {"A": 0.2208},
        "random_by_nation": {"Korea": 0.2125},
        "human_pass_marks": {"Korea": 0.6},
    },
}


def test_exam_analyses_render_as_tables(tmp_path: Path) -> None:
    report = {
        "schema": "doceval-report/1",
        "suites": {
            "exams": {
                "kind": "exam",
                "results": [],
                "analysis_keys": list(EXAM_ANALYSES),
                **EXAM_ANALYSES,
            }
        },
    }
    page = tmp_path / "report.html"
    from pytest_doceval.report.html import render_html

    # Open the fold for printing: markup is not under the page's CSP hashes.
    page.write_text(
        render_html(report).replace('<details class="analyses">', '<details class="analyses" open>')
    )
    pdf = tmp_path / "report.pdf"
    chromium(page.as_uri(), tmp_path / "profile", f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    import pymupdf

    with pymupdf.open(pdf) as doc:
        text = " ".join(" ".join(p.get_text() for p in doc).split())
    assert "What explains correctness: nation or task (ANOVA per track)" in text
    assert "task 0.790 2 2.88 0.122 0.351 0.452" in text  # 0.7905 as a float: 0.790
    assert "smollm2 12 0.0625 0.1170 0.53 task" in text
    assert "binomial p = 1.000" in text and "not consistent" in text
    assert "human pass mark, Korea 0.600" in text and "random guess, track A 0.221" in text
    assert '"effects"' not in text and "{" not in text  # no raw JSON


def test_a_passed_rows_note_shows_in_the_case_table(tmp_path: Path) -> None:
    report = documents_report()
    rows = report["suites"]["papers"]["results"]
    passed = next(r for r in rows if r["outcome"] == "passed")
    passed.pop("message", None)
    passed["notes"] = ["known failure (it failed in the baseline too): 'x' not found"]
    text = shown_text(report, tmp_path, fragment="")
    assert "note: known failure (it failed in the baseline too): 'x' not found" in text


def test_the_page_counts_tests_as_pytest_does(pytester: pytest.Pytester) -> None:
    """A broken suite (pytest: failed), a bad input (error), a gate failure (failed)."""
    truth = "tidal storage moves water between two basins"
    cases = {f"c{i}": {"truth": truth, "sys": truth} for i in range(3)}
    suite = write_suite(pytester.path, "tides", cases, systems=["sys"], gates='cer = "<= 0.01"\n')
    (suite / "c1" / "truth.md").unlink()  # error: nothing to score against
    (suite / "c2" / "outputs" / "sys.md").write_text("tidal storage")  # fails its bound
    broken = pytester.path / "cases" / "broken"
    broken.mkdir(parents=True)
    (broken / "suite.toml").write_text('[suite]\nkind = "no-such-kind"\n')
    result = pytester.runpytest("--doceval")
    # Test outcomes only: a machine's environment may add "N warnings" to the line.
    outcomes = {k: n for k, n in result.parseoutcomes().items() if not k.startswith("warning")}
    assert outcomes in (
        {"failed": 2, "passed": 1, "error": 1},
        {"failed": 2, "passed": 1, "errors": 1},
    )
    pdf = pytester.path / "report.pdf"
    chromium(
        (pytester.path / "doceval-report.html").as_uri(),
        pytester.path / "profile",
        f"--print-to-pdf={pdf}",
        "--no-pdf-header-footer",
    )
    import pymupdf

    with pymupdf.open(pdf) as doc:
        text = " ".join(" ".join(p.get_text() for p in doc).split())
    assert "2 suites, 4 tests: 1 error, 2 failed, 1 passed" in text
