"""The extraction kind's plan: one stage per test makes the extractor's answer (its saved output
read, or the LLM extractor's request on the variant's text), keyed as the output cache and the
baselines know it, and `evaluate` only scores what that stage made. A result never planned, a
missing saved output or OCR text, a failing or silent model is the test's error, naming the case:
nothing is computed in its place."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import model_server
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_server import ModelServer

from pytest_doceval.engine import (
    Engine,
    ExecutorSlot,
    StageNotPlanned,
    StageResults,
    parse_executor,
    run_plan,
)
from pytest_doceval.engine.plan import gather
from pytest_doceval.errors import CaseInputError, SystemRunError
from pytest_doceval.kinds.base import RunContext, evaluate_alone
from pytest_doceval.kinds.extraction.entries import EntryFields, score_entries
from pytest_doceval.kinds.extraction.llm import Answer, read_prediction, read_saved_answer
from pytest_doceval.kinds.extraction.suite import ExtractionSuite
from pytest_doceval.metrics.cost import COST_METRICS
from pytest_doceval.models.config import ModelConfig
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.store import Store, cache_key
from tests.test_suite_extraction import (
    ENTRIES_TOML,
    RAW_PREDICTIONS,
    SPEAKERS,
    load,
    runtime,
    speaker_pages,
    write_extraction_suite,
)

FIELDS = EntryFields("name", "pages", "speakers")


def rules_suite(tmp_path: Path) -> ExtractionSuite:
    pages = speaker_pages()
    return load(write_extraction_suite(tmp_path, "s", pages, toml=ENTRIES_TOML, systems=["rules"]))


def ref_of(suite: ExtractionSuite, key: str) -> Any:
    return next(r for r in suite.case_refs() if r.key == key)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def echo(tmp_path: Path, server: ModelServer) -> Iterator[ExtractionSuite]:
    """A suite whose only extractor is the model ``echo`` on the test server (no retries)."""
    pages = speaker_pages()
    for files in pages.values():
        del files["outputs"]
    pages["p2"]["texts"]["raw"] += "\n[fault:500]"
    config = {"base_url": server.base_url, "model": "echo-1", "max_retries": 0, "timeout": 5}
    models = ModelRuntime(
        {"echo": ModelConfig.from_table("echo", config, source="test")},
        workers=1,
        source="pyproject.toml",
    )
    suite_dir = write_extraction_suite(tmp_path, "s", pages, toml=ENTRIES_TOML, systems=["echo"])
    try:
        yield load(suite_dir, models)
    finally:
        models.close()


# -- what the plan says -------------------------------------------------------------------------


def test_a_saved_output_is_one_free_stage_keyed_by_its_path_and_bytes(tmp_path: Path) -> None:
    suite = rules_suite(tmp_path)
    ref = ref_of(suite, "p1[rules-raw]")
    plan = suite.plan(ref)
    (stage,) = plan.stages
    path = suite.spec.path / "p1" / "outputs" / "rules" / "raw.json"
    # The key as written by hand: the saved file's path and the SHA-256 of its bytes.
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert plan.results == {"output": cache_key({"saved": str(path)}, digest)}
    assert stage.fingerprint is None  # nothing to keep in the output cache: the file is there
    assert getattr(stage, "saved_file", None) is not None
    path.write_text(json.dumps(SPEAKERS["p1"]), encoding="utf-8")
    assert suite.plan(ref).results["output"] != plan.results["output"]  # an edit is a new output


def test_the_llm_stage_is_keyed_by_its_fingerprint_and_the_pages_text(tmp_path: Path) -> None:
    pages = speaker_pages()
    for files in pages.values():
        del files["outputs"]
    suite_dir = write_extraction_suite(tmp_path, "s", pages, toml=ENTRIES_TOML, systems=["m"])
    suite = load(suite_dir, runtime(m="http://127.0.0.1:9/v1"))
    plan = suite.plan(ref_of(suite, "p1[m-raw]"))
    (stage,) = plan.stages
    text_digest = hashlib.sha256(b"text 0f p1").hexdigest()
    assert plan.results == {"output": cache_key(suite.llms["m"].fingerprint(), text_digest)}
    assert stage.fingerprint is None  # the model's responses are kept per request instead
    (request,) = stage.build(())
    assert request.body()["messages"][1]["content"].endswith("<<<\ntext 0f p1\n>>>")


def test_a_missing_saved_output_or_ocr_text_is_an_error_of_the_plan(tmp_path: Path) -> None:
    pages = {"p1": {"truth": SPEAKERS["p1"], "outputs": {"rules": {"gold": {}}}}}
    suite = load(write_extraction_suite(tmp_path, "s", pages, toml=ENTRIES_TOML, systems=["rules"]))
    with pytest.raises(CaseInputError, match=r"p1/outputs/rules/raw.json: missing precomputed"):
        suite.plan(ref_of(suite, "p1[rules-raw]"))
    pages = {"p1": {"truth": SPEAKERS["p1"], "texts": {"gold": "g"}}}
    suite_dir = write_extraction_suite(tmp_path, "t", pages, toml=ENTRIES_TOML, systems=["m"])
    models = load(suite_dir, runtime(m="http://127.0.0.1:9/v1"))
    with pytest.raises(CaseInputError, match=r"p1/raw.txt: missing OCR text of variant 'raw'"):
        evaluate_alone(models, ref_of(models, "p1[m-raw]"))


@settings(max_examples=60)  # the profile has no deadline (conftest)
@given(
    st.binary(max_size=120)
    | st.recursive(st.integers() | st.text(), st.lists).map(
        lambda value: json.dumps(value).encode()
    )
)
def test_a_saved_answer_is_its_bytes_read_as_a_prediction(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "raw.json"
        path.write_bytes(data)
        answer = read_saved_answer(path, "rules", "outputs/rules/raw.json")
    assert answer.prediction == read_prediction(data)
    assert answer.source == "outputs/rules/raw.json"
    # files.output_digest by hand: the SHA-256 of the length, a colon, then the bytes
    digest = hashlib.sha256(f"{len(data)}:".encode() + data).hexdigest()
    assert answer.fingerprint == {
        "extractor": "rules",
        "kind": "precomputed",
        "output_sha256": digest,
    }


# -- evaluate scores the results, and nothing else ------------------------------------------------


def test_evaluate_scores_the_plans_answer_and_reads_no_output_itself(tmp_path: Path) -> None:
    suite = rules_suite(tmp_path)
    ref = ref_of(suite, "p1[rules-raw]")
    results = run_plan(suite.plan(ref), Store(None, "off"), case=ref.key)
    path = suite.spec.path / "p1" / "outputs" / "rules" / "raw.json"
    written = path.read_bytes()
    path.unlink()  # evaluate must score what the stage read, not read the file again
    result = suite.evaluate(ref, results, RunContext())
    direct = score_entries(SPEAKERS["p1"], RAW_PREDICTIONS["p1"], FIELDS, threshold=0.5)
    assert result.metrics == {**direct.metrics(), "json_valid": 1.0}
    assert result.fingerprint == {
        "extractor": "rules",
        "kind": "precomputed",
        # files.output_digest: the length-prefixed SHA-256 of the file, computed here by hand
        "output_sha256": hashlib.sha256(f"{len(written)}:".encode() + written).hexdigest(),
        "variant": "raw",
    }
    assert result.cache_key is None
    # Any answer handed over is what gets scored: its prediction, its source, its fingerprint.
    answer = Answer(read_prediction("[1"), "somewhere", {"made": "by hand"})
    made = suite.evaluate(ref, StageResults({"output": answer}), RunContext())
    assert made.metrics["json_valid"] == 0.0 and made.metrics["imq"] == 0.0
    assert made.fingerprint == {"made": "by hand", "variant": "raw"}
    assert made.notes[0].startswith("somewhere is not JSON")


def test_a_result_the_engine_was_not_given_is_an_error_naming_case_and_stage(
    tmp_path: Path,
) -> None:
    suite = rules_suite(tmp_path)
    ref = ref_of(suite, "p2[rules-gold]")
    plan = suite.plan(ref)
    engine = Engine(ExecutorSlot(parse_executor("threads", workers=1)), Store(None, "off"))
    try:
        with pytest.raises(StageNotPlanned) as raised:
            gather(plan, engine.output, engine.knows, f"s/{ref.key}")
    finally:
        engine.close()
    message = str(raised.value)
    assert message.startswith("s/p2[rules-gold]: stage outputs/rules/gold.json of p2 ")
    assert "was never planned" in message and "nothing is computed in its place" in message


# -- the LLM extractor through its stage -----------------------------------------------------------


def test_the_models_answer_is_scored_like_the_same_saved_output(
    echo: ExtractionSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = {f"text 0f {page}": RAW_PREDICTIONS[page] for page in SPEAKERS}
    monkeypatch.setattr(
        model_server, "reply_text", lambda messages: json.dumps(answers[_page_text(messages)])
    )
    result = evaluate_alone(echo, ref_of(echo, "p1[echo-raw]"))
    direct = score_entries(SPEAKERS["p1"], RAW_PREDICTIONS["p1"], FIELDS, threshold=0.5)
    metrics = {m: v for m, v in result.metrics.items() if m not in COST_METRICS}
    assert metrics == {**direct.metrics(), "json_valid": 1.0}
    assert result.fingerprint == {**echo.llms["echo"].fingerprint(), "variant": "raw"}


def _page_text(messages: list[dict[str, Any]]) -> str:
    content: str = messages[-1]["content"]
    return content.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]


def test_a_model_answering_500_is_the_tests_error_naming_model_and_case(
    echo: ExtractionSuite,
) -> None:
    with pytest.raises(SystemRunError, match=r"model 'echo'.*case 'p2 \(raw\)'.*HTTP 500"):
        evaluate_alone(echo, ref_of(echo, "p2[echo-raw]"))


def test_an_empty_model_answer_is_an_error_not_an_empty_prediction(
    echo: ExtractionSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_server, "reply_text", lambda messages: " \n")
    with pytest.raises(
        SystemRunError, match=r"model 'echo' answered with nothing for 'p3 \(gold\)'"
    ):
        evaluate_alone(echo, ref_of(echo, "p3[echo-gold]"))
