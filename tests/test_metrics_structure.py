"""Structure P/R/F1 on crafted markdown, counted by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_doceval.kinds.documents.structure import extract_elements, structure_score

TRUTH = """# Title

## 1. Method

Some text with **bold**.

- first point
- second point

1. step one
2. step two

| Site | Flow |
|------|------|
| A    | 3    |

```
code here
```
"""


def test_extract_elements_types_and_text() -> None:
    assert extract_elements(TRUTH) == [
        ("heading", "title"),
        ("heading", "1. method"),
        ("unordered_list", "first point"),
        ("unordered_list", "second point"),
        ("ordered_list", "step one"),
        ("ordered_list", "step two"),
        ("table_row", "site|flow"),
        ("table_row", "a|3"),
        ("code_block", "code here"),
    ]


def test_perfect_copy_scores_one() -> None:
    score = structure_score(TRUTH, TRUTH)
    assert score.overall.to_dict() == {"tp": 9, "fp": 0, "fn": 0}
    assert score.metrics()["structure_f1"] == 1.0


def test_plain_text_without_markers_gets_zero_recall() -> None:
    plain = "Title\nMethod\nSome text with bold.\nfirst point\nSite Flow\nA 3\n"
    score = structure_score(TRUTH, plain)
    assert score.overall.to_dict() == {"tp": 0, "fp": 0, "fn": 9}
    assert score.overall.recall == 0.0 and score.overall.f1 == 0.0


def test_plain_numbered_and_dashed_lines_are_list_items_as_the_seed_implies() -> None:
    # The seed's ordered-list pattern ^\s*\d+\.\s+ holds for a PDF's plain "1. step one" line,
    # and ^\s*[-*+]\s+ for "- first point": a plain-text parser can match list items.
    plain = "Title\n1. Method\nSome text with bold.\n- first point\n1. step one\n2. step two\n"
    score = structure_score(TRUTH, plain)
    # TP: first point, step one, step two; FP: "1. Method" (a heading in the truth).
    assert score.overall.to_dict() == {"tp": 3, "fp": 1, "fn": 6}
    assert score.metrics()["structure_recall_ordered_list"] == 1.0
    assert score.metrics()["structure_recall_heading"] == 0.0


def test_hand_counted_partial_match() -> None:
    predicted = """# Title
### 1. Method
- first point
- a hallucinated point
1. step one
| Site | Flow |
"""
    score = structure_score(TRUTH, predicted)
    # TP: title, method (level ignored), first point, step one, site|flow = 5
    # FP: hallucinated point = 1 ; FN: second point, step two, a|3, code block = 4
    assert score.overall.to_dict() == {"tp": 5, "fp": 1, "fn": 4}
    assert score.overall.precision == pytest.approx(5 / 6)
    assert score.overall.recall == pytest.approx(5 / 9)
    p, r = 5 / 6, 5 / 9
    assert score.overall.f1 == pytest.approx(2 * p * r / (p + r))
    m = score.metrics()
    assert m["structure_f1_heading"] == 1.0
    assert m["structure_recall_unordered_list"] == 0.5
    assert m["structure_precision_unordered_list"] == 0.5
    assert m["structure_recall_code_block"] == 0.0
    assert "structure_precision_code_block" in m


def test_duplicates_count_as_multisets() -> None:
    score = structure_score("- a\n- a\n", "- a\n- a\n- a\n")
    assert score.overall.to_dict() == {"tp": 2, "fp": 1, "fn": 0}


def test_nothing_to_find_nothing_found() -> None:
    score = structure_score("plain text", "other plain text")
    assert score.metrics() == {
        "structure_precision": 1.0,
        "structure_recall": 1.0,
        "structure_f1": 1.0,
    }


lines = st.lists(
    st.sampled_from(["# A", "## B", "- x", "- y", "1. z", "| p | q |", "text", "* x"]), max_size=12
)


@given(lines, lines)
def test_scores_are_bounded_and_symmetric_in_tp(truth: list[str], pred: list[str]) -> None:
    a = structure_score("\n".join(truth), "\n".join(pred))
    b = structure_score("\n".join(pred), "\n".join(truth))
    assert a.overall.tp == b.overall.tp
    assert a.overall.fp == b.overall.fn
    for value in a.metrics().values():
        assert 0.0 <= value <= 1.0
