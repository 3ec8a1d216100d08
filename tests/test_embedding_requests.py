"""Embeddings requests through the model hub: the body `OpenAIEmbedder` sends, one float32
entry per text under the keys `CachedEmbedder` uses (a store warmed by either path serves
the other), a peer's stored vectors instead of a second request, and unusable answers as
errors naming the request."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from model_fixtures import make_hub, model_config, model_server
from model_server import ModelServer, embedding

from pytest_doceval.models.client import ModelError
from pytest_doceval.models.embedding_requests import EmbeddingsRequest, embeddings_requests
from pytest_doceval.models.embeddings import CachedEmbedder, OpenAIEmbedder, vector_key
from pytest_doceval.models.hub import Hub
from pytest_doceval.store import FLOAT32, Store

__all__ = ["model_server"]  # the fixture, imported for the tests below

TEXTS = [f"Sentence number {i} about tides." for i in range(5)]


def get(hub: Hub, request: EmbeddingsRequest) -> np.ndarray:
    vectors: np.ndarray = hub.run(hub.get(request)).result(timeout=30).vectors
    return vectors


def test_requests_batch_like_the_embedder_and_send_its_body(
    model_server: ModelServer, tmp_path: Path
) -> None:
    embedder = OpenAIEmbedder(model_server.base_url, "e5-1", dimensions=16, batch_size=2)
    requests = embeddings_requests(embedder, "e5", TEXTS, case="c1")
    assert [r.texts for r in requests] == [tuple(TEXTS[0:2]), tuple(TEXTS[2:4]), (TEXTS[4],)]
    assert all(r.fingerprint() == embedder.fingerprint() for r in requests)
    config = model_config(model_server.base_url, name="e5", model="e5-1")
    with make_hub(config, tmp_path) as hub:
        vectors = np.concatenate([get(hub, r) for r in requests])
    assert vectors.dtype == np.float32
    assert np.allclose(vectors, [embedding(t, 16) for t in TEXTS], atol=1e-6)
    hub_bodies = [json.loads(r.body) for r in model_server.requests]
    model_server.requests.clear()
    embedder.embed(TEXTS)  # the embedder's own requests, for comparison
    assert hub_bodies == [json.loads(r.body) for r in model_server.requests]


def test_vectors_share_the_embedders_store_entries(
    model_server: ModelServer, tmp_path: Path
) -> None:
    embedder = OpenAIEmbedder(model_server.base_url, "e5-1")
    config = model_config(model_server.base_url, name="e5", model="e5-1")
    (request,) = embeddings_requests(embedder, "e5", TEXTS)
    with make_hub(config, tmp_path) as hub:
        sent = get(hub, request)
    store = Store(tmp_path)
    stored = [store.get(vector_key(embedder.fingerprint(), t), FLOAT32) for t in TEXTS]
    assert all(v is not None for v in stored)
    assert np.array_equal(np.stack(stored), sent)  # type: ignore[arg-type]
    cached = CachedEmbedder(embedder, store)
    assert np.array_equal(cached.embed(TEXTS), sent)
    assert (cached.hits, cached.misses, model_server.total) == (5, 0, 1)
    # And the other way round: texts the embedder stored are not asked for again.
    more = ["A text embedded in a test.", "Another one."]
    CachedEmbedder(embedder, store).embed(more)
    (again,) = embeddings_requests(embedder, "e5", more)
    with make_hub(config, tmp_path) as hub:
        response = hub.run(hub.get(again)).result(timeout=30)
    assert response.source == "cache" and model_server.total == 2


def test_a_peer_holding_the_claim_is_waited_for(model_server: ModelServer, tmp_path: Path) -> None:
    embedder = OpenAIEmbedder(model_server.base_url, "e5-1")
    config = model_config(model_server.base_url, name="e5", model="e5-1")
    (request,) = embeddings_requests(embedder, "e5", TEXTS)
    store = Store(tmp_path)
    claim = store.try_claim(request.cache_key())
    assert claim is not None
    peers = np.ones((len(TEXTS), 3), dtype=np.float32)

    def peer_finishes() -> None:
        time.sleep(0.3)
        for key, vector in zip(request.entry_keys(), peers, strict=True):
            store.put(key, vector, FLOAT32)
        store.release(claim)

    thread = threading.Thread(target=peer_finishes)
    thread.start()
    with make_hub(config, tmp_path) as hub:
        response = hub.run(hub.get(request)).result(timeout=30)
    thread.join()
    assert response.source == "peer" and np.array_equal(response.vectors, peers)
    assert model_server.total == 0


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("[fault:500]", "HTTP 500 after 2 attempts"),
        ("[fault:malformed]", "not an embeddings list"),
        ("[fault:empty]", "not an embeddings list"),
    ],
)
def test_unusable_answers_fail_the_request(
    model_server: ModelServer, tmp_path: Path, marker: str, message: str
) -> None:
    embedder = OpenAIEmbedder(model_server.base_url, "e5-1")
    config = model_config(model_server.base_url, name="e5", model="e5-1", max_retries=1)
    (request,) = embeddings_requests(embedder, "e5", [*TEXTS, marker], case="c7")
    with make_hub(config, tmp_path) as hub, pytest.raises(ModelError) as failure:
        get(hub, request)
    assert "embeddings model 'e5'" in str(failure.value) and "case 'c7'" in str(failure.value)
    assert message in str(failure.value)
    assert not list(tmp_path.rglob("*.float32.json"))  # nothing failed is stored
