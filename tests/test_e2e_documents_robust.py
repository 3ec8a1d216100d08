"""Issue 26 as a user meets it in a plain ``pytest --doceval`` run: an empty truth is an error
of its own test (and never a baseline), and one page-number page that owns the CER mean gets a
note and a mark on that mean, with ``ned`` beside it."""

from __future__ import annotations

import pytest

from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]

TRUTH = "# Ferry\n\nThe ferry leaves at nine and returns at noon.\n"
OUTPUT = "Ferry\nThe ferry leaves at nine and returns at noon.\n"


def test_an_empty_truth_errors_on_its_own_test_and_is_no_baseline(
    pytester: pytest.Pytester,
) -> None:
    cases = {
        "good": {"truth": TRUTH, "sys": OUTPUT},
        "typo": {"truth": TRUTH, "sys": OUTPUT.replace("nine", "nin")},
        "empty": {"truth": "", "sys": "A page of hallucinated text the truth does not have."},
        "spaces": {"truth": " \n\t\n\u00a0\n", "sys": "12"},
    }
    write_suite(pytester.path, "docs", cases, systems=["sys"], gates="")
    result = pytester.runpytest("--doceval", "--doceval-update", "-rE")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "ERROR *empty[[]sys] - *truth file is empty*",
            "ERROR *spaces[[]sys] - *truth file is empty*",
            "*truth file is empty (nothing but whitespace)*(cases/docs/empty/truth.md)",
            "*docs: baseline baselines/docs.json updated (2 added)*",
        ]
    )
    report = read_report(pytester.path / "doceval-report.json")
    rows = {r["case"]: r for r in report["suites"]["docs"]["results"]}
    assert rows["empty"]["outcome"] == rows["spaces"]["outcome"] == "error"
    assert rows["empty"]["metrics"] == {}
    assert report["suites"]["docs"]["aggregates"]["sys"]["cer"]["n"] == 2
    baseline = (pytester.path / "baselines" / "docs.json").read_text(encoding="utf-8")
    assert "good[sys]" in baseline and "typo[sys]" in baseline
    assert "empty[sys]" not in baseline and "spaces[sys]" not in baseline


def test_a_page_number_truth_gets_a_note_and_marks_the_cer_mean(
    pytester: pytest.Pytester,
) -> None:
    """Five pages near CER 0.1 and one truth holding only its page number against a
    40-character output (the issue's example): the mean is that page's, so it is marked."""
    body = "Tidal storage keeps water behind a barrage and lets it out later."
    cases = {
        f"page{i}": {"truth": body, "sys": body.replace("water", "wa").replace("later", "l8r")}
        for i in range(5)
    }
    cases["pageno"] = {"truth": "12\n", "sys": "Proceedings of the Tidal Energy Forum 12\n"}
    write_suite(pytester.path, "pages", cases, systems=["sys"], gates="")
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines_random(
        [
            "*note on pageno[[]sys]: cer: the output inserts 38 characters where the truth has 2*",
            "*sys *†*",
            "*† cer [[]sys] may mislead: insertions exceed the truth's length (1 of 6 cases)*",
        ]
    )
    report = read_report(pytester.path / "doceval-report.json")
    suite = report["suites"]["pages"]
    rows = {r["case"]: r for r in suite["results"]}
    assert rows["pageno"]["flags"] == {"cer": ["insertions exceed the truth's length"]}
    assert rows["pageno"]["metrics"]["cer"] == 19.0  # 38 insertions over 2 characters
    assert rows["pageno"]["metrics"]["ned"] == 38 / 40
    assert all("flags" not in r or not r["flags"] for c, r in rows.items() if c != "pageno")
    cer, ned = suite["aggregates"]["sys"]["cer"], suite["aggregates"]["sys"]["ned"]
    assert cer["flagged"] == {"insertions exceed the truth's length": 1}
    assert cer["mean"] > 3 and 0 <= ned["mean"] <= 1 and "flagged" not in ned
    assert suite["scoring_id"].startswith("fair-v1@r4")
    html = (pytester.path / "doceval-report.html").read_text(encoding="utf-8")
    legend = "<li><b>cer</b> [sys]: insertions exceed the truth&#39;s length (1 of 6 cases)</li>"
    assert legend in html
