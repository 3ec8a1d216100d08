"""Chunk Score: how topically coherent the output's chunks are (seed 000 section 3.3.3).

    CS = (1/|C|) Σ_{c ∈ C} coherence(c)

The seed: "generate embeddings for sentences within each chunk; calculate intra-chunk similarity
variance; lower variance = higher coherence = better score". Defined here, in [0, 1], higher is
better:

* **Chunks** are the output's chunks from the seed's splitter (`chunking.chunk_document`,
  500/50), the very chunks Boundary Coherence cuts.
* **Sentences** of a chunk: its text cut after ``.``, ``!``, ``?``, ``。``, ``！``, ``？``
  followed by whitespace, and at every line break (a heading, a list item, a table row is a unit
  of its own); pieces without a letter or digit (table rules, lone markup) are dropped. A chunk
  that starts or ends mid-sentence keeps the fragment: that is what a retriever embeds.
* **Embeddings**: one vector per sentence from the configured `Embedder` (see `embeddings`),
  scaled to unit length.
* **coherence(c) = 1 - s²**, where ``s² = (1/(n-1)) Σ_i ||e_i - ē||²`` is the (unbiased) total
  variance of the chunk's n unit sentence vectors around their mean ē. For unit vectors this
  is exactly the mean cosine similarity over the chunk's n(n-1)/2 sentence pairs, which is how
  it is computed; it is clipped to [0, 1] (below 0 only if the sentences point in opposite
  directions on average). One topic: the vectors bunch together, the variance is low and the
  coherence high; two topics: they spread, and it drops.

  Why the variance *of the embeddings* and not the variance of the pairwise similarity values:
  the latter is 0 both for sentences that all say the same thing and for sentences that are all
  unrelated (every similarity equally high, or equally low), so it cannot tell a pure chunk
  from a thoroughly mixed one; the tests show the case.
* **Chunks with fewer than two sentences** have no spread to measure: their coherence is None
  and they are left out of the mean (counting them as 1.0 would reward an output with no
  sentence punctuation and no line breaks). CS is NaN when no chunk has two sentences (an empty
  output included): undefined, not perfect and not zero.

Similarities depend on the embedding model (multilingual-e5 puts unrelated sentences near 0.7,
related ones near 0.9), so CS values compare only under one embedder: its fingerprint belongs in
the scoring identity, as the seed fixes its model (3.5.2).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pytest_doceval.kinds.documents.chunking import Chunk
from pytest_doceval.models.embeddings import Embedder, Matrix, as_matrix

_SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？])\s+|\n")
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class ChunkScore:
    """CS, each chunk's coherence (None: fewer than two sentences) and sentence count."""

    value: float
    per_chunk: tuple[float | None, ...]
    sentences: tuple[int, ...]

    @property
    def n_chunks(self) -> int:
        return len(self.per_chunk)

    @property
    def n_scored(self) -> int:
        return sum(value is not None for value in self.per_chunk)

    def to_dict(self) -> dict[str, int]:
        return {
            "chunks": self.n_chunks,
            "scored_chunks": self.n_scored,
            "sentences": sum(self.sentences),
        }


def sentences(text: str) -> list[str]:
    """The sentence units of one chunk (see the module docstring)."""
    units = (part.strip() for part in _SENTENCE_BREAK.split(text))
    return [unit for unit in units if _WORD.search(unit)]


def coherence(vectors: npt.ArrayLike) -> float | None:
    """1 - the unbiased total variance of the rows scaled to unit length = their mean pairwise
    cosine similarity, clipped to [0, 1]; None for fewer than two rows."""
    matrix = np.asarray(vectors, dtype=np.float64)
    n = len(matrix)
    if n < 2:
        return None
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(norms > 0):
        raise ValueError("an embedding is the zero vector: it has no direction to compare")
    total = (matrix / norms).sum(axis=0)
    # ||Σ e_i||² = n + Σ_{i≠j} cos(e_i, e_j): the pairs' mean without an n×n matrix.
    mean_pair = (float(total @ total) - n) / (n * (n - 1))
    return min(1.0, max(0.0, mean_pair))


def chunk_units(chunks: Iterable[Chunk | str]) -> list[list[str]]:
    """The sentence units of each chunk."""
    return [sentences(c.text if isinstance(c, Chunk) else c) for c in chunks]


def wanted_sentences(units: Sequence[Sequence[str]]) -> list[str]:
    """The distinct sentences CS needs a vector for (those of chunks with two or more), in
    first-seen order: the rows of the matrix `score_units` reads. The one home of this rule,
    shared by the engine stage that embeds them and the scoring that reads them."""
    return list(dict.fromkeys(u for group in units if len(group) >= 2 for u in group))


def chunk_score(chunks: Iterable[Chunk | str], embedder: Embedder) -> ChunkScore:
    """CS of `chunks` with sentence vectors from `embedder`; each distinct sentence is embedded
    once, in one call (chunks overlap, and documents repeat lines)."""
    units = chunk_units(chunks)
    wanted = wanted_sentences(units)
    vectors = as_matrix(embedder.embed(wanted), len(wanted)) if wanted else None
    return score_units(units, vectors)


def score_units(units: Sequence[Sequence[str]], vectors: Matrix | None) -> ChunkScore:
    """CS of chunks cut into `units`, given the vectors of their `wanted_sentences` (row i:
    sentence i; None when there are none)."""
    wanted = wanted_sentences(units)
    if wanted and (vectors is None or len(vectors) != len(wanted)):
        rows = 0 if vectors is None else len(vectors)
        raise ValueError(f"expected {len(wanted)} sentence vectors, got {rows}")
    row = {text: index for index, text in enumerate(wanted)}
    per_chunk: list[float | None] = []
    for group in units:
        if len(group) < 2 or vectors is None:
            per_chunk.append(None)
            continue
        per_chunk.append(coherence(vectors[[row[u] for u in group]]))
    scored = [value for value in per_chunk if value is not None]
    value = math.fsum(scored) / len(scored) if scored else math.nan
    return ChunkScore(value, tuple(per_chunk), tuple(len(group) for group in units))
