"""Chunk Score's blind spot made visible (issue 19): the documents kind flags chunk_score where
the output lost most of the truth or repeats itself, and the generic report marks the value."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.analyses import AllPairs
from pytest_doceval.kinds.documents.chunks import (
    COVERS_LITTLE,
    REPEATS,
    chunk_score_warnings,
    repeated_share,
    word_coverage,
)
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.report.analysis import analyse_suite
from pytest_doceval.report.compare import compare_reports, format_comparison
from pytest_doceval.report.terminal import summary_lines
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import FLAG_MARK, new_row

CASES = Path(__file__).resolve().parents[1] / "cases"


def _lcs(a: list[str], b: list[str]) -> int:
    """Textbook dynamic programme, written apart from rapidfuzz."""
    row = [0] * (len(b) + 1)
    for x in a:
        previous = 0
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], previous + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


WORDS = st.lists(st.sampled_from(["Tide", "cave", "grid", "pump", "flow", "2024"]), max_size=40)


@settings(max_examples=80, deadline=None)
@given(WORDS, WORDS)
def test_word_coverage_is_the_longest_common_word_subsequence(
    truth: list[str], out: list[str]
) -> None:
    expected = (
        1.0
        if not truth
        else _lcs([w.casefold() for w in truth], [w.casefold() for w in out]) / len(truth)
    )
    assert word_coverage(" ".join(truth), ", ".join(out)) == pytest.approx(expected)


def test_repeated_share_counts_sentences_that_repeat_an_earlier_one() -> None:
    assert repeated_share("A cat sat. A cat sat. A dog ran. A cat sat.") == (0.5, 4)
    assert repeated_share("") == (0.0, 0)


@pytest.mark.skipif(not (CASES / "papers").is_dir(), reason="the example cases are not here")
def test_the_shipped_smollm2_outputs_are_flagged_and_the_truths_are_not() -> None:
    for truth_file in sorted((CASES / "papers").glob("*/truth.md")):
        truth = truth_file.read_text("utf-8")
        assert chunk_score_warnings(truth, truth) == {}
        for output in (truth_file.parent / "outputs").glob("*smollm2.md"):
            warnings = chunk_score_warnings(truth, output.read_text("utf-8"))
            assert COVERS_LITTLE in warnings, output
    repeated = "The tide turns. " * 12
    assert REPEATS in chunk_score_warnings(repeated, repeated)


def test_flags_travel_in_rows() -> None:
    assert new_row("s", "c", "x")["flags"] == {}
    result = CaseResult({"m": 0.5}, flags={"m": ["why"], "n": []})
    assert result.fill_row(new_row("s", "c", "x"))["flags"] == {"m": ["why"]}


SPECS = {"score": MetricSpec("higher"), "other": MetricSpec("higher")}
META = {"kind": "documents", "metrics": {k: v.to_dict() for k, v in SPECS.items()}}


def _rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(6):
        for system, value in (("good", 0.6 + i / 100), ("garbage", 0.9 - i / 100)):
            row = {**new_row("s", f"c{i}", system), "outcome": "passed"}
            row["metrics"] = {"score": value, "other": value / 2}
            row["baseline"] = {"score": value, "other": value / 2}
            if system == "garbage" and i < 4:
                row["flags"] = {"score": ["output lost the text"]}
            rows.append(row)
    return rows


def test_the_report_marks_flagged_values_wherever_compared() -> None:
    suite = analyse_suite(META, _rows(), StatsConfig(resamples=200), (AllPairs(),))
    flagged = suite["aggregates"]["garbage"]["score"]["flagged"]
    assert flagged == {"output lost the text": 4}
    assert "flagged" not in suite["aggregates"]["garbage"]["other"]
    assert "flagged" not in suite["aggregates"]["good"]["score"]
    comparison = next(c for c in suite["comparisons"] if c["metric"] == "score")
    assert comparison["flagged"] == {"garbage": flagged}
    delta = next(
        d for d in suite["baseline_deltas"] if d["system"] == "garbage" and d["metric"] == "score"
    )
    assert delta["flagged"] == flagged
    lines = summary_lines({"suites": {"s": {**suite, "scoring_id": "x"}}})
    text = "\n".join(lines)
    assert re.search(rf"garbage .*0\.\d{{3}}{FLAG_MARK} \[", text)
    assert f"{FLAG_MARK} score [garbage] may mislead: output lost the text (4 of 6 cases)" in text
    report = {"suites": {"s": {**suite, "scoring_id": "x"}}}
    rows = compare_reports(report, report)
    shown = format_comparison(rows, show_all=True)
    assert f"score{FLAG_MARK}" in shown
    assert f"{FLAG_MARK} s score [garbage]: output lost the text (4 cases)" in shown
    assert "MDE" in shown.splitlines()[0]
