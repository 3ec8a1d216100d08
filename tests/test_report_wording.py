"""How the reports word what happened (issue 37's minors): counts in pytest's words, a change
of exactly nothing, and the order of the significant changes in the markdown summary."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_doceval.report.html.frame import outcome_phrase
from pytest_doceval.report.terminal import summary_lines
from pytest_doceval.rows import outcome_count


@pytest.mark.parametrize(
    ("count", "outcome", "words"),
    [(1, "error", "1 error"), (4, "error", "4 errors"), (0, "error", "0 errors")]
    + [(4, "failed", "4 failed"), (1, "passed", "1 passed"), (1_200, "skipped", "1,200 skipped")],
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
