"""``ned`` (issue 26): CER's edits over the longer normalised text, bounded by [0, 1], checked
against rapidfuzz's own normalised Levenshtein distance and by hand; its corpus value is
OmniDocBench's Σ edits / Σ max(len); and the note and flag on a row whose insertions exceed its
truth's length."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.analyses import AllPairs
from pytest_doceval.kinds.documents.insertions import INSERTIONS_EXCEED_TRUTH, insertion_note
from pytest_doceval.kinds.documents.suite import DocumentsSuite, score_document
from pytest_doceval.metrics.ned import ned_counts
from pytest_doceval.metrics.text import character_errors
from pytest_doceval.report.analysis import analyse_suite
from pytest_doceval.rows import new_row
from pytest_doceval.text.normalise import get_profile

FAIR = get_profile("fair-v1")


def _score(truth: str, output: str) -> dict[str, float]:
    return score_document(truth, output, language="en", normalization="fair-v1").metrics


def test_ned_by_hand() -> None:
    # kitten -> sitting: k/s, e/i substituted, g inserted: 3 edits over the longer 7 characters.
    counts = ned_counts(character_errors("kitten", "sitting"), len("sitting"))
    assert counts.errors == 3 and counts.reference_length == 7
    assert counts.rate == 3 / 7
    # The other way round: the same 3 edits (k/s, i/e, g deleted) over the same 7.
    assert ned_counts(character_errors("sitting", "kitten"), len("kitten")).rate == 3 / 7
    # Nothing shared: every character edited, 1.0; CER of the same pair is 40 / 2 = 20.
    page_number, line = "12", "x" * 40
    metrics = _score(page_number, line)
    assert metrics["ned"] == 1.0
    assert metrics["cer"] == 20.0


def test_two_empty_texts_have_ned_zero() -> None:
    assert _score("", "")["ned"] == 0.0
    assert Levenshtein.normalized_distance("", "") == 0.0  # rapidfuzz's reading agrees


_TEXT = st.text(st.sampled_from("ab c\n#*-.1é가"), max_size=40)


@settings(deadline=None, max_examples=200)
@given(_TEXT, _TEXT)
def test_ned_is_rapidfuzz_normalised_levenshtein_on_the_fair_texts(truth: str, output: str) -> None:
    metrics = _score(truth, output)
    expected = Levenshtein.normalized_distance(FAIR(truth), FAIR(output))
    assert metrics["ned"] == pytest.approx(expected, abs=1e-12)
    assert 0.0 <= metrics["ned"] <= 1.0
    # The same edits as CER, over a denominator at least the truth's length.
    assert metrics["ned"] <= metrics["cer"] or len(FAIR(truth)) == 0


def test_the_kind_declares_ned_a_bounded_headline_beside_cer() -> None:
    names = list(DocumentsSuite.metrics)
    assert names.index("ned") == names.index("cer") + 1
    spec = DocumentsSuite.metrics["ned"]
    assert spec.headline and spec.direction == "lower" and spec.bounds == (0.0, 1.0)
    assert spec.counts == "ned"


def test_corpus_ned_is_omnidocbench_edit_whole() -> None:
    """Mean of per-case values = OmniDocBench's page average; corpus value = Σ edits /
    Σ max(len) (its ``edit_whole``), both recomputed here with rapidfuzz alone."""
    pairs = [
        ("The ferry leaves at nine.", "The ferry leaves at nine."),
        ("The ferry leaves at nine.", "The fery leaves at 9."),
        ("12", "A running header that the parser kept on the page."),
        ("Tidal storage.", ""),
    ]
    specs = {"ned": DocumentsSuite.metrics["ned"]}
    meta = {"kind": "documents", "metrics": {k: v.to_dict() for k, v in specs.items()}}
    rows = []
    for i, (truth, output) in enumerate(pairs):
        score = score_document(truth, output, language="en", normalization="fair-v1")
        row = {**new_row("s", f"c{i}", "sys"), "outcome": "passed"}
        row["metrics"] = {"ned": score.metrics["ned"]}
        row["counts"] = {"ned": score.counts["ned"]}
        rows.append(row)
    entry = analyse_suite(meta, rows, StatsConfig(resamples=200), (AllPairs(),))["aggregates"]
    ned = entry["sys"]["ned"]
    normalised = [(FAIR(t), FAIR(o)) for t, o in pairs]
    edits = [Levenshtein.distance(t, o) for t, o in normalised]
    longer = [max(len(t), len(o)) for t, o in normalised]
    assert ned["corpus"] == pytest.approx(sum(edits) / sum(longer))
    per_page = [e / n for e, n in zip(edits, longer, strict=True)]
    assert ned["mean"] == pytest.approx(sum(per_page) / len(per_page))


def test_insertions_beyond_the_truth_get_a_note_and_a_cer_flag() -> None:
    # The case: a truth page holding only its page number, a 40-character output.
    score = score_document("12", "x" * 38 + "12", language="en", normalization="fair-v1")
    assert score.counts["cer"]["insertions"] == 38 > score.counts["cer"]["reference_length"]
    assert score.flags == {"cer": [INSERTIONS_EXCEED_TRUTH]}
    assert len(score.notes) == 1
    assert "inserts 38 characters where the truth has 2" in score.notes[0]
    # Insertions up to the truth's length are ordinary errors: no note, no flag.
    fine = score_document("The ferry.", "The ferry leaves.", language="en", normalization="fair-v1")
    assert fine.counts["cer"]["insertions"] <= fine.counts["cer"]["reference_length"]
    assert fine.flags == {} and fine.notes == []


@settings(deadline=None)
@given(st.integers(0, 50), st.integers(0, 50))
def test_insertion_note_is_exactly_insertions_above_the_truth_length(ins: int, n: int) -> None:
    counts = character_errors("a" * n, "a" * n + "b" * ins)
    assert counts.insertions == ins
    assert (insertion_note(counts) is not None) == (ins > n)
