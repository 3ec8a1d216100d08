"""The stage engine end to end, run as a user runs it: a cold two-stage documents run keeps
the server busy while pages are still being parsed, sends each request once (plain and under
xdist), shows progress lines in a plain run, and every executor gives the same numbers."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from model_server import ModelServer

from pytest_doceval.metrics.cost import COST_METRICS
from tests.conftest import TRUTH, WORKERS, make_pdf, read_report, write_suite
from tests.dask_support import dask_cluster

PAGE = "Tides\nTidal storage moves water between two basins.\n- pumps\n- turbines"


def project(pytester: pytest.Pytester, server: ModelServer | None, cases: int) -> Path:
    models = ""
    if server is not None:
        models = (
            'vlm = "echo"\n\n[tool.doceval.models.echo]\n'
            f'base_url = "{server.base_url}"\nmodel = "echo-1"\nmax_concurrency = 8\n'
        )
    pytester.makepyprojecttoml(f'[tool.doceval]\nsuites = ["cases"]\n{models}')
    pages = {
        f"c{i:02d}": {"truth": TRUTH, "pdf": PAGE.replace("Tides", f"Tides {i}")}
        for i in range(cases)
    }
    systems = ["pymupdf+vlm"] if server is not None else ["pymupdf"]
    return write_suite(pytester.path, "tides", pages, systems=systems, gates="")


@pytest.fixture
def slow_server() -> Iterator[ModelServer]:
    with ModelServer(latency=0.4) as running:
        yield running


@pytest.mark.parametrize("workers", WORKERS)
def test_a_cold_two_stage_run_streams_requests_once_each_with_progress(
    pytester: pytest.Pytester, slow_server: ModelServer, workers: list[str]
) -> None:
    cases = 12
    project(pytester, slow_server, cases)
    # Answers wait until two requests are out at once: a run that sent one at a time would
    # wait GATHER_WAIT for each, and its peak would still be one.
    slow_server.hold_until(2)
    result = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider", *workers)
    result.assert_outcomes(passed=cases)
    stats = slow_server.stats()
    assert (stats["total"], stats["distinct"], stats["max_per_body"]) == (cases, cases, 1)
    # Requests went out while other pages were still parsing: more than one at a time.
    assert stats["peak_active"] > 1
    out = result.stdout.str()
    # Every stage is planned at the start; under xdist too, where the controller sums the
    # workers' (work stealing gives each worker its whole share at once: xdist's load
    # scheduling handed out two tests at a time, and each worker planned only those).
    assert re.search(r"^doceval: 0/36 stages done at start", out, re.M), out
    # 12 parses and 12 scores; the scores are stages too
    assert "24 CPU stage(s) on processes" in out and "12 model stage(s)" in out
    # One line of totals (under xdist, the workers' summed by the controller: a test one
    # worker took from another's queue has its stages planned by both, the second finding
    # them in the store or answered by the other worker).
    totals = re.search(
        r"^doceval: (\d+)/(\d+) stages \((?:\d+ counted at the start, \d+ planned later; )?"
        r"\d+ from the cache, 0 failed\); model "
        r"requests: 12 sent",
        out,
        re.M,
    )
    assert totals is not None, out
    assert totals.group(1) == totals.group(2) and (int(totals.group(1)) == 36 or workers)
    assert re.search(r"\[100%\]$", out, re.M), out  # pytest's own progress line is intact
    # A warm run: nothing sent, nothing parsed.
    again = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider", *workers)
    again.assert_outcomes(passed=cases)
    assert slow_server.total == cases
    warm = (
        r"^doceval: (\d+)/\1 stages \((?:\d+ counted at the start, \d+ planned later; )?"
        r"\1 from the cache, 0 failed\); model requests: 0 sent"
    )
    assert re.search(warm, again.stdout.str(), re.M), again.stdout.str()


def metrics(path: Path) -> dict[str, Any]:
    """Each row's outcome and quality metrics (what its output cost depends on the executor)."""
    report = read_report(path)
    rows = report["suites"]["tides"]["results"]
    return {
        (r["case"], r["system"]): (
            r["outcome"],
            {m: v for m, v in r["metrics"].items() if m not in COST_METRICS},
        )
        for r in rows
    }


@pytest.mark.slow
def test_threads_and_a_dask_cluster_give_the_numbers_of_processes(
    pytester: pytest.Pytester,
) -> None:
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("needs the dask extra")
    project(pytester, None, 4)
    runs: dict[str, dict[str, Any]] = {}
    with dask_cluster() as address:
        for executor in ("processes", "threads", f"dask:{address}"):
            name = executor.split(":")[0]
            result = pytester.runpytest_subprocess(
                "--doceval",
                "-p",
                "no:cacheprovider",
                "--doceval-cache=off",
                f"--doceval-executor={executor}",
                f"--doceval-json={name}.json",
                timeout=300,
            )
            result.assert_outcomes(passed=4)
            runs[name] = metrics(pytester.path / f"{name}.json")
            assert f"on {executor} x" in result.stdout.str()
    assert runs["processes"] == runs["threads"] == runs["dask"]
    assert all(outcome == "passed" for outcome, _ in runs["dask"].values())


def test_an_unknown_executor_is_a_usage_error(pytester: pytest.Pytester) -> None:
    project(pytester, None, 1)
    result = pytester.runpytest_subprocess("--doceval", "--doceval-executor=gpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*executor 'gpu': expected processes, threads or dask:*"])
    pyproject = pytester.path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\nexecutor = "dask:nowhere"\n')
    assert pytester.runpytest_subprocess("--doceval").ret == pytest.ExitCode.USAGE_ERROR
    assert pytester.runpytest_subprocess("--doceval-executor=threads").ret == (
        pytest.ExitCode.USAGE_ERROR  # means nothing without --doceval
    )


def test_a_two_stage_request_failing_errors_its_test_only(
    pytester: pytest.Pytester, slow_server: ModelServer
) -> None:
    project(pytester, slow_server, 3)
    bad = pytester.path / "cases" / "tides" / "c01"
    make_pdf(bad / "document.pdf", [PAGE + "\n[fault:500]"])
    pyproject = pytester.path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\nmax_retries = 1\ntimeout = 5\n")
    result = pytester.runpytest_subprocess("--doceval", "-rE", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["ERROR *c01[[]pymupdf+vlm] - model 'echo'*"])
    result.stdout.fnmatch_lines(
        ["*HTTP 500 after 2 attempts*(stage pymupdf+vlm (model *echo*) on c01/document.pdf)"]
    )
    report = json.loads((pytester.path / "doceval-report.json").read_text())
    outcomes = {r["case"]: r["outcome"] for r in report["suites"]["tides"]["results"]}
    assert outcomes == {"c00": "passed", "c01": "error", "c02": "passed"}
