"""The exam kind's modules without pytester: configuration, tolerant question loading, saved
outputs, the plan (its stages build the very requests the tests send; a result whose stage is
missing is an error, never recomputed), the OCR step and its CER (cross-checked with
rapidfuzz), the random model, and the HTML renderers of its analyses."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_fixtures import model_config, png_bytes
from model_server import ModelServer
from rapidfuzz.distance import Levenshtein

from pytest_doceval.config import StatsConfig, load_suite_spec
from pytest_doceval.engine import (
    CpuStage,
    Engine,
    ExecutorSlot,
    ModelStage,
    StageFailed,
    StageNotPlanned,
    parse_executor,
)
from pytest_doceval.engine.plan import gather
from pytest_doceval.errors import (
    CaseInputError,
    SuiteConfigError,
    SystemRunError,
    SystemUnavailable,
)
from pytest_doceval.html.model import suite_views
from pytest_doceval.kinds.base import RunContext, evaluate_alone
from pytest_doceval.kinds.exam.analyses import EXAM_ANALYSES
from pytest_doceval.kinds.exam.html import accuracy, breakdowns, deltas, pct
from pytest_doceval.kinds.exam.inputs import load_question_set, read_outputs
from pytest_doceval.kinds.exam.ocr import OCR_TEXT
from pytest_doceval.kinds.exam.prompts import GENERATION
from pytest_doceval.kinds.exam.questions import QUESTIONS
from pytest_doceval.kinds.exam.scoring import random_answer
from pytest_doceval.kinds.exam.suite import ExamSuite
from pytest_doceval.kinds.registry import make_suite
from pytest_doceval.models.hub import Hub
from pytest_doceval.models.requests import ChatRequest, ChatResponse
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.store import Store, cache_key, store_output, stored_output
from pytest_doceval.systems.registry import build_registry

Row = dict[str, Any]
ORACLE = "How many provinces does Canada have?\nA. 8\nB. 10\nC. 12\nD. 13"


def question(number: int, *, oracle: bool = True, **over: Any) -> Row:
    row: Row = {
        "id": f"q{number}",
        "image": f"images/q{number}.png",
        "answer": 1 + number % 4,
        "choices": 4,
        "nation": "Korea" if number % 2 else "Canada",
        "task": "civics" if number % 3 else "maths",
    }
    if oracle:
        row["oracle_text"] = f"Question {number}.\n{ORACLE}"
    return row | over


def write(folder: Path, toml: str, rows: Sequence[Row | str]) -> Path:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines = []
    for number, row in enumerate(rows):
        if isinstance(row, dict):
            (folder / "images" / f"q{number}.png").write_bytes(png_bytes(9 + number, 7, number))
        lines.append(row if isinstance(row, str) else json.dumps(row))
    (folder / QUESTIONS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "suite.toml").write_text(f'[suite]\nkind = "exam"\n{toml}', encoding="utf-8")
    return folder / "suite.toml"


def build(file: Path, *models: str, store: Store | None = None) -> ExamSuite:
    """The suite, its models configured (at a port nothing listens on: `sent` answers), the
    answers it keeps going to `store` (the run's store; default: none kept)."""
    configs = {name: model_config("http://127.0.0.1:9/v1", name) for name in models}
    runtime = ModelRuntime(configs, workers=1, source="pyproject.toml", store=store)
    suite = make_suite(load_suite_spec(file), build_registry(), runtime)
    assert isinstance(suite, ExamSuite)
    return suite


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ChatRequest]]:
    """Every request a test's model stages send (through the hub, as in a run); the fake model
    answers its own OCR prompt with a transcription and anything else with "2"."""
    log: list[ChatRequest] = []

    async def get(self: Hub, request: ChatRequest) -> ChatResponse:
        log.append(request)
        return ChatResponse(ORACLE if request.prompt_version.startswith("exam-ocr") else "2")

    monkeypatch.setattr(Hub, "get", get)
    yield log


@pytest.fixture
def ocr_calls(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    calls: list[bytes] = []

    def fake(image: bytes) -> str:
        calls.append(image)
        return "Question 0.\n" + ORACLE.replace("provinces", "provnces")

    monkeypatch.setattr("pytest_doceval.systems.rapidocr_ocr.ocr_image", fake)
    return calls


def ctx(tmp_path: Path) -> RunContext:
    return RunContext(Store(tmp_path / "cache"))


def evaluate(suite: ExamSuite, ref: Any, context: RunContext) -> Any:
    """`ref` planned, its stages run and scored, outputs kept in `context`'s store."""
    return evaluate_alone(suite, ref, context, store=context.cache)


# -- configuration -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "cause"),
    [
        ('tracks = ["A"]\n', "models must be a non-empty list"),
        ('models = ["m"]\ntracks = ["A", "D"]\n', "unknown track 'D'"),
        ('models = ["m", "m"]\ntracks = ["A"]\n', "lists m twice"),
        ('models = ["a b"]\ntracks = ["A"]\n', "'a b' is not a usable name"),
        ('models = ["m"]\ntracks = ["A"]\nanswer_parser = "lenient"\n', "unknown answer_parser"),
        ('models = ["m"]\ntracks = ["A"]\nlanguage = "ko"\n', "unknown key(s) language"),
        ('models = ["m"]\ntracks = ["A"]\nhuman_pass_marks = {Korea = 60}\n', "not 60"),
        ('models = ["m"]\ntracks = ["A"]\nocr_max_tokens = 0\n', "ocr_max_tokens must be"),
        ('models = ["m"]\ntracks = ["A"]\n[systems.x]\nmax_tokens = 5\n', "not in models"),
        (
            'models = ["m"]\ntracks = ["A"]\n[systems.m]\nmax_token = 5\n',
            "unknown key(s) max_token",
        ),
        ('models = ["m"]\ntracks = ["A"]\n[systems.m]\ntop_p = 2\n', "top_p must be a number"),
        ('models = ["m"]\ntracks = ["A"]\n[systems.m]\nmax_tokens = 1.5\n', "an integer >= 1"),
        ('models = ["m"]\ntracks = ["A"]\n[systems.m]\ntracks = ["B2"]\n', "some of the suite"),
        ('models = ["random"]\ntracks = ["A"]\n[systems.random]\nseed = "x"\n', "an integer"),
        ('models = ["m"]\ntracks = ["A"]\n[gates]\naccuracy = "-1pp"\n', "'accuracy'"),
    ],
)
def test_a_bad_suite_toml_names_the_key(tmp_path: Path, toml: str, cause: str) -> None:
    file = write(tmp_path, toml, [question(0)])
    with pytest.raises(SuiteConfigError) as error:
        build(file)
    assert cause in str(error.value) and str(file) in str(error.value)


def test_refs_labels_and_per_model_tracks(tmp_path: Path) -> None:
    toml = 'models = ["vlm", "llm"]\ntracks = ["A", "B1", "B2"]\n'
    toml += '[systems.llm]\ntracks = ["B2", "B1"]\n'
    suite = build(write(tmp_path, toml, [question(0), question(1, oracle=False)]))
    keys = [ref.key for ref in suite.case_refs()]
    assert keys == [
        "q0[vlm-A]",
        "q0[vlm-B1]",
        "q0[vlm-B2]",
        "q0[llm-B1]",
        "q0[llm-B2]",
        "q1[vlm-A]",
        "q1[vlm-B1]",
        "q1[llm-B1]",
    ]  # file order; B2 only with oracle text; a model's tracks in the suite's order
    ref = suite.case_refs()[0]
    assert ref.labels == {"model": "vlm", "track": "A", "nation": "Canada", "task": "maths"}
    assert suite.system_names() == ["vlm-A", "vlm-B1", "vlm-B2", "llm-B1", "llm-B2"]
    assert suite.describe()["model_tracks"] == {"llm": ["B1", "B2"]}


def test_scoring_id_is_the_protocol_not_the_system(tmp_path: Path) -> None:
    base = build(write(tmp_path / "a", 'models = ["m"]\ntracks = ["A"]\n', [question(0)]))
    tuned = 'models = ["m"]\ntracks = ["A"]\nocr = "m"\n[systems.m]\nmax_tokens = 512\n'
    other = build(write(tmp_path / "b", tuned, [question(0)]))
    robust = 'models = ["m"]\ntracks = ["A"]\nanswer_parser = "robust-v1"\n'
    parsed = build(write(tmp_path / "c", robust, [question(0)]))
    assert base.scoring_id == other.scoring_id != parsed.scoring_id
    assert base.scoring_id.startswith("seed-001@") and parsed.scoring_id.startswith("robust-v1@")


# -- questions and saved outputs ----------------------------------------------------------------

BREAKERS: dict[str, Callable[[Row], Row | str]] = {
    "answer": lambda r: r | {"answer": 9},
    "nation": lambda r: {k: v for k, v in r.items() if k != "nation"},
    "task": lambda r: r | {"task": ""},
    "json": lambda r: json.dumps(r)[:-1],
    "no-id": lambda r: {k: v for k, v in r.items() if k != "id"},
    "choices": lambda r: r | {"choices": 7},
}


@given(st.lists(st.sampled_from(["ok", *BREAKERS]), min_size=1, max_size=45))
@settings(max_examples=25, deadline=None)
def test_bad_rows_break_only_their_question(tmp_path_factory: Any, kinds: list[str]) -> None:
    folder = tmp_path_factory.mktemp("q")
    rows = [question(i) if k == "ok" else BREAKERS[k](question(i)) for i, k in enumerate(kinds)]
    write(folder, 'models = ["random"]\ntracks = ["A"]\n', rows)
    loaded = load_question_set(folder)
    assert [q.id for q in loaded.questions] == [f"q{i}" for i, k in enumerate(kinds) if k == "ok"]
    expected = {f"line-{i + 1}" if k in ("json", "no-id") else f"q{i}" for i, k in enumerate(kinds)}
    assert set(loaded.broken) == expected - {f"q{i}" for i, k in enumerate(kinds) if k == "ok"}
    for name, broken in loaded.broken.items():
        assert all(f"{QUESTIONS}:{broken.line}" in m for m in broken.messages), name


def test_a_line_that_is_not_utf8_breaks_that_line_only(tmp_path: Path) -> None:
    write(tmp_path, "", [question(0)])
    with (tmp_path / QUESTIONS).open("ab") as handle:
        handle.write(b'{"id": "\xff"}\n')
    loaded = load_question_set(tmp_path)
    assert [q.id for q in loaded.questions] == ["q0"]
    assert loaded.broken["line-2"].messages == [
        f"{tmp_path / QUESTIONS}:2: not UTF-8 (byte 0xff at offset 8)"
    ]


def test_a_duplicate_breaks_the_question_of_that_id(tmp_path: Path) -> None:
    write(tmp_path, "", [question(0), question(1), question(0) | {"task": "other"}])
    loaded = load_question_set(tmp_path)
    assert [q.id for q in loaded.questions] == ["q0", "q1"]
    assert loaded.broken["q0"].line == 1 and loaded.broken["q0"].labels["task"] == "maths"
    assert "duplicate question id 'q0' (first on line 1)" in loaded.broken["q0"].messages[0]


@pytest.mark.parametrize(
    ("content", "cause"),
    [(None, "missing"), (b"\n\n", "no questions")],
)
def test_an_unreadable_questions_file_fails_the_suite(
    tmp_path: Path, content: bytes | None, cause: str
) -> None:
    file = write(tmp_path, 'models = ["random"]\ntracks = ["A"]\n', [question(0)])
    if content is None:
        (tmp_path / QUESTIONS).unlink()
    else:
        (tmp_path / QUESTIONS).write_bytes(content)
    with pytest.raises(CaseInputError, match=cause):
        build(file)


def test_an_image_broken_after_collection_errors_every_system(tmp_path: Path) -> None:
    suite = build(write(tmp_path, 'models = ["random"]\ntracks = ["A", "B2"]\n', [question(0)]))
    (tmp_path / "images" / "q0.png").write_bytes(b"GIF89a" + bytes(30))
    for ref in suite.case_refs():
        with pytest.raises(CaseInputError, match=r"questions.jsonl:1: question 'q0'.*not a PNG"):
            evaluate(suite, ref, ctx(tmp_path))


def test_saved_outputs_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "m-A.jsonl"
    path.write_text('{"id": "q0", "output": "3"}\n\n{"id": "q1", "output": ""}\n')
    assert read_outputs(path) == {"q0": "3", "q1": ""}
    path.write_text('{"id": "q0", "output": "3"}\n{"id": "q0", "output": "4"}\n{"id": 1}\n[\n')
    with pytest.raises(CaseInputError) as error:
        read_outputs(path)
    lines = str(error.value).splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [f"{path}:{n}" for n in (2, 3, 4)]
    assert "a second output for question 'q0'" in lines[0]


# -- requests, models and the OCR ----------------------------------------------------------------


def evaluate_all(suite: ExamSuite, context: RunContext) -> dict[str, Any]:
    return {ref.key: evaluate(suite, ref, context) for ref in suite.case_refs()}


def test_the_stages_build_the_very_requests_the_tests_send(
    tmp_path: Path, sent: list[ChatRequest], ocr_calls: list[bytes]
) -> None:
    toml = 'models = ["m"]\ntracks = ["A", "B1", "B2", "C"]\n[systems.m]\nmax_tokens = 64\n'
    suite = build(write(tmp_path, toml, [question(0), question(1, oracle=False)]), "m")
    context = ctx(tmp_path)
    stages = {s.key: s for ref in suite.case_refs() for s in suite.plan(ref).stages}
    ocr = [s for s in stages.values() if isinstance(s, CpuStage)]
    answers = [s for s in stages.values() if isinstance(s, ModelStage)]
    assert len(ocr) == 2  # one RapidOCR stage per image: B1 and C share its reading
    assert len(answers) == 7 and all(len(s.needs) <= 1 for s in answers)
    results = evaluate_all(suite, context)
    assert len(sent) == 7 and len(ocr_calls) == 2  # B1 and C share one reading per image
    texts = {s.key: stored_output(context.cache, s.key) for s in ocr}  # kept by the engine
    assert all(text is not None and "provnces" in text for text in texts.values())
    built = {r.cache_key() for s in answers for r in s.build(tuple(texts[k] for k in s.needs))}
    assert built == {r.cache_key() for r in sent}  # the stages ask what the tests asked
    for request in sent:
        assert request.generation == {"temperature": 0.0, "max_tokens": 64, "top_p": 1.0}
    assert results["q0[m-A]"].metrics == {
        "correct": float(question(0)["answer"] == 2),
        "parse_failure": 0.0,
    }
    fresh = build(write(tmp_path, toml, [question(0), question(1, oracle=False)]), "m")
    evaluate_all(fresh, ctx(tmp_path))  # another process finds the OCR text in the cache
    assert len(ocr_calls) == 2


def test_a_model_ocr_is_a_model_stage_and_its_text_reaches_b1(
    tmp_path: Path, sent: list[ChatRequest]
) -> None:
    toml = 'models = ["m"]\ntracks = ["B1"]\nocr = "reader"\nocr_max_tokens = 300\n'
    suite = build(write(tmp_path, toml, [question(0), question(1)]), "m", "reader")
    stages = [s for ref in suite.case_refs() for s in suite.plan(ref).stages]
    ocr = [s for s in stages if isinstance(s, ModelStage) and s.model == "reader"]
    first = [r for s in ocr for r in s.build(())]
    assert [r.model for r in first] == ["reader", "reader"]
    assert {r.generation["max_tokens"] for r in first} == {300}
    results = evaluate_all(suite, ctx(tmp_path))
    assert [r.model for r in sent] == ["reader", "m", "reader", "m"]
    assert {r.cache_key() for r in first} == {r.cache_key() for r in sent if r.model == "reader"}
    b1 = results["q0[m-B1]"]
    assert ORACLE in sent[1].messages[1]["content"]
    assert b1.views["ocr"] == {"engine": "model reader", "text": ORACLE}
    assert b1.fingerprint["ocr"]["max_tokens"] == 300
    assert b1.metrics["ocr_cer"] == pytest.approx(
        len("Question 0. ") / len("Question 0. " + " ".join(ORACLE.split()))
    )


def test_an_empty_model_transcription_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def blank(self: Hub, request: ChatRequest) -> ChatResponse:
        return ChatResponse("  ")

    monkeypatch.setattr(Hub, "get", blank)
    suite = build(
        write(tmp_path, 'models = ["m"]\ntracks = ["C"]\nocr = "m"\n', [question(0)]), "m"
    )
    with pytest.raises(SystemRunError, match=r"returned no text for images/q0.png \(stage ocr"):
        evaluate(suite, suite.case_refs()[0], ctx(tmp_path))


def test_unconfigured_models_skip_with_how_to(tmp_path: Path) -> None:
    toml = 'models = ["m", "ghost"]\ntracks = ["A", "B1"]\nocr = "reader"\n'
    suite = build(write(tmp_path, toml, [question(0)]), "m")
    refs = {ref.key: ref for ref in suite.case_refs()}
    with pytest.raises(SystemUnavailable, match=r"add \[tool.doceval.models.ghost\]"):
        evaluate(suite, refs["q0[ghost-A]"], ctx(tmp_path))
    with pytest.raises(SystemUnavailable, match=r"ocr = 'reader', which is not configured"):
        evaluate(suite, refs["q0[m-B1]"], ctx(tmp_path))
    assert suite.plan(refs["q0[m-A]"]).stages  # m-A still has its answer stage
    with pytest.raises(SystemUnavailable):  # planning it is what skips its test
        suite.plan(refs["q0[ghost-A]"])


def test_a_result_whose_stage_did_not_run_errors_naming_the_case_and_is_not_recomputed(
    tmp_path: Path, sent: list[ChatRequest], ocr_calls: list[bytes]
) -> None:
    suite = build(write(tmp_path, 'models = ["m"]\ntracks = ["B1"]\n', [question(0)]), "m")
    ref = suite.case_refs()[0]
    plan = suite.plan(ref)
    ocr, answer = plan.stages
    assert plan.results == {"ocr": ocr.key, "output": answer.key} and answer.needs == (ocr.key,)
    models = suite.systems_env.models
    assert models is not None
    engine = Engine(
        ExecutorSlot(parse_executor("threads", workers=1)), Store(None, "off"), hub=models.hub
    )
    try:
        engine.add([ocr])  # the engine is never given the answer's stage
        with pytest.raises(
            StageNotPlanned, match=r"^exams/q0\[m-B1\]: stage m-B1 answering q0 was never planned"
        ):
            gather(plan, engine.output, engine.knows, f"exams/{ref.key}")
    finally:
        engine.close()
    assert sent == []  # nothing asked in its place


def test_bad_saved_answers_error_their_tests_naming_the_file(tmp_path: Path) -> None:
    file = write(tmp_path, 'models = ["m"]\ntracks = ["A"]\n', [question(0), question(1)])
    saved = tmp_path / "outputs" / "m-A.jsonl"
    saved.parent.mkdir()
    saved.write_text('{"id": "q0", "output": "2"}\n')
    context = ctx(tmp_path)
    suite = build(file, store=context.cache)
    q0, q1 = suite.case_refs()
    result = evaluate(suite, q0, context)
    assert result.details["source"] == "precomputed"
    assert result.metrics["correct"] == float(question(0)["answer"] == 2)
    # The row's fingerprint and key, written out: what baselines made before the plan hold.
    assert result.fingerprint == {
        "model": "m",
        "precomputed": "outputs/m-A.jsonl",
        "output_sha256": hashlib.sha256(b"1:2").hexdigest(),  # length-prefixed
    }
    digest = hashlib.sha256(b"q0\n2").hexdigest()
    assert result.cache_key == cache_key(result.fingerprint, digest)
    assert stored_output(context.cache, result.cache_key) == "2"
    where = re.escape(str(saved))
    with pytest.raises(StageFailed, match=rf"^{where}: no output for question 'q1'"):
        evaluate(suite, q1, context)
    saved.write_text('{"id": "q0", "output": "2"}\n[\n')
    suite = build(file)
    for ref in suite.case_refs():  # a broken file breaks every test reading it
        with pytest.raises(StageFailed, match=rf"^{where}:2: not valid JSON"):
            evaluate(suite, ref, context)


def test_a_server_error_is_an_error_of_its_test(tmp_path: Path) -> None:
    rows = [question(0), question(1, oracle_text="Question 1.\n[fault:500]")]
    file = write(tmp_path, 'models = ["echo"]\ntracks = ["B2"]\n', rows)
    with ModelServer() as server:
        config = model_config(server.base_url, "echo", max_retries=0)
        runtime = ModelRuntime({"echo": config}, workers=1, source="pyproject.toml")
        suite = make_suite(load_suite_spec(file), build_registry(), runtime)
        assert isinstance(suite, ExamSuite)
        good, bad = suite.case_refs()
        try:
            assert evaluate(suite, good, ctx(tmp_path)).details["source"] == "served"
            with pytest.raises(
                StageFailed, match=r"'echo'.*'q1'.*500.*\(stage echo-B2 answering q1"
            ):
                evaluate(suite, bad, ctx(tmp_path))
        finally:
            runtime.close()


def test_random_is_seeded_and_needs_nothing(tmp_path: Path) -> None:
    rows = [question(i) | {"choices": 5} for i in range(30)]
    plain = build(write(tmp_path / "a", 'models = ["random"]\ntracks = ["A", "B2"]\n', rows))
    seeded = 'models = ["random"]\ntracks = ["A"]\n[systems.random]\nseed = 3\n'
    other = build(write(tmp_path / "b", seeded, rows))
    first, second = evaluate_all(plain, ctx(tmp_path)), evaluate_all(other, ctx(tmp_path))
    answers = [int(first[f"q{i}[random-A]"].views["answer"]["raw"]) for i in range(30)]
    assert answers == [random_answer(f"q{i}", 5, 0) for i in range(30)]
    assert answers != [int(second[f"q{i}[random-A]"].views["answer"]["raw"]) for i in range(30)]
    for i in range(30):  # the same answer on every track: its deltas are exactly zero
        assert first[f"q{i}[random-A]"].metrics == first[f"q{i}[random-B2]"].metrics
    for ref in plain.case_refs():  # one free stage of its own: no input, no cost, no model
        (stage,) = plain.plan(ref).stages
        assert isinstance(stage, CpuStage) and stage.free and not stage.needs


def test_a_changed_answer_shows_against_the_baseline_answer(
    tmp_path: Path, sent: list[ChatRequest]
) -> None:
    file = write(tmp_path, 'models = ["m"]\ntracks = ["A"]\n', [question(0)])
    context = ctx(tmp_path)
    first = build(file, "m", store=context.cache)
    old = evaluate(first, first.case_refs()[0], context)
    assert stored_output(context.cache, str(old.cache_key)) == "2"  # kept for a later run
    (tmp_path / "images" / "q0.png").write_bytes(png_bytes(30, 30, 5))
    suite = build(file, "m", store=context.cache)
    ref = suite.case_refs()[0]
    previous = RunContext(context.cache, previous_cache_key=old.cache_key)
    unchanged = evaluate(suite, ref, previous)
    assert unchanged.cache_key != old.cache_key  # another image: another request
    assert "output_diff" not in unchanged.views  # same answer "2": nothing to show
    store_output(context.cache, str(old.cache_key), "4", {})
    changed = evaluate(suite, ref, previous)
    assert changed.views["output_diff"]["ops"] == [["S", "4", "2"]]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_ocr_cer_is_levenshtein_over_the_normalised_oracle(oracle: str, ocr: str) -> None:
    from pytest_doceval.metrics.text import character_errors

    a, b = OCR_TEXT(oracle), OCR_TEXT(ocr)
    # Written out independently: NFKC, then every whitespace run one space, ends trimmed.
    assert a == " ".join(unicodedata.normalize("NFKC", oracle).split())
    counts = character_errors(a, b)
    assert counts.errors == Levenshtein.distance(a, b)
    assert OCR_TEXT(a) == a  # idempotent
    assert OCR_TEXT(" \n".join(oracle.split())) == OCR_TEXT(oracle)  # layout is not content


def test_real_rapidocr_reads_an_example_question() -> None:
    folder = Path(__file__).resolve().parents[1] / "cases" / "civil-exams"
    if not (folder / QUESTIONS).is_file():
        pytest.skip("the example suite is not here")
    suite = build(folder / "suite.toml")
    q = suite.by_id["au-geography-01"]
    stage = suite.ocr.stage(q, q.read_image(folder))
    assert isinstance(stage, CpuStage)
    text = stage.call(*stage.args)
    assert "Canberra" in text and "capital city of Australia" in text
    from pytest_doceval.metrics.text import character_errors

    assert character_errors(OCR_TEXT(q.oracle_text or ""), OCR_TEXT(text)).rate < 0.9


def test_the_analyses_load_lazily() -> None:
    assert list(ExamSuite.analyses) == list(EXAM_ANALYSES) and len(ExamSuite.analyses) == 7
    assert ExamSuite.analyses[0].key == "accuracy"
    code = "import sys, pytest_doceval.kinds.exam.suite; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- HTML --------------------------------------------------------------------------------------

XSS = "<script>alert(1)</script>"


def exam_rows() -> list[Row]:
    rows = []
    for q in range(8):
        for model, track, right in (("m", "A", q < 4), ("m", "B2", q < 6), (XSS, "A", q % 2)):
            rows.append(
                {
                    "case": f"q{q}",
                    "system": f"{model}-{track}",
                    "outcome": "passed",
                    "labels": {
                        "model": model,
                        "track": track,
                        "nation": "Korea" if q < 5 else "Canada",
                        "task": "civics" if q % 3 else "maths",
                    },
                    "metrics": {"correct": float(right), "parse_failure": 0.0},
                    "details": {"choices": 4},
                }
            )
    return rows


def section() -> Any:
    rows = exam_rows()
    config = StatsConfig(resamples=200)
    data: dict[str, Any] = {"results": rows, "analysis_keys": [a.key for a in EXAM_ANALYSES]}
    for analysis in EXAM_ANALYSES:
        data[analysis.key] = analysis(rows, {"human_pass_marks": {"Korea": 0.6}}, config)
    report = {"suites": {"exam": data}, "config": {"confidence": 0.95}}
    return suite_views(report)[0]


def test_accuracy_table_shows_each_cell_the_random_line_and_pass_marks() -> None:
    view = section()
    html = accuracy("accuracy", view.data["accuracy"], view)
    assert XSS not in html and "&lt;script&gt;" in html
    assert "<th>track A</th><th>track B2</th>" in html
    assert ">50.0%</span>" in html and ">75.0%</span>" in html  # m on A: 4/8, on B2: 6/8
    assert "random baseline (1/choices)" in html and "25.0%" in html
    assert "Korea 60.0%" in html
    assert "—" in html  # the XSS model has no B2


def test_delta_table_and_plot() -> None:
    view = section()
    html = deltas("deltas", view.data["deltas"], view)
    assert "Δ(B2-A)" in html and "+25.0%" in html  # 75% - 50% on the same 8 questions
    assert "&gt; 0: perception as a whole is the bottleneck" in html
    assert html.count('class="whisker"') == 3 and 'class="dot"' in html
    assert re.search(r'<line class="axis" x1="([\d.]+)" x2="\1"', html)  # the zero line


def test_nation_by_task_grid_counts_the_rows() -> None:
    view = section()
    html = breakdowns("breakdowns", view.data["breakdowns"], view)
    # m on A, Korea x civics: q1, q2, q4 asked; q1, q2 right.
    grid = html.split("m · track A</summary>")[1].split("</table>")[0]
    assert "<tr><th>Korea</th>" in grid
    korea = grid.split("<tr><th>Korea</th>")[1].split("</tr>")[0]
    assert korea.startswith('<td class="num">2 / 3</td><td class="num">2 / 2</td>')
    assert XSS not in html


@pytest.mark.parametrize("render", [accuracy, deltas, breakdowns])
def test_an_unexpected_shape_falls_back_to_the_generic_table(render: Any) -> None:
    view = section()
    html = render("odd", [{"x": XSS}], view)
    assert "odd" in html and XSS not in html


def test_percentages() -> None:
    assert [pct(0.25), pct(-0.0001, signed=True), pct(0.1234, signed=True), pct(None)] == [
        "25.0%",
        "0.0%",
        "+12.3%",
        "n/a",
    ]


def test_generation_defaults_are_the_seeds(tmp_path: Path, sent: list[ChatRequest]) -> None:
    suite = build(write(tmp_path, 'models = ["m"]\ntracks = ["A"]\n', [question(0)]), "m")
    evaluate(suite, suite.case_refs()[0], ctx(tmp_path))
    assert sent[0].generation == dict(GENERATION)
    assert sent[0].prompt_version.startswith("seed-001-image-v1@")
