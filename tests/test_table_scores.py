"""A document's tables against its truth's (issue 20): pairing by optimal assignment (checked
against brute force), missing and invented tables, no metric without truth tables, counts,
notes and the view."""

from __future__ import annotations

import itertools
import random

import pytest

from pytest_doceval.kinds.documents.suite import DocumentsSuite
from pytest_doceval.kinds.documents.table_trees import read_tables
from pytest_doceval.kinds.documents.tables import TABLE_METRICS, pair_tables, score_tables
from pytest_doceval.kinds.documents.teds import teds

A = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |"
B = "| name | age | town |\n|---|---|---|\n| Ann | 31 | Ely |"
C = "| x |\n|---|\n| only |"


def test_identical_tables_in_another_order_score_one() -> None:
    score = score_tables(f"{A}\n\ntext\n\n{B}", f"{B}\n\n{A}")
    assert score.metrics == {
        "table_teds": 1.0,
        "table_teds_s": 1.0,
        "grits_con": 1.0,
        "grits_top": 1.0,
        "table_detection_precision": 1.0,
        "table_detection_recall": 1.0,
        "table_detection_f1": 1.0,
    }
    assert score.counts["tables"] == {"truth": 2, "output": 2, "matched": 2}
    pairs = score.views["tables"]["pairs"]
    assert [(p["truth"], p["output"]) for p in pairs] == [(0, 1), (1, 0)]
    assert pairs[0]["truth_rows"] == [["a", "b"], ["1", "2"], ["3", "4"]]


def test_missing_and_invented_tables_score_zero() -> None:
    missing = score_tables(f"{A}\n\n{B}", A)
    assert missing.metrics["table_teds"] == pytest.approx(0.5)
    assert missing.counts["tables"] == {"truth": 2, "output": 1, "matched": 1}
    invented = score_tables(A, f"{A}\n\n{B}\n\n{C}")
    assert invented.metrics["table_teds"] == pytest.approx(1 / 3)
    assert invented.metrics["table_teds_s"] == pytest.approx(1 / 3)
    nothing = score_tables(A, "the table was read as plain text: a b 1 2 3 4")
    assert nothing.metrics == {
        "table_teds": 0.0,
        "table_teds_s": 0.0,
        "grits_con": 0.0,
        "grits_top": 0.0,
        "table_detection_recall": 0.0,  # no precision: the output claims no table
        "table_detection_f1": 0.0,
    }
    assert nothing.counts["tables"]["matched"] == 0


def test_no_truth_table_means_no_teds_but_invented_tables_are_counted() -> None:
    assert score_tables("just text", "just text").metrics == {}
    invented = score_tables("just text", A)
    assert invented.metrics == {"table_detection_precision": 0.0, "table_detection_f1": 0.0}
    assert invented.counts == {
        "table_detection_precision/tables": {"matched": 0.0, "total": 1.0},
        "table_detection_f1/tables": {"matched": 0.0, "total": 1.0},
    }
    assert invented.views == {}
    assert invented.notes == [
        "the truth has no table but the output has 1: no TEDS or GriTS for this case; table "
        "detection counts them as invented"
    ]


def test_detection_counts_by_hand() -> None:
    """Two truth tables, three output tables of which one is A again and one B with a cell
    changed (both found) and one unrelated: precision 2/3, recall 2/2, F1 2 x 2 / 5."""
    unrelated = "| q |\n|---|\n| zz |"
    scored = score_tables(f"{A}\n\n{B}", f"{unrelated}\n\n{A}\n\n{B.replace('Ann', 'Anne')}")
    assert scored.metrics["table_detection_precision"] == pytest.approx(2 / 3)
    assert scored.metrics["table_detection_recall"] == 1.0
    assert scored.metrics["table_detection_f1"] == pytest.approx(4 / 5)
    assert scored.counts["table_detection_f1/tables"] == {"matched": 4.0, "total": 5.0}
    # A table sharing nothing with the truth's is invented, not found: TEDS 0 is no match.
    assert score_tables(A, unrelated).metrics["table_detection_recall"] == 0.0


def test_detection_refuses_impossible_counts() -> None:
    from pytest_doceval.kinds.documents.table_detection import detection_scores

    with pytest.raises(ValueError, match="found 3"):
        detection_scores(2, 5, 3)
    assert detection_scores(0, 0, 0).metrics == {}


def test_reader_notes_name_the_side() -> None:
    score = score_tables(A, "| a | b |\n|---|---|\n| 1 |\n| 3 | 4 |")
    assert score.notes == [
        "output: pipe table 1: row 2 has 1 cell where the separator sets 2 columns: padded "
        "with empty cells, as pandoc reads it"
    ]
    assert 0 < score.metrics["table_teds"] < 1


def test_pairing_is_the_best_one_to_one_assignment() -> None:
    rnd = random.Random(5)

    def table() -> str:
        rows = rnd.randint(1, 3)
        cols = rnd.randint(1, 3)
        lines = ["|" + "|".join(rnd.choice("abc") for _ in range(cols)) + "|", "|---" * cols + "|"]
        lines += [
            "|" + "|".join(rnd.choice("xyz1") for _ in range(cols)) + "|" for _ in range(rows)
        ]
        return "\n".join(lines)

    for _ in range(25):
        truth = read_tables("\n\n".join(table() for _ in range(rnd.randint(1, 4)))).tables
        output = read_tables("\n\n".join(table() for _ in range(rnd.randint(0, 4)))).tables
        pairs = pair_tables(truth, output)
        n = max(len(truth), len(output))
        best = max(
            sum(
                teds(truth[i], output[j])
                for i, j in enumerate(perm)
                if i < len(truth) and j < len(output)
            )
            for perm in itertools.permutations(range(n))
        )
        assert sum(p.teds for p in pairs) == pytest.approx(best)
        assert sorted(p.truth for p in pairs if p.truth is not None) == list(range(len(truth)))
        assert sorted(p.output for p in pairs if p.output is not None) == list(range(len(output)))


def test_table_metrics_are_metrics_of_the_documents_kind() -> None:
    for name in TABLE_METRICS:
        spec = DocumentsSuite.metrics[name]
        assert spec.direction == "higher" and spec.bounds == (0.0, 1.0)
    headline = {name for name in TABLE_METRICS if DocumentsSuite.metrics[name].headline}
    assert headline == {
        "table_teds",
        "table_teds_s",
        "grits_con",
        "grits_top",
        "table_detection_f1",
    }


def test_tables_too_large_for_an_exact_distance_are_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_doceval.metrics import tree_edit

    monkeypatch.setattr(tree_edit, "MAX_CELLS", 10)
    score = score_tables(A, A.replace("4", "5"))
    assert score.metrics == {}
    assert score.notes[0].startswith("table metrics not scored: trees of")
