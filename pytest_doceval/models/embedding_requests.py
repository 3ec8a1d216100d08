"""Embeddings requests: a batch of texts for a configured model's ``/embeddings`` endpoint, sent
through the model hub like a chat request (the model's ``max_concurrency``, its retries and
timeout, claims across xdist workers) but stored as one float32 entry per text.

A request's vectors are kept under `vector_key` -- (the embedder's fingerprint, the text's
SHA-256), the very keys `CachedEmbedder` uses -- so a store warmed by either path serves both,
and a text embedded in one batch is found again in any other. The request's own `cache_key`
(the fingerprint and its texts' digests) is what the hub dedupes and claims on; it never names
an entry of its own. The body is the one `OpenAIEmbedder` sends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_doceval.models.embeddings import (
    EmbeddingError,
    Matrix,
    OpenAIEmbedder,
    embeddings_body,
    embeddings_of,
    openai_fingerprint,
    vector_key,
)
from pytest_doceval.models.requests import Source, canonical_json

if TYPE_CHECKING:
    import httpx

    from pytest_doceval.store import Store

KEY_SCHEMA = "doceval-embeddings/1"


@dataclass(frozen=True)
class EmbeddingsRequest:
    """The vectors of `texts` from the model configured as `model` (its id `model_id` at
    `base_url`). `case` only labels errors."""

    model: str
    base_url: str
    model_id: str
    texts: tuple[str, ...]
    dimensions: int | None = None
    case: str = field(default="", compare=False)

    def fingerprint(self) -> dict[str, Any]:
        """`OpenAIEmbedder.fingerprint` of the same endpoint: the vectors' keys match."""
        return openai_fingerprint(self.base_url, self.model_id, self.dimensions)

    @cached_property
    def _digests(self) -> list[str]:
        return [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in self.texts]

    @cached_property
    def _key(self) -> str:
        payload = {"schema": KEY_SCHEMA, "fingerprint": self.fingerprint(), "texts": self._digests}
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()

    def cache_key(self) -> str:
        return self._key

    def entry_keys(self) -> list[str]:
        fingerprint = self.fingerprint()
        return [vector_key(fingerprint, text) for text in self.texts]

    @property
    def url(self) -> str:
        return f"{self.base_url}/embeddings"

    def body(self) -> dict[str, Any]:
        return embeddings_body(self.model_id, self.texts, self.dimensions)

    def label(self) -> str:
        case = f", case {self.case!r}" if self.case else ""
        return (
            f"embeddings model {self.model!r} ({self.model_id} at {self.base_url}, "
            f"{len(self.texts)} texts){case}"
        )

    def read_response(
        self, response: httpx.Response, redact: Callable[[str], str]
    ) -> EmbeddingsResponse | str:
        """The vectors in a 2xx `response`, or what is wrong with it (never raises)."""
        try:
            vectors = embeddings_of(response, len(self.texts))
        except EmbeddingError as exc:
            return redact(str(exc))
        return EmbeddingsResponse(vectors)

    # -- the store: one float32 entry per text --------------------------------------------------

    def stored(self, store: Store, source: Source) -> EmbeddingsResponse | None:
        """The vectors of every text from `store`; None when any is missing (or they differ in
        length: an entry of another model's era, recomputed)."""
        from pytest_doceval.store import FLOAT32

        rows = []
        for key in self.entry_keys():
            vector = store.get(key, FLOAT32)
            if vector is None:
                return None
            rows.append(vector)
        if len({row.shape[0] for row in rows}) > 1:
            return None
        return EmbeddingsResponse(np.stack(rows), source=source)

    def keep(self, store: Store, response: EmbeddingsResponse) -> None:
        from pytest_doceval.store import FLOAT32

        fingerprint = self.fingerprint()
        for key, digest, vector in zip(
            self.entry_keys(), self._digests, response.vectors, strict=True
        ):
            store.put(key, vector, FLOAT32, {"fingerprint": fingerprint, "text_sha256": digest})


@dataclass(frozen=True)
class EmbeddingsResponse:
    """One row per text of the request; `source` as `ChatResponse.source` (not stored)."""

    vectors: Matrix
    source: Source = field(default="model", compare=False)


def embeddings_requests(
    embedder: OpenAIEmbedder, model: str, texts: Sequence[str], *, case: str = ""
) -> list[EmbeddingsRequest]:
    """The requests `embedder` (built for the configured model `model`) would send for
    `texts`: batches of its `batch_size`, in order."""
    size = embedder.batch_size
    return [
        EmbeddingsRequest(
            model=model,
            base_url=embedder.base_url,
            model_id=embedder.model,
            texts=tuple(texts[i : i + size]),
            dimensions=embedder.dimensions,
            case=case,
        )
        for i in range(0, len(texts), size)
    ]
