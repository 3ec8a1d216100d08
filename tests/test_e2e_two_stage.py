"""The two-stage parsers end to end against the deterministic test server, as a user runs them."""

from __future__ import annotations

from pathlib import Path

import pytest
from model_server import ModelServer

from tests.conftest import TRUTH, WORKERS, read_report, write_suite

PAGE = "Tides\nTidal storage moves water between two basins.\n- pumps\n- turbines"


def project(pytester: pytest.Pytester, server: ModelServer | None, page: str = PAGE) -> Path:
    models = ""
    if server is not None:
        models = (
            'vlm = "echo"\n\n[tool.doceval.models.echo]\n'
            f'base_url = "{server.base_url}"\nmodel = "echo-1"\nmax_concurrency = 4\n'
        )
    pytester.makepyprojecttoml(f'[tool.doceval]\nsuites = ["cases"]\n{models}')
    cases = {
        f"c{i}": {"truth": TRUTH, "pdf": page.replace("Tides", f"Tides {i}")} for i in range(3)
    }
    return write_suite(pytester.path, "tides", cases, systems=["pymupdf", "pymupdf+vlm"], gates="")


@pytest.fixture
def server() -> ModelServer:
    with ModelServer() as running:
        yield running


@pytest.mark.parametrize("workers", WORKERS)
def test_two_stage_runs_caches_and_shows_what_the_model_changed(
    pytester: pytest.Pytester, server: ModelServer, workers: list[str]
) -> None:
    project(pytester, server)
    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=6)
    assert server.total == 3  # one request per document, each sent once
    section = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]
    row = next(r for r in section["results"] if r["system"] == "pymupdf+vlm")
    assert row["views"]["stage_diff"]["stage1"] == "pymupdf"
    assert row["fingerprint"]["stage1"]["system"] == "pymupdf"
    assert row["fingerprint"]["model"] == {"model": "echo-1", "base_url": server.base_url}
    stage1 = next(r for r in section["results"] if r["system"] == "pymupdf" and r["case"] == "c0")
    assert row["metrics"]["cer"] != stage1["metrics"]["cer"]  # the echo added the prompt
    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=6)
    assert server.total == 3  # the second run is answered from the cache


def test_without_a_model_the_two_stage_tests_skip_and_say_how(pytester: pytest.Pytester) -> None:
    project(pytester, None)
    result = pytester.runpytest("--doceval", "-rs")
    result.assert_outcomes(passed=3, skipped=3)
    result.stdout.fnmatch_lines(
        ["*pymupdf+vlm needs a model: add vlm = *[tool.doceval.models.NAME]*"]
    )


@pytest.mark.parametrize(
    ("marker", "cause"),
    [
        ("[fault:500]", "*model 'echo'*500*"),
        ("[fault:empty]", "*model 'echo'*"),
        ("[fault:malformed]", "*model 'echo'*"),
    ],
)
def test_a_failing_model_is_an_error_of_that_test_not_a_score(
    pytester: pytest.Pytester, server: ModelServer, marker: str, cause: str
) -> None:
    project(pytester, server, page=f"{PAGE}\n{marker}")
    pyproject = pytester.path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\nmax_retries = 1\ntimeout = 5\n")
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(passed=3, errors=3)
    result.stdout.fnmatch_lines([cause])
    report = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]
    assert "pymupdf+vlm" not in report["aggregates"]  # never scored as an empty answer
    assert not list((pytester.path / ".doceval-cache").rglob("*.json")) or all(
        "fault" not in p.read_text()
        for p in (pytester.path / ".doceval-cache" / "models").rglob("*.json")
    )
