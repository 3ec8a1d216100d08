"""score_page and leaderboard without the reference: bad annotations, the page-level means by
hand, truncated groups, the empty prediction, Overall and CDM's page value by hand (the parity
with OmniDocBench's own code is in test_omnidocbench_parity.py)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_doceval.errors import CaseInputError, OmniDocBenchInputError
from pytest_doceval.kinds.omnidocbench.annotations import truth_elements
from pytest_doceval.kinds.omnidocbench.scoring import (
    PAGE_METRICS,
    PageScore,
    cdm_page,
    leaderboard,
    overall,
    score_page,
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
    assert {m: perfect.metrics[m] for m in ("table_teds", "table_teds_s")} == {
        "table_teds": 1.0,
        "table_teds_s": 1.0,
    }
    # Reading order from the tables alone, with OmniDocBench's quirk: the truth table paired
    # with the first predicted table has no predicted position. Truth [1, 2], predicted [1].
    assert perfect.metrics["reading_order_edit"] == 0.5
    assert perfect.counts["table_teds"] == (2.0, 2.0)
    # Blocks in the truth's reading order (order 1 first), each with its order.
    assert [b.order_truth for b in perfect.blocks] == [1, 2]
    half = score_page(page, other)  # one table missing: TEDS 0 for it
    assert half.metrics["table_teds"] == pytest.approx(0.5)
    assert [b.prediction == "" for b in half.blocks] == [False, True]


def test_a_page_without_tables_has_no_table_metric() -> None:
    page = _page({"category_type": "text_block", "anno_id": 1, "order": 1, "text": "hello"})
    assert not {"table_teds", "table_teds_s"} & set(score_page(page, TABLE).metrics)


def test_text_edit_of_one_block_by_hand() -> None:
    # One truth block against one predicted paragraph: normalised (word characters only) and
    # compared by Levenshtein over the longer length; the order sequence [1] against [1].
    page = _page({"category_type": "text_block", "anno_id": 1, "order": 1, "text": "Hello, world"})
    score = score_page(page, "Hallo world!")
    assert score.metrics["text_edit"] == pytest.approx(1 / 10)  # helloworld vs halloworld
    assert score.counts["text_edit"] == (1.0, 10.0)
    assert score.metrics["reading_order_edit"] == 0.0
    assert "formula_edit" not in score.metrics and not score.formulas


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
    # The table unmatched, and the reading order of its one truth table: [1] against [].
    assert score.metrics == {"table_teds": 0.0, "table_teds_s": 0.0, "reading_order_edit": 1.0}
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


def test_overall_is_the_leaderboards_by_hand_and_absent_without_a_part() -> None:
    pages = [
        PageScore({"text_edit": 0.1, "formula_cdm": 0.9, "table_teds": 0.8}, {}, (), ()),
        PageScore({"text_edit": 0.3, "formula_cdm": 0.7}, {}, (), ()),
    ]
    board = leaderboard(pages)
    # Text Edit 0.2, CDM 0.8, TEDS 0.8: ((1 - 0.2) x 100 + 80 + 80) / 3 = 80.
    assert board["overall"] == pytest.approx(80.0, abs=1e-9)
    assert overall({"text_edit": 0.2, "table_teds": 0.8}) is None
    assert "overall" not in leaderboard(pages[1:])
    assert set(PAGE_METRICS) >= {"text_edit", "formula_cdm", "table_teds"}


def test_cdm_page_value_by_hand() -> None:
    assert cdm_page([1.0, 0.5], True) == 0.75
    assert cdm_page([], True) == 0.0  # a display formula in the truth, none matched
    assert cdm_page([], False) is None  # no display formula: CDM does not count the page


def test_a_latex_table_is_scored_empty_with_a_note() -> None:
    latex = "\\begin{tabular}{ll}\na & b \\\\\n1 & 2\n\\end{tabular}"
    score = score_page(_page(_table(1, 1)), latex)
    assert score.metrics == {"table_teds": 0.0, "table_teds_s": 0.0, "reading_order_edit": 1.0}
    assert any("LaTeX table" in note and "latexmlc" in note for note in score.notes)
