"""Approximate-occurrence search: against brute force, and against olmOCR's fuzzysearch."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from pytest_doceval.kinds.facts.checks import check
from pytest_doceval.kinds.facts.model import Fact, parse_fact
from pytest_doceval.kinds.facts.search import first_occurrence, last_occurrence


def brute_starts(pattern: str, text: str, k: int) -> list[int]:
    """Every start of a substring within k edits of `pattern`, by trying all substrings."""
    return [
        s
        for s in range(len(text) + 1)
        if any(Levenshtein.distance(pattern, text[s:e]) <= k for e in range(s, len(text) + 1))
    ]


@given(
    st.text(alphabet="abc", min_size=1, max_size=6),
    st.text(alphabet="abcd", max_size=25),
    st.integers(0, 3),
)
@settings(max_examples=250)
def test_first_and_last_occurrence_equal_brute_force(pattern: str, text: str, k: int) -> None:
    starts = brute_starts(pattern, text, k)
    assert first_occurrence(pattern, text, k) == (starts[0] if starts else None)
    assert last_occurrence(pattern, text, k) == (starts[-1] if starts else None)


def test_hand_worked() -> None:
    assert first_occurrence("abc", "xxabcxxabc", 0) == 2
    assert last_occurrence("abc", "xxabcxxabc", 0) == 7
    assert first_occurrence("abc", "xxabxx", 0) is None
    # Within one edit of "abc" in "xxabxx": "ab" (delete c) and "abx" (substitute), both at 2;
    # "xab" is two edits away.
    assert (first_occurrence("abc", "xxabxx", 1), last_occurrence("abc", "xxabxx", 1)) == (2, 2)
    # An occurrence may take in a neighbour: "xabc" (start 1) and "bc" (start 3) are one edit
    # from "abc" -- the leniency the module docstring bounds.
    assert (first_occurrence("abc", "xxabcxx", 1), last_occurrence("abc", "xxabcxx", 1)) == (1, 3)
    # With max_diffs >= len(pattern) the empty substring qualifies everywhere.
    assert first_occurrence("abc", "", 3) == 0 and last_occurrence("abc", "zz", 3) == 2


def _olmocr_order(before: str, after: str, text: str, k: int) -> bool:
    fuzzysearch = pytest.importorskip("fuzzysearch")
    before_matches = fuzzysearch.find_near_matches(before, text, max_l_dist=k)
    after_matches = fuzzysearch.find_near_matches(after, text, max_l_dist=k)
    return any(b.start < a.start for b in before_matches for a in after_matches)


def _noisy(rng: random.Random, word: str, edits: int) -> str:
    chars = list(word)
    for _ in range(edits):
        i = rng.randrange(len(chars))
        op = rng.choice("sdi")
        if op == "s":
            chars[i] = rng.choice("abcdefgh")
        elif op == "d" and len(chars) > 1:
            del chars[i]
        else:
            chars.insert(i, rng.choice("abcdefgh"))
    return "".join(chars)


def _order_fact(before: str, after: str, k: int) -> Fact:
    fields = {"type": "order", "before": before, "after": after, "max_diffs": k}
    return parse_fact({"pdf": "d.pdf", "page": 1, "id": "o", **fields})


@pytest.mark.parametrize("seed", range(200))
def test_order_agrees_with_fuzzysearch_when_the_strings_do_not_overlap(seed: int) -> None:
    rng = random.Random(seed)
    k = rng.randint(0, 3)
    before = "".join(rng.choices("abcdefgh", k=rng.randint(2 * k + 2, 14)))
    after = "".join(rng.choices("abcdefgh", k=rng.randint(2 * k + 2, 14)))
    pieces = [_noisy(rng, before, rng.randint(0, k)), _noisy(rng, after, rng.randint(0, k))]
    rng.shuffle(pieces)
    fillers = ["".join(rng.choices("0123456789 ", k=rng.randint(0, 12))) for _ in range(3)]
    text = fillers[0] + pieces[0] + fillers[1] + pieces[1] + fillers[2]
    ours = check(_order_fact(before, after, k), text, latin_only=True).passed
    assert ours is _olmocr_order(before, after, text, k)


@given(
    st.text(alphabet="abc", min_size=2, max_size=6),
    st.text(alphabet="abc", min_size=2, max_size=6),
    st.text(alphabet="abc ", max_size=30),
    st.integers(0, 1),
)
@settings(max_examples=300, deadline=None)
def test_whatever_fuzzysearch_orders_is_ordered_here(
    before: str, after: str, text: str, k: int
) -> None:
    if k > len(before) // 2 or k > len(after) // 2:
        return
    if _olmocr_order(before, after, text, k):
        assert check(_order_fact(before, after, k), text, latin_only=True).passed is True
