"""score_page and leaderboard without the reference: bad annotations, the page-level means by
hand, truncated groups, the empty prediction (the parity with OmniDocBench's own code is in
test_omnidocbench_parity.py)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.errors import CaseInputError, OmniDocBenchInputError
from pytest_doceval.kinds.omnidocbench.annotations import truth_elements
from pytest_doceval.kinds.omnidocbench.reference import METRIC_OF_ELEMENT, Reference
from pytest_doceval.kinds.omnidocbench.scoring import (
    COMPUTED_METRICS,
    NOT_COMPUTED,
    PAGE_METRICS,
    SCORING_ID,
    PageScore,
    leaderboard,
    not_computed,
    score_page,
    scoring_id,
)

TABLE = "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>"


def _page(*dets: dict[str, Any], relations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "layout_dets": list(dets),
        "extra": {"relation": relations or []},
        "page_info": {"image_path": "p.jpg", "page_attribute": {}},
    }


def _table(anno_id: int, order: int, html: str = TABLE, **extra: Any) -> dict[str, Any]:
    return {"category_type": "table", "anno_id": anno_id, "order": order, "html": html, **extra}


@pytest.mark.parametrize(
    ("page", "cause"),
    [
        ([], "a page is a JSON object"),
        ({"extra": {"relation": []}, "page_info": {"image_path": "x"}}, "no 'layout_dets'"),
        ({**_page(), "layout_dets": "x"}, "'layout_dets' is not a list"),
        (_page({"anno_id": 1}), "layout_dets[0] has no 'category_type'"),
        (_page({"category_type": "table"}), "layout_dets[0] has no 'anno_id'"),
        ({**_page(), "extra": {}}, "'extra' has no 'relation' list"),
        (_page(relations=[{"relation_type": "truncated", "source_anno_id": 1}]), "lacks source"),
        ({**_page(), "page_info": {}}, "'page_info' has no 'image_path'"),
    ],
)
def test_an_annotation_not_in_the_format_names_the_cause(page: Any, cause: str) -> None:
    with pytest.raises(OmniDocBenchInputError, match="not an OmniDocBench annotation page") as err:
        score_page(page, "")
    assert cause in str(err.value)
    assert isinstance(err.value, CaseInputError)


def test_page_table_teds_is_the_mean_over_its_truth_tables() -> None:
    other = "<table><tr><td>x</td></tr></table>"
    page = _page(_table(1, 2), _table(2, 1, other))
    perfect = score_page(page, TABLE + "\n\n" + other)
    assert perfect.metrics == {"table_teds": 1.0, "table_teds_s": 1.0}
    assert perfect.counts["table_teds"] == (2.0, 2.0)
    # Blocks in the truth's reading order (order 1 first), each with its order.
    assert [b.order_truth for b in perfect.blocks] == [1, 2]
    half = score_page(page, other)  # one table missing: TEDS 0 for it
    assert half.metrics["table_teds"] == pytest.approx(0.5)
    assert [b.prediction == "" for b in half.blocks] == [False, True]


def test_a_page_without_tables_has_no_table_metric() -> None:
    page = _page({"category_type": "text_block", "anno_id": 1, "order": 1, "text": "hello"})
    assert score_page(page, TABLE).metrics == {}


def test_ignored_tables_are_not_scored() -> None:
    page = _page(_table(1, 1, ignore=True))
    assert score_page(page, TABLE).metrics == {}


def test_a_truncated_group_with_an_ignored_member_leaves_the_page_at_zero() -> None:
    # The reference leaves the group out, but counts the page (it has a table) with 0.
    group = [{"relation_type": "truncated", "source_anno_id": 1, "target_anno_id": 2}]
    page = _page(
        _table(1, 1, text="a"),
        {"category_type": "text_block", "anno_id": 2, "order": 2, "text": "b", "ignore": True},
        relations=group,
    )
    assert score_page(page, TABLE).metrics == {"table_teds": 0.0, "table_teds_s": 0.0}


def test_truncated_groups_join_their_texts_in_reading_order() -> None:
    relations = [
        {"relation_type": "truncated", "source_anno_id": 3, "target_anno_id": 2},
        {"relation_type": "truncated", "source_anno_id": 2, "target_anno_id": 1},
        {"relation_type": "parent_son", "source_anno_id": 4, "target_anno_id": 1},
    ]
    text = [
        {"category_type": "text_block", "anno_id": i, "order": i, "text": t}
        for i, t in ((3, "c"), (1, "a"), (2, "b"))
    ]
    page = _page(
        *text,
        {"category_type": "title", "anno_id": 4, "order": 0, "text": "T"},
        relations=relations,
    )
    elements = truth_elements(page)
    assert [e["text"] for e in elements["text_block"]] == ["abc"]
    assert [e["text"] for e in elements["title"]] == ["T"]


def test_a_truncated_group_without_text_is_an_input_error() -> None:
    relations = [{"relation_type": "truncated", "source_anno_id": 1, "target_anno_id": 2}]
    with pytest.raises(OmniDocBenchInputError, match="without 'text'"):
        score_page(_page(_table(1, 1), _table(2, 2), relations=relations), "")


def test_an_empty_prediction_is_scored_and_noted() -> None:
    score = score_page(_page(_table(1, 1)), "")
    assert score.metrics == {"table_teds": 0.0, "table_teds_s": 0.0}
    assert score.notes and "empty prediction" in score.notes[0]
    assert not score_page(_page(_table(1, 1)), TABLE).notes


def test_the_leaderboard_is_the_mean_over_the_pages_that_have_each_metric() -> None:
    pages = [
        PageScore({"table_teds": 0.5, "table_teds_s": 1.0}, {}, (), ()),
        PageScore({}, {}, (), ()),
        PageScore({"table_teds": 1.0, "table_teds_s": 0.0}, {}, (), ()),
    ]
    assert leaderboard(pages) == {"table_teds": 0.75, "table_teds_s": 0.5}
    assert leaderboard([]) == {}


def test_every_metric_is_computed_or_says_why_not() -> None:
    assert set(COMPUTED_METRICS) | set(NOT_COMPUTED) == set(PAGE_METRICS)
    assert not set(COMPUTED_METRICS) & set(NOT_COMPUTED)
    page = _page(_table(1, 1))
    assert set(score_page(copy.deepcopy(page), TABLE).metrics) <= set(COMPUTED_METRICS)


def test_with_a_reference_its_three_metrics_are_computed_and_the_scoring_id_says_so(
    tmp_path: Path,
) -> None:
    # Without a reference: unchanged. With one: no metric is left without a reason or a number.
    assert scoring_id(None) == SCORING_ID and not_computed(None) == NOT_COMPUTED
    reference = Reference(tmp_path, None)
    assert scoring_id(reference) == "omnidocbench-v1.6@9dc1dec+text-reference"
    assert dict(not_computed(reference)) == {}
    assert set(COMPUTED_METRICS) | set(METRIC_OF_ELEMENT.values()) == set(PAGE_METRICS)


def test_a_latex_table_is_scored_empty_with_a_note() -> None:
    latex = "\\begin{tabular}{ll}\na & b \\\\\n1 & 2\n\\end{tabular}"
    score = score_page(_page(_table(1, 1)), latex)
    assert score.metrics == {"table_teds": 0.0, "table_teds_s": 0.0}
    assert any("LaTeX table" in note and "latexmlc" in note for note in score.notes)
