"""The seed's chunker, with offsets: LangChain's RecursiveCharacterTextSplitter (seed 000 3.5.2).

Seed 000 fixes the chunking of every parser's output: ``RecursiveCharacterTextSplitter``, chunk
size 500 characters, overlap 50. `split_text` is that algorithm exactly as
``langchain_text_splitters.RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50)``
runs it with its defaults: separators ``"\\n\\n"``, ``"\\n"``, ``" "``, ``""`` tried in that
order, a separator kept at the start of the piece it precedes (``keep_separator=True``), length
counted in characters (``len``), every chunk stripped of surrounding whitespace and whitespace-only
chunks dropped. ``tests/test_metrics_chunking.py`` checks it chunk for chunk against the package
(when it is installed) and against golden outputs made with langchain-text-splitters 1.1.3.

Why not the package itself: it depends on langchain-core, which brings about 30 packages
(pydantic, langsmith, httpx2, orjson, zstandard, ...; ~70 MB) for 150 lines of string handling.

Offsets: a chunk is always ``text[start:end]``. With the separator kept at the start of the
following piece, the pieces of a text concatenate back to it, a merged chunk is a contiguous run
of pieces, and stripping only moves its ends; so the spans are tracked here instead of searched
for afterwards (LangChain's ``add_start_index`` uses ``str.find``, which can land on an earlier
repeat of the same words).

Properties (tested): chunks are non-empty and stripped (for ``size >= 2``), at most ``size``
characters, in document order (starts and ends never decrease), two consecutive chunks overlap
by at most ``overlap`` characters, and every non-whitespace character of the text lies in some
chunk.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_doceval.text.normalise import RAW

CHUNK_SIZE = 500
CHUNK_OVERLAP = 50
SEPARATORS: tuple[str, ...] = ("\n\n", "\n", " ", "")

Span = tuple[int, int]


@dataclass(frozen=True)
class Chunk:
    """One chunk: ``text == source[start:end]``."""

    text: str
    start: int
    end: int


def split_text(
    text: str,
    size: int = CHUNK_SIZE,
    overlap: int = CHUNK_OVERLAP,
    *,
    separators: Sequence[str] = SEPARATORS,
) -> list[Chunk]:
    """`text` cut into chunks of at most `size` characters that overlap by at most `overlap`.

    `separators` are literal strings (LangChain's ``is_separator_regex=False``). The same
    arguments LangChain rejects are rejected here: ``size <= 0``, ``overlap < 0`` and
    ``overlap > size``.
    """
    if size <= 0:
        raise ValueError(f"chunk size must be > 0, got {size}")
    if overlap < 0:
        raise ValueError(f"chunk overlap must be >= 0, got {overlap}")
    if overlap > size:
        raise ValueError(f"chunk overlap ({overlap}) must not exceed the chunk size ({size})")
    if not separators:
        raise ValueError("at least one separator is needed")
    splitter = _Splitter(text, size, overlap)
    return [Chunk(text[s:e], s, e) for s, e in splitter.split((0, len(text)), list(separators))]


def chunk_document(text: str, size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP) -> list[Chunk]:
    """A system's output (or a truth) chunked as the metrics chunk it: after the ``raw``
    profile (line endings unified, NFC), so a CRLF file splits on its blank lines like its LF
    copy, and never after a profile that strips markdown (the splitter cuts at blank lines).
    Offsets are into ``RAW(text)``."""
    return split_text(RAW(text), size, overlap)


class _Splitter:
    """LangChain's ``_split_text`` and ``_merge_splits`` over spans of one text."""

    def __init__(self, text: str, size: int, overlap: int) -> None:
        self.text = text
        self.size = size
        self.overlap = overlap

    def _choose(self, span: Span, separators: list[str]) -> tuple[str, list[str]]:
        # The first separator that occurs in the span, and the finer ones left for its pieces;
        # "" (single characters) ends the list. With none found and no "", LangChain falls back
        # to the last separator with nothing finer.
        for index, separator in enumerate(separators):
            if not separator:
                return separator, []
            if self.text.find(separator, *span) != -1:
                return separator, separators[index + 1 :]
        return separators[-1], []

    def _pieces(self, span: Span, separator: str) -> list[Span]:
        """The span cut before each occurrence of `separator` (kept at the start of the piece it
        precedes, as ``re.split`` with a group and ``keep_separator=True`` does); no empty
        pieces."""
        start, end = span
        if not separator:
            return [(i, i + 1) for i in range(start, end)]
        cuts = [start]
        found = self.text.find(separator, start, end)
        while found != -1:
            cuts.append(found)
            found = self.text.find(separator, found + len(separator), end)
        cuts.append(end)
        return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]

    def split(self, span: Span, separators: list[str]) -> list[Span]:
        separator, finer = self._choose(span, separators)
        chunks: list[Span] = []
        small: list[Span] = []
        for piece in self._pieces(span, separator):
            if piece[1] - piece[0] < self.size:
                small.append(piece)
                continue
            if small:
                chunks.extend(self._merge(small))
                small = []
            if finer:
                chunks.extend(self.split(piece, finer))
            else:
                # LangChain keeps such a piece as it is, unstripped (only reachable when a
                # single character is as long as the chunk size, or with custom separators).
                chunks.append(piece)
        if small:
            chunks.extend(self._merge(small))
        return chunks

    def _stripped(self, start: int, end: int) -> Span | None:
        part = self.text[start:end]
        lead = len(part) - len(part.lstrip())
        if lead == len(part):
            return None
        return start + lead, end - (len(part) - len(part.rstrip()))

    def _merge(self, pieces: list[Span]) -> list[Span]:
        """Consecutive pieces packed into chunks of at most `size`; each new chunk starts with
        the previous chunk's last pieces worth at most `overlap` characters. The separator is
        part of the pieces, so joining adds nothing (LangChain's separator length 0)."""
        chunks: list[Span] = []
        current: deque[Span] = deque()
        total = 0
        for piece in pieces:
            length = piece[1] - piece[0]
            if total + length > self.size and current:
                stripped = self._stripped(current[0][0], current[-1][1])
                if stripped is not None:
                    chunks.append(stripped)
                while total > self.overlap or (total + length > self.size and total > 0):
                    first = current.popleft()
                    total -= first[1] - first[0]
            current.append(piece)
            total += length
        if current:
            stripped = self._stripped(current[0][0], current[-1][1])
            if stripped is not None:
                chunks.append(stripped)
        return chunks
