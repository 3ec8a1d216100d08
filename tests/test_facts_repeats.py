"""Repeat aggregation (olmOCR's "more than half") and the suite folder layout, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_doceval.kinds.facts import (
    check_repeats,
    fact_files,
    find_repeat_outputs,
    load_fact_files,
    output_path,
    pass_rate,
    system_dirs,
)
from pytest_doceval.kinds.facts.model import parse_fact
from pytest_doceval.kinds.facts.repeats import aggregate_repeats
from pytest_doceval.kinds.facts.result import FactResult

PRESENT = parse_fact({"pdf": "d.pdf", "page": 1, "id": "p", "type": "present", "text": "Hello"})

P, F, S = FactResult(True, 1.0, "ok"), FactResult(False, 0.2, "missing"), FactResult(None, 0.5, "?")


@pytest.mark.parametrize(
    ("repeats", "passed", "score"),
    [
        ([P], True, 1.0),
        ([F], False, 0.0),
        ([P, F], False, 0.5),  # exactly half is not "more than half"
        ([P, P, F], True, 2 / 3),
        ([P, F, P, F], False, 0.5),
        ([P, P, P, F], True, 0.75),
        ([S], None, 0.0),
        ([P, S], None, 0.5),  # passes if the skipped repeat would have passed
        ([P, P, S], True, 2 / 3),  # passes even if it would have failed
        ([F, S, S], None, 0.0),
        ([F, F, S], False, 0.0),  # fails even if it would have passed
    ],
)
def test_more_than_half_of_the_repeats_must_pass(
    repeats: list[FactResult], passed: bool | None, score: float
) -> None:
    result = aggregate_repeats(repeats)
    assert result.passed is passed
    assert result.score == pytest.approx(score)
    assert result.repeats == tuple(repeats)


def test_no_output_is_a_failure() -> None:
    result = check_repeats(PRESENT, [], latin_only=True)
    assert (result.passed, result.score) == (False, 0.0)
    assert "no output for this page" in result.explanation


def test_explanation_counts_repeats_and_quotes_the_first_failing_one() -> None:
    result = check_repeats(PRESENT, ["Hello", "Goodbye", "Hello there"], latin_only=True)
    assert result.passed is True
    assert result.explanation.startswith("passed in 2/3 repeats; repeat 2: 'Hello' not found")
    failing = check_repeats(PRESENT, ["Goodbye", "Hello"], latin_only=True)
    assert failing.explanation.startswith(
        "passed in 1/2 repeats (more than half must pass); repeat 1:"
    )
    assert failing.pass_fraction == 0.5
    assert [r.passed for r in failing.repeats] == [False, True]
    single = check_repeats(PRESENT, ["Hello"], latin_only=True)
    assert single.explanation == "found 'Hello' (similarity 1.000)"
    assert single.to_dict()["repeats"][0]["passed"] is True


def test_a_pass_carries_the_caveat_of_its_shorter_output_repeats() -> None:
    fact = parse_fact({"pdf": "d.pdf", "page": 1, "id": "p", "type": "present", "text": "a b"})
    passed = check_repeats(fact, ["\n", "say a b", " "], latin_only=True)
    assert passed.passed is True
    assert passed.caveat.startswith("2 of 3 repeats: present passed on an output shorter")
    strict = check_repeats(fact, ["\n", "say a b", " "], latin_only=True, fail_shorter=True)
    assert (strict.passed, strict.pass_fraction, strict.caveat) == (False, 1 / 3, "")
    # a fact that fails carries no caveat, whatever its passing repeats were
    assert check_repeats(fact, ["\n", "x", "y"], latin_only=True).caveat == ""
    assert check_repeats(fact, ["say a b"] * 2, latin_only=True).caveat == ""


def test_output_paths_follow_olmocr_naming(tmp_path: Path) -> None:
    assert output_path(tmp_path / "sys", "arxiv/paper.v2.pdf", 3, 1) == (
        tmp_path / "sys" / "arxiv" / "paper.v2_pg3_repeat1.md"
    )
    with pytest.raises(ValueError):
        output_path(tmp_path, "a.pdf", 0, 1)


def test_find_repeat_outputs_orders_numerically_and_matches_the_page_exactly(
    tmp_path: Path,
) -> None:
    for name in [
        "doc_pg1_repeat10.md",
        "doc_pg1_repeat2.md",
        "doc_pg1_repeat1.md",
        "doc_pg10_repeat1.md",  # page 10, not page 1
        "xdoc_pg1_repeat1.md",
        "doc_pg1_repeat1.md.bak",
    ]:
        (tmp_path / name).write_text("x")
    found = find_repeat_outputs(tmp_path, "doc.pdf", 1)
    assert [p.name for p in found] == [
        "doc_pg1_repeat1.md",
        "doc_pg1_repeat2.md",
        "doc_pg1_repeat10.md",
    ]
    assert find_repeat_outputs(tmp_path, "missing/doc.pdf", 1) == []
    (tmp_path / "a+b_pg1_repeat1.md").write_text("x")  # regex characters in the stem
    assert len(find_repeat_outputs(tmp_path, "a+b.pdf", 1)) == 1


def test_a_small_suite_end_to_end(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "pdfs" / "sub").mkdir(parents=True)
    facts = {
        "text.jsonl": [
            {"pdf": "a.pdf", "page": 1, "id": "t1", "type": "present", "text": "Alpha"},
            {"pdf": "a.pdf", "page": 1, "id": "t2", "type": "absent", "text": "Footer"},
            {"pdf": "sub/b.pdf", "page": 2, "id": "t3", "type": "present", "text": "Beta"},
        ],
        "order.jsonl": [
            {
                "pdf": "a.pdf",
                "page": 1,
                "id": "o1",
                "type": "order",
                "before": "Alpha",
                "after": "Omega",
            },
        ],
    }
    for name, rows in facts.items():
        (suite / name).write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    outputs = {
        ("a.pdf", 1): ["Alpha ... Omega", "Omega ... Alpha", "Alpha Omega Footer"],
        ("sub/b.pdf", 2): ["Beta"],
    }
    for (pdf, page), texts in outputs.items():
        for repeat, text in enumerate(texts, start=1):
            path = output_path(suite / "sys", pdf, page, repeat)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    (suite / "empty_system").mkdir()

    assert [p.name for p in fact_files(suite)] == ["order.jsonl", "text.jsonl"]
    assert list(system_dirs(suite)) == ["empty_system", "sys"]
    loaded = load_fact_files(fact_files(suite))
    results = {
        name: [
            check_repeats(
                fact,
                [
                    p.read_text(encoding="utf-8")
                    for p in find_repeat_outputs(suite / "sys", fact.pdf, fact.page)
                ],
                latin_only=True,
            )
            for fact in file_facts
        ]
        for name, file_facts in loaded.items()
    }
    # order.jsonl: o1 passes in repeats 1 and 3 -> 1/1. text.jsonl: t1 passes (3/3), t2 fails
    # (absent in 2/3 -> passes), t3 passes -> 3/3. Both files 1.0.
    assert [r.passed for r in results["text.jsonl"]] == [True, True, True]
    assert results["text.jsonl"][1].score == pytest.approx(2 / 3)
    assert pass_rate(results) == 1.0
    empty = {
        name: [check_repeats(fact, [], latin_only=True) for fact in file_facts]
        for name, file_facts in loaded.items()
    }
    assert pass_rate(empty) == 0.0
