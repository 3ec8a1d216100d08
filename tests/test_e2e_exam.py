"""The exam kind end to end, as a user runs it: a pytester project with questions, images and a
suite.toml, against the deterministic test server (which echoes what it was sent and reports
each image's byte length and SHA-256), saved outputs, the built-in random model and bad input."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from model_fixtures import png_bytes
from model_server import ModelServer

from pytest_doceval.metrics.cost import COST_METRICS
from tests.conftest import WORKERS, read_report

Row = dict[str, Any]

# (id, nation, task, choices, key, the answer its oracle text states or None for no oracle)
QUESTIONS: tuple[tuple[str, str, str, int, int, int | None], ...] = (
    ("kr-01", "Korea", "civics", 5, 3, 3),
    ("kr-02", "Korea", "maths", 5, 1, 2),
    ("kr-03", "Korea", "civics", 4, 2, None),
    ("ca-01", "Canada", "civics", 4, 4, 4),
    ("ca-02", "Canada", "maths", 4, 1, 1),
    ("ca-03", "Canada", "maths", 5, 5, None),
)
WITH_ORACLE = [q for q in QUESTIONS if q[5] is not None]


def image(number: int) -> bytes:
    """A distinct PNG per question; sizes differ so that a resized copy could not pass."""
    return png_bytes(37 + 3 * number, 23 + number, shade=number)


def question_rows(questions: Sequence[tuple[str, str, str, int, int, int | None]]) -> list[Row]:
    rows = []
    for number, (qid, nation, task, choices, key, stated) in enumerate(questions):
        row: Row = {"id": qid, "image": f"images/{qid}.png", "answer": key, "choices": choices}
        row |= {"nation": nation, "task": task, "number": number}
        if stated is not None:
            # robust-v1 reads "Final answer: N" in the echo; the words before it are the text.
            row["oracle_text"] = f"Question {qid}: pick one.\nFinal answer: {stated}"
        rows.append(row)
    return rows


def write_exam(
    root: Path,
    *,
    models: Sequence[str],
    tracks: Sequence[str],
    rows: Sequence[Row] | None = None,
    raw_lines: Sequence[str] = (),
    extra: str = "",
    outputs: Mapping[str, Sequence[Row]] | None = None,
) -> Path:
    suite = root / "cases" / "exam"
    (suite / "images").mkdir(parents=True, exist_ok=True)
    rows = question_rows(QUESTIONS) if rows is None else rows
    for row in rows:
        (suite / row["image"]).write_bytes(image(int(row.get("number", 0))))
    lines = [json.dumps({k: v for k, v in r.items() if k != "number"}) for r in rows]
    (suite / "questions.jsonl").write_text("\n".join([*lines, *raw_lines]) + "\n")
    toml = f'[suite]\nkind = "exam"\nmodels = {json.dumps(list(models))}\n'
    toml += f"tracks = {json.dumps(list(tracks))}\n{extra}"
    (suite / "suite.toml").write_text(toml)
    for system, saved in (outputs or {}).items():
        (suite / "outputs").mkdir(exist_ok=True)
        (suite / "outputs" / f"{system}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in saved)
        )
    return suite


def use_server(pytester: pytest.Pytester, server: ModelServer | None, tail: str = "") -> None:
    models = ""
    if server is not None:
        models = (
            f'\n[tool.doceval.models.echo]\nbase_url = "{server.base_url}"\nmodel = "echo-1"\n'
            f"max_concurrency = 4\n{tail}"
        )
    pytester.makepyprojecttoml(f'[tool.doceval]\nsuites = ["cases"]\n{models}')


def section(pytester: pytest.Pytester) -> dict[str, Any]:
    report: dict[str, Any] = read_report(pytester.path / "doceval-report.json")
    return dict(report["suites"]["exam"])


def rows_of(sec: Mapping[str, Any], system: str) -> dict[str, Row]:
    return {r["case"]: r for r in sec["results"] if r["system"] == system}


def image_line(number: int) -> str:
    png = image(number)
    return f"user: image {len(png)} {hashlib.sha256(png).hexdigest()}"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.mark.parametrize("workers", WORKERS)
def test_tracks_a_b2_c_against_the_test_server(
    pytester: pytest.Pytester, server: ModelServer, workers: list[str]
) -> None:
    use_server(pytester, server)
    extra = 'answer_parser = "robust-v1"\nocr = "echo"\n'
    write_exam(pytester.path, models=["echo", "random"], tracks=["A", "B2", "C"], extra=extra)
    n, oracle = len(QUESTIONS), len(WITH_ORACLE)
    tests = 2 * (n + oracle + n)
    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=tests)
    # A: 6, B2: 4, the OCR model: 6 images, C: 6 -- each distinct request sent once.
    assert server.total == n + oracle + n + n
    sec = section(pytester)
    numbers = {q[0]: i for i, q in enumerate(QUESTIONS)}

    a_rows = rows_of(sec, "echo-A")
    assert a_rows["kr-01"]["nodeid"] == "cases/exam/suite.toml::kr-01[echo-A]"
    assert set(a_rows) == {q[0] for q in QUESTIONS}
    for qid, row in a_rows.items():
        # The image arrived byte for byte as stored: no resizing, no re-encoding.
        assert image_line(numbers[qid]) in row["views"]["answer"]["raw"].splitlines()
        assert row["labels"] == {
            "model": "echo",
            "track": "A",
            "nation": QUESTIONS[numbers[qid]][1],
            "task": QUESTIONS[numbers[qid]][2],
        }
        # The echo states no answer: a measured parse failure, counted wrong.
        quality = {m: v for m, v in row["metrics"].items() if m not in COST_METRICS}
        assert quality == {"correct": 0.0, "parse_failure": 1.0}
        assert row["metrics"]["model_requests"] == 1  # what asking cost, beside the score
        assert row["views"]["answer"]["parsed"] is None
        assert row["fingerprint"]["generation"] == {
            "temperature": 0.0,
            "max_tokens": 10,
            "top_p": 1.0,
        }

    b2_rows = rows_of(sec, "echo-B2")
    assert set(b2_rows) == {q[0] for q in WITH_ORACLE}  # B2 runs where oracle text exists
    for qid, *_, key, stated in WITH_ORACLE:
        view = b2_rows[qid]["views"]["answer"]
        assert f"Question {qid}: pick one." in view["raw"]
        assert (view["parsed"], view["rule"]) == (stated, "final:digit")
        assert b2_rows[qid]["metrics"]["correct"] == float(stated == key)

    c_rows = rows_of(sec, "echo-C")
    for qid, row in c_rows.items():
        raw = row["views"]["answer"]["raw"]
        ocr = row["views"]["ocr"]
        assert ocr["engine"] == "model echo"
        # The OCR model saw the same image, and its transcription went into C's prompt.
        assert image_line(numbers[qid]) in ocr["text"].splitlines()
        assert "Text extracted from the image by OCR:" in raw and ocr["text"] in raw
        assert raw.splitlines().count(image_line(numbers[qid])) == 2  # C's image + the OCR's
        assert row["fingerprint"]["ocr"]["ocr"] == "model"
        has_oracle = QUESTIONS[numbers[qid]][5] is not None
        assert ("ocr_cer" in row["metrics"]) == has_oracle
        if has_oracle:
            counts = row["counts"]["ocr_cer"]
            errors = counts["substitutions"] + counts["deletions"] + counts["insertions"]
            assert row["metrics"]["ocr_cer"] == pytest.approx(errors / counts["reference_length"])
            assert row["views"]["text_diff"]["metric"] == "ocr_cer"

    # Accuracy from the rows equals an independent count of keys against stated answers.
    expected_b2 = sum(stated == key for *_, key, stated in WITH_ORACLE) / oracle
    table = {(e["model"], e["track"]): e for e in sec["accuracy"]}
    assert table["echo", "B2"]["accuracy"] == pytest.approx(expected_b2)
    assert sec["aggregates"]["echo-B2"]["correct"]["mean"] == pytest.approx(expected_b2)
    assert table["echo", "A"]["accuracy"] == 0.0 and table["echo", "A"]["parse_failures"] == n
    random_rows = rows_of(sec, "random-A")
    keys = {q[0]: q[4] for q in QUESTIONS}
    expected_random = sum(
        int(r["views"]["answer"]["raw"]) == keys[q] for q, r in random_rows.items()
    )
    assert table["random", "A"]["accuracy"] == pytest.approx(expected_random / n)
    assert sec["ocr"] == "echo" and sec["prompts"]["ocr"]["prompt"] == "exam-ocr-v1"
    assert sec["analysis_keys"] == [
        "accuracy",
        "breakdowns",
        "deltas",
        "anova",
        "pairwise",
        "consistency",
        "references",
    ]

    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=tests)
    assert server.total == n + oracle + n + n  # the second run is answered from the cache


def test_saved_outputs_and_the_random_model_need_no_server(pytester: pytest.Pytester) -> None:
    use_server(pytester, None)
    saved = [{"id": q[0], "output": f"The answer is {q[4] if q[4] != 1 else 2}"} for q in QUESTIONS]
    saved.append({"id": "renamed-07", "output": "3"})
    outputs = {"closed-A": saved[:5] + saved[6:], "stray-A": saved}  # ca-03 missing
    write_exam(
        pytester.path,
        models=["closed", "random", "ghost"],
        tracks=["A"],
        extra='answer_parser = "robust-v1"\n[systems.random]\nseed = 7\n',
        outputs=outputs,
    )
    result = pytester.runpytest("--doceval", "-rsE")
    # closed: 5 scored, 1 error (no saved output); random: 6; ghost: 6 skipped.
    result.assert_outcomes(passed=11, errors=1, skipped=6)
    result.stdout.fnmatch_lines(
        [
            "*no output for question 'ca-03'*closed-A.jsonl*",
            "*ghost-A needs model 'ghost': add ?tool.doceval.models.ghost? with base_url and model"
            " to pyproject.toml, or save its answers as outputs/ghost-A.jsonl beside suite.toml*",
        ]
    )
    sec = section(pytester)
    closed = rows_of(sec, "closed-A")
    for qid, *_, key, _stated in QUESTIONS[:-1]:
        assert closed[qid]["metrics"]["correct"] == float(key != 1)
        assert closed[qid]["details"]["source"] == "precomputed"
    assert closed["ca-03"]["outcome"] == "error"
    assert rows_of(sec, "ghost-A")["kr-01"]["outcome"] == "skipped"
    assert sec["notes"] == [
        "outputs/stray-A.jsonl is not a listed <model>-<track>: not run",
        "outputs/closed-A.jsonl answers 1 question(s) not in questions.jsonl: renamed-07",
    ]
    assert sec["sources"] == {"closed-A": "precomputed", "random-A": "random", "ghost-A": "served"}
    assert {r["fingerprint"]["seed"] for r in rows_of(sec, "random-A").values()} == {7}
    table = {(e["model"], e["track"]): e for e in sec["accuracy"]}
    assert table["closed", "A"]["n"] == 5
    assert table["closed", "A"]["accuracy"] == pytest.approx(3 / 5)  # keys 3, 2, 4 of 5 scored


def test_bad_questions_error_their_own_tests_and_the_rest_runs(pytester: pytest.Pytester) -> None:
    use_server(pytester, None)
    rows = question_rows(QUESTIONS)
    rows[1]["answer"] = 6  # outside 1..5
    rows[3].pop("nation")
    rows.append({**rows[0], "number": 0})  # kr-01 a second time
    write_exam(
        pytester.path,
        models=["random"],
        tracks=["A", "B2"],
        rows=rows,
        raw_lines=['{"id": "broken", "answer": 2', '{"answer": 1}'],
    )
    (pytester.path / "cases" / "exam" / "images" / "ca-02.png").unlink()
    result = pytester.runpytest("--doceval", "-rE", "--doceval-update")
    # Good: kr-03 (A), ca-03 (A); broken: kr-01 (dup, A+B2), kr-02 (A+B2), ca-01 (A+B2),
    # ca-02 (missing image, A+B2), line 8 and line 9 (A each: no oracle readable).
    result.assert_outcomes(passed=2, errors=10)
    sec = section(pytester)
    by_key = {f"{r['case']}[{r['system']}]": r for r in sec["results"]}
    causes = {
        "kr-01[random-B2]": "questions.jsonl:7: duplicate question id 'kr-01' (first on line 1)",
        "kr-02[random-A]": "questions.jsonl:2 (question 'kr-02'): answer 6 is outside 1..5",
        "ca-01[random-B2]": "questions.jsonl:4 (question 'ca-01'): missing 'nation'",
        "ca-02[random-A]": "(question 'ca-02'): image 'images/ca-02.png' not found",
        "line-8[random-A]": "questions.jsonl:8: not valid JSON",
        "line-9[random-A]": "questions.jsonl:9: 'id' must be a non-empty string",
    }
    for key, cause in causes.items():
        assert by_key[key]["outcome"] == "error"
        assert cause in by_key[key]["message"], key
    assert by_key["ca-01[random-A]"]["labels"]["task"] == "civics"
    assert by_key["kr-03[random-A]"]["outcome"] == "passed"
    assert [e["n"] for e in sec["accuracy"]] == [2]
    baseline = json.loads((pytester.path / "baselines" / "exam.json").read_text())
    assert sorted(baseline["entries"]) == ["ca-03[random-A]", "kr-03[random-A]"]


def test_a_failing_model_is_an_error_of_that_test_not_a_wrong_answer(
    pytester: pytest.Pytester, server: ModelServer
) -> None:
    use_server(pytester, server, tail="max_retries = 1\ntimeout = 5\n")
    rows = question_rows(QUESTIONS)
    rows[0]["oracle_text"] += "\n[fault:500]"
    write_exam(pytester.path, models=["echo"], tracks=["B2"], rows=rows)
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(passed=len(WITH_ORACLE) - 1, errors=1)
    result.stdout.fnmatch_lines(["*model 'echo'*500*"])
    sec = section(pytester)
    assert rows_of(sec, "echo-B2")["kr-01"]["outcome"] == "error"
    assert [e["n"] for e in sec["accuracy"]] == [len(WITH_ORACLE) - 1]


def test_an_unconfigured_ocr_model_skips_b1_and_c_and_says_how(
    pytester: pytest.Pytester, server: ModelServer
) -> None:
    use_server(pytester, server)
    write_exam(pytester.path, models=["echo"], tracks=["A", "B1"], extra='ocr = "reader"\n')
    result = pytester.runpytest("--doceval", "-rs")
    result.assert_outcomes(passed=len(QUESTIONS), skipped=len(QUESTIONS))
    result.stdout.fnmatch_lines(["*ocr = 'reader', which is not configured*"])


def test_a_broken_suite_toml_is_one_error_item(pytester: pytest.Pytester) -> None:
    use_server(pytester, None)
    write_exam(pytester.path, models=["random"], tracks=["A", "D"])
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*unknown track 'D'*"])


def test_robust_v1_follows_self_corrections_in_a_run(pytester: pytest.Pytester) -> None:
    """Issue 26's three outputs, saved and scored by a plain run: the later, corrected answer
    is the one scored; two answers it cannot order are a parse failure, never a guess."""
    use_server(pytester, None)
    outputs = {
        "kr-01": "정답은 1번이 아니라 3번입니다.",  # "not 1 but 3": key 3
        "kr-02": "I choose option 2, no wait, option 1.",  # key 1
        "kr-03": "Final answer: 1\nActually, the answer is 2.",  # key 2
        "ca-01": "Final answer: 4",
        "ca-02": "It is 2 or 3.",  # two candidates, no order: a parse failure
        "ca-03": "Final answer: 5",
    }
    saved = [{"id": qid, "output": text} for qid, text in outputs.items()]
    write_exam(
        pytester.path,
        models=["closed"],
        tracks=["A"],
        extra='answer_parser = "robust-v1"\n',
        outputs={"closed-A": saved},
    )
    pytester.runpytest("--doceval").assert_outcomes(passed=6)
    rows = rows_of(section(pytester), "closed-A")
    parsed = {qid: row["views"]["answer"]["parsed"] for qid, row in rows.items()}
    assert parsed == {"kr-01": 3, "kr-02": 1, "kr-03": 2, "ca-01": 4, "ca-02": None, "ca-03": 5}
    assert rows["ca-02"]["metrics"] == {"correct": 0.0, "parse_failure": 1.0}
    assert all(rows[q]["metrics"]["correct"] == 1.0 for q in parsed if q != "ca-02")
