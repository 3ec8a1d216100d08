"""How the reports word what happened (issue 37's minors): counts in pytest's words, a change
of exactly nothing, and the order of the significant changes in the markdown summary."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_doceval.html.model import change
from pytest_doceval.report.html.frame import outcome_phrase
from pytest_doceval.report.html.summary import _delta_html, delta_title
from pytest_doceval.report.markdown import summary_markdown
from pytest_doceval.report.terminal import summary_lines
from pytest_doceval.rows import outcome_count


@pytest.mark.parametrize(
    ("count", "outcome", "words"),
    [
        (1, "error", "1 error"),
        (4, "error", "4 errors"),
        (0, "error", "0 errors"),
        (4, "failed", "4 failed"),
        (1, "passed", "1 passed"),
        (1_200, "skipped", "1,200 skipped"),
    ],
)
def test_a_count_of_an_outcome_reads_as_pytest_says_it(
    count: int, outcome: str, words: str
) -> None:
    assert outcome_count(count, outcome) == words


def test_the_terminal_and_the_page_say_errors() -> None:
    report: Any = {
        "suites": {"tides": {"kind": "documents", "outcomes": {"error": 4, "passed": 2}}}
    }
    assert summary_lines(report)[0] == "tides (documents, -): 4 errors, 2 passed"
    assert outcome_phrase({"passed": 2, "error": 4}) == "4 errors, 2 passed"


def _delta(diff: float, low: float | None, high: float | None, n: int) -> dict[str, Any]:
    return {
        "mean_diff": diff,
        "ci_low": low,
        "ci_high": high,
        "n": n,
        "baseline_mean": 0.1,
        "significant": False,
        "verdict": "unchanged",
    }


def _shown(delta: dict[str, Any]) -> str:
    html = str(_delta_html(delta, "lower", 0.95))
    return " ".join(re.sub(r"<[^>]+>", " ", re.sub(r' title="[^"]*"', "", html)).split())


def test_a_change_of_exactly_nothing_reads_unchanged() -> None:
    """Every case as in the baseline: "unchanged", not "not significant" (which says a change
    too small to tell from noise), in the cell and in its tooltip."""
    assert _shown(_delta(0.0, 0.0, 0.0, 5)).endswith("vs baseline unchanged")
    assert _shown(_delta(0.0, None, None, 1)).endswith("vs baseline unchanged")
    title = delta_title(_delta(0.0, 0.0, 0.0, 5), change(_delta(0.0, 0.0, 0.0, 5), "lower"), 0.95)
    assert title.endswith("— unchanged: every case as in the baseline")


def test_a_mean_of_zero_whose_cases_moved_is_not_unchanged() -> None:
    moved = _delta(0.0, -0.02, 0.02, 5)
    assert _shown(moved).endswith("vs baseline not significant at n = 5")
    assert delta_title(moved, change(moved, "lower"), 0.95).endswith("— not significantly changed")
    assert _shown(_delta(0.001, None, None, 1)).endswith("vs baseline not testable (n = 1)")


def _moved(metric: str, system: str, verdict: str, diff: float, d: float | None) -> dict[str, Any]:
    entry = {**_delta(diff, diff - 0.01, diff + 0.01, 6), "significant": True, "verdict": verdict}
    return {**entry, "metric": metric, "system": system, "current_mean": 0.2, "cohens_d": d}


def test_the_summary_lists_significant_changes_worst_first() -> None:
    """Worse before better, and within each the change that stands out most from its cases'
    spread (|Cohen's d_z|; a change every case made alike, d written as null, first) -- not
    by suite, metric and system name as the deltas come."""
    deltas = [
        _moved("cer", "a-parser", "worse", 0.01, 0.4),
        _moved("cer", "b-parser", "better", -0.03, -2.0),
        _moved("wer", "a-parser", "worse", 0.02, 3.1),
        _moved("ned", "z-parser", "worse", 0.005, None),  # every case +0.005
        _moved("wer", "b-parser", "unchanged", 0.0, 0.0),
    ]
    report: Any = {"suites": {"papers": {"baseline_deltas": deltas, "outcomes": {"passed": 6}}}}
    text = summary_markdown(report, [])
    table = [
        line for line in text.splitlines() if line.startswith("| **WORSE**") or "| better" in line
    ]
    order = [(cells[3].strip(), cells[4].strip()) for cells in (line.split("|") for line in table)]
    assert order == [
        ("z-parser", "ned"),
        ("a-parser", "wer"),
        ("a-parser", "cer"),
        ("b-parser", "cer"),
    ]
    assert "Significant changes (3 worse, 1 better)" in text


def test_baseline_deltas_carry_cohens_d() -> None:
    from pytest_doceval.config import StatsConfig
    from pytest_doceval.kinds.analyses import paired_change_row
    from pytest_doceval.stats.comparisons import paired_change

    now, before = [0.2, 0.25, 0.3, 0.4], [0.1, 0.2, 0.1, 0.3]
    row = paired_change_row(now, before, "lower", StatsConfig())
    assert row["cohens_d"] == pytest.approx(paired_change(now, before).cohens_d)
    diffs = [a - b for a, b in zip(now, before, strict=True)]
    mean = sum(diffs) / 4
    sd = (sum((x - mean) ** 2 for x in diffs) / 3) ** 0.5
    assert row["cohens_d"] == pytest.approx(mean / sd)  # d_z, by hand


def test_the_terminals_n_is_a_range_where_metrics_count_different_cases() -> None:
    """OmniDocBench's 18 pages, 3 with display formulas: the column said '18*' under a note on
    fewer than 10 cases, which was the formulas' n, not the 18 (issue 37)."""
    from pytest_doceval.report.terminal import _table

    def entry(n: int) -> dict[str, Any]:
        return {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": n, "small_n": n < 10}

    lines = _table(
        {"demo": {"text_edit": entry(18), "formula_edit": entry(3)}}, ["text_edit", "formula_edit"]
    )  # type: ignore[dict-item]
    assert lines[1].split()[-1] == "3-18*"
    assert "the metrics count different cases" in lines[2]
    assert "a metric with fewer than 10 cases" in lines[3]
    even = _table({"demo": {"text_edit": entry(18)}}, ["text_edit"])  # type: ignore[dict-item]
    assert even[1].split()[-1] == "18" and len(even) == 2
