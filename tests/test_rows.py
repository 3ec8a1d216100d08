"""The one row builder: a test's row from its `CaseRef` and its `CaseResult`."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds import CaseRef, case_row
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import merge_labels, plain

labels = st.dictionaries(st.sampled_from("abcde"), st.text(max_size=3), max_size=5)


def test_ref_labels_reach_the_row_without_being_copied_into_the_result() -> None:
    ref = CaseRef("c1", "sys", {"topic": "a", "track": "B"})
    before = case_row("s", ref, nodeid="x::c1[sys]")
    assert before["labels"] == {"topic": "a", "track": "B"}
    assert before["outcome"] == "error" and before["nodeid"] == "x::c1[sys]"
    row = case_row("s", ref, CaseResult({"m": 1}), nodeid="x::c1[sys]")
    assert row["labels"] == {"topic": "a", "track": "B"}
    assert row["metrics"] == {"m": 1.0} and row["nodeid"] == "x::c1[sys]"


def test_found_labels_follow_the_refs_and_never_override_them() -> None:
    ref = CaseRef("c1", "sys", {"topic": "a"})
    result = CaseResult({}, labels={"extra": "z", "topic": "other"})
    row = case_row("s", ref, result)
    assert list(row["labels"].items()) == [("topic", "a"), ("extra", "z")]


@given(labels, labels)
def test_merge_keeps_every_key_ref_first_and_ref_values(
    ref: dict[str, str], found: dict[str, str]
) -> None:
    merged = merge_labels(ref, found)
    # An independent statement of the rule: the ref's keys in order, then the new ones in order.
    expected_keys = list(ref) + [k for k in found if k not in ref]
    assert list(merged) == expected_keys
    assert all(merged[k] == (ref[k] if k in ref else found[k]) for k in merged)


@settings(deadline=None, max_examples=100)
@given(st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none()))
def test_plain_spells_a_key_as_json_does(key: object) -> None:
    """A stored result is written by json and read back: its keys must be the ones `plain`
    gives the fresh result."""
    assert list(plain({key: 1})) == list(json.loads(json.dumps({key: 1})))
