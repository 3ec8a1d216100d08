"""CER/WER counts against hand-edited strings and an independent dynamic-programming distance."""

from __future__ import annotations

import jiwer
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.metrics import ErrorCounts, character_alignment, character_errors, word_errors


def levenshtein(a: list[str] | str, b: list[str] | str) -> int:
    """Textbook Wagner-Fischer; independent of jiwer/rapidfuzz."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def test_hand_edited_characters() -> None:
    # "kitten" -> "sitting": k->s (S), e->i (S), +g (I): the classic 3 edits.
    counts = character_errors("kitten", "sitting")
    assert counts == ErrorCounts(
        hits=4, substitutions=2, deletions=0, insertions=1, reference_length=6
    )
    assert counts.rate == 3 / 6


def test_hand_edited_deletions_and_spaces() -> None:
    # Two characters dropped ("ab" of "abc d") and the space counts as a character.
    counts = character_errors("abc d", "c d")
    assert (counts.deletions, counts.substitutions, counts.insertions) == (2, 0, 0)
    assert counts.reference_length == 5


def test_hand_edited_words() -> None:
    # cat->bat (S), "on" dropped (D), "today" added (I).
    counts = word_errors("the cat sat on the mat".split(), "the bat sat the mat today".split())
    assert (counts.substitutions, counts.deletions, counts.insertions) == (1, 1, 1)
    assert counts.hits == 4 and counts.reference_length == 6
    assert counts.rate == 0.5


def test_empty_reference_rate_counts_insertions() -> None:
    # A blank page: both empty is perfect; an output there costs one per inserted character,
    # jiwer's own rule, so the rate is not capped at 1.0 (see ErrorCounts.rate).
    assert character_errors("", "").rate == 0.0
    assert character_errors("", "abc").rate == 3.0
    assert character_errors("", "abc") == ErrorCounts(0, 0, 0, 3, 0)
    assert character_errors("abc", "").rate == 1.0
    assert word_errors([], []).rate == 0.0
    assert word_errors([], ["a", "b"]).rate == 2.0


def test_counts_add_up_for_corpus_rates() -> None:
    a, b = character_errors("abcd", "abxd"), character_errors("hello", "help")
    total = a + b
    assert total.errors == a.errors + b.errors
    assert total.rate == (a.errors + b.errors) / 9


def test_diff_ops_reconstruct_both_texts() -> None:
    ref, hyp = "the quick brown fox", "the quack brown fx!"
    ops = character_alignment(ref, hyp).ops
    rebuilt_ref = "".join(o[1] for o in ops if o[0] in "=SD")
    rebuilt_hyp = "".join(o[1] if o[0] in "=I" else o[2] if o[0] == "S" else "" for o in ops)
    assert rebuilt_ref == ref and rebuilt_hyp == hyp


def test_diff_elides_long_equal_runs() -> None:
    ref = "x" * 500 + "abc" + "y" * 500
    ops = character_alignment(ref, ref.replace("abc", "abd")).ops
    elided = [o for o in ops if o[0] == "…"]
    assert elided and sum(int(o[1]) for o in elided) > 800
    assert all(isinstance(o[1], int) for o in elided)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abc de", max_size=30), st.text(alphabet="abc de", max_size=30))
def test_character_counts_match_independent_levenshtein(ref: str, hyp: str) -> None:
    ref, hyp = ref.strip(), hyp.strip()  # jiwer strips; the DP sees the same strings
    counts = character_errors(ref, hyp)
    assert counts.errors == levenshtein(ref, hyp)
    assert counts.hits + counts.substitutions + counts.deletions == len(ref)
    assert counts.hits + counts.substitutions + counts.insertions == len(hyp)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "dd"]), max_size=15),
    st.lists(st.sampled_from(["a", "b", "c", "dd"]), max_size=15),
)
def test_word_counts_match_independent_levenshtein(ref: list[str], hyp: list[str]) -> None:
    counts = word_errors(ref, hyp)
    assert counts.errors == levenshtein(ref, hyp)
    assert counts.reference_length == len(ref)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \n", max_size=12), st.text(alphabet="ab \n", max_size=12))
def test_rates_equal_jiwer_including_blank_pages(ref: str, hyp: str) -> None:
    # An independent computation of the per-case rate, empty references included: jiwer's
    # cer/wer are insertions when the reference is empty, (S + D + I) / N otherwise.
    assert character_errors(ref, hyp).rate == pytest.approx(jiwer.cer(ref, hyp))
    assert word_errors(ref.split(), hyp.split()).rate == pytest.approx(
        jiwer.wer(" ".join(ref.split()), " ".join(hyp.split()))
    )


@given(st.lists(st.tuples(st.text(alphabet="ab", max_size=6), st.text(alphabet="ab", max_size=6))))
def test_blank_pages_leave_corpus_rates_a_plain_ratio_of_counts(
    pairs: list[tuple[str, str]],
) -> None:
    counts = [character_errors(ref, hyp) for ref, hyp in pairs]
    total = sum(counts, ErrorCounts(0, 0, 0, 0, 0))
    assert total.reference_length == sum(len(ref) for ref, _ in pairs)
    assert total.errors == sum(levenshtein(ref, hyp) for ref, hyp in pairs)
    if total.reference_length:
        assert total.rate == total.errors / total.reference_length
