"""The seed's splitter: hand-worked chunks, LangChain's own outputs, and its invariants.

The golden file holds outputs of the real langchain-text-splitters; regenerate it in an
environment that has the package (never needed unless the package changes its algorithm):

    python tests/test_metrics_chunking.py --regenerate
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.documents.chunking import Chunk, chunk_document, split_text

GOLDEN = Path(__file__).parent / "data" / "chunking_langchain_golden.json"
HAS_LANGCHAIN = importlib.util.find_spec("langchain_text_splitters") is not None

# Texts made of the separators and short words, so that every branch of the recursion (blank
# lines, line breaks, spaces, single characters, runs of separators) is exercised.
PIECES = st.sampled_from(
    ["a", "bc", "def ", " ", "  ", "\n", "\n\n", "\t", "가나", "x" * 9, "\n \n"]
)
TEXTS = st.lists(PIECES, max_size=60).map("".join)


@st.composite
def size_and_overlap(draw: st.DrawFn, minimum: int = 2) -> tuple[int, int]:
    size = draw(st.integers(minimum, 40))
    return size, draw(st.integers(0, size))


def texts_of(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


def test_hand_worked_words() -> None:
    # Pieces " bbb", " ccc", " ddd" keep their leading space; after "aaa bbb" (7 chars) the
    # next piece would make 11 > 8, so the chunk closes and " bbb" (4 <= overlap 4) is kept.
    chunks = split_text("aaa bbb ccc ddd", 8, 4)
    assert chunks == [Chunk("aaa bbb", 0, 7), Chunk("bbb ccc", 4, 11), Chunk("ccc ddd", 8, 15)]


def test_hand_worked_paragraphs_before_lines() -> None:
    # "\n\n" is tried first: the two paragraphs fit separately, never split at the single "\n".
    text = "one two\nthree\n\nfour five six"
    expected = [Chunk("one two\nthree", 0, 13), Chunk("four five six", 15, 28)]
    assert split_text(text, 16, 0) == expected


def test_hand_worked_long_word_falls_to_characters() -> None:
    # No separator at all: single characters, packed 4 at a time with 1 character of overlap.
    assert texts_of(split_text("abcdefghij", 4, 1)) == ["abcd", "defg", "ghij"]


def test_a_chunk_is_never_a_copy_found_earlier() -> None:
    # The same words twice: LangChain's str.find would have to search; the spans are exact.
    text = "same words\n\nsame words"
    assert split_text(text, 12, 0) == [Chunk("same words", 0, 10), Chunk("same words", 12, 22)]


def test_whitespace_only_text_has_no_chunks() -> None:
    assert split_text("") == []
    assert split_text(" \n\n \t\n") == []


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [(0, 0, "size must be > 0"), (10, -1, "must be >= 0"), (10, 11, "must not exceed")],
)
def test_invalid_arguments(size: int, overlap: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        split_text("text", size, overlap)


def test_seed_defaults() -> None:
    # 400 five-character pieces (" w001"): 99 of them (499 characters) fill a chunk, and the
    # last 10 (50 characters, the overlap) open the next one.
    words = " ".join(f"w{i:03d}" for i in range(400))
    spans = [(c.start, c.end) for c in split_text(words)]
    assert spans == [(0, 499), (450, 949), (900, 1399), (1350, 1849), (1800, 1999)]


def test_chunk_document_reads_crlf_like_lf() -> None:
    lf = "# Title\n\nFirst paragraph.\n\nSecond paragraph.\n"
    crlf = lf.replace("\n", "\r\n")
    assert chunk_document(crlf, 20, 0) == chunk_document(lf, 20, 0)
    assert texts_of(chunk_document(lf, 20, 0)) == [
        "# Title",
        "First paragraph.",
        "Second paragraph.",
    ]


def golden_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]
    return cases


@pytest.mark.parametrize("case", golden_cases(), ids=lambda case: case["name"])
def test_matches_langchain_golden_outputs(case: dict[str, Any]) -> None:
    chunks = split_text(case["text"], case["size"], case["overlap"])
    assert texts_of(chunks) == case["chunks"]
    assert all(case["text"][c.start : c.end] == c.text for c in chunks)


@pytest.mark.skipif(not HAS_LANGCHAIN, reason="langchain-text-splitters is not installed")
@settings(max_examples=400, deadline=None)
@given(TEXTS, size_and_overlap(minimum=1))
def test_matches_langchain_on_generated_texts(text: str, params: tuple[int, int]) -> None:
    splitters = importlib.import_module("langchain_text_splitters")
    size, overlap = params
    logging.disable(logging.WARNING)  # it warns about chunks it cannot make small enough
    try:
        splitter = splitters.RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
        expected = splitter.split_text(text)
    finally:
        logging.disable(logging.NOTSET)
    assert texts_of(split_text(text, size, overlap)) == expected


@settings(max_examples=300, deadline=None)
@given(TEXTS, size_and_overlap())
def test_chunks_are_exact_stripped_and_in_order(text: str, params: tuple[int, int]) -> None:
    size, overlap = params
    chunks = split_text(text, size, overlap)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        assert chunk.text and chunk.text == chunk.text.strip()
        assert len(chunk.text) <= size
    for before, after in itertools.pairwise(chunks):
        assert before.start <= after.start and before.end <= after.end
        assert before.end - after.start <= overlap


@settings(max_examples=300, deadline=None)
@given(TEXTS, size_and_overlap())
def test_chunks_cover_every_visible_character(text: str, params: tuple[int, int]) -> None:
    covered = [False] * len(text)
    for chunk in split_text(text, *params):
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())


def regenerate() -> None:  # pragma: no cover - run by hand, with langchain-text-splitters
    from importlib.metadata import version

    splitters = importlib.import_module("langchain_text_splitters")
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for case in data["cases"]:
        splitter = splitters.RecursiveCharacterTextSplitter(
            chunk_size=case["size"], chunk_overlap=case["overlap"]
        )
        case["chunks"] = splitter.split_text(case["text"])
    data["generator"] = (
        f"langchain-text-splitters {version('langchain-text-splitters')}: "
        "RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)"
    )
    text = json.dumps(data, ensure_ascii=False, indent=1)
    GOLDEN.write_text(text, encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["--regenerate"]:
        regenerate()
