"""What a system costs: CPU and wall seconds of its stages, its model requests and tokens, and
their price, on every row of a test that has stages; the cold cost is kept with the output, so
a warm run reports it again; a gate on a cost metric fails a test like any other gate."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_server import ModelServer, _parts, reply_text

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.metrics.cost import COST_METRICS, StageCost, price, tokens_of, total
from pytest_doceval.models.config import ModelConfig
from tests.conftest import TRUTH, WORKERS, read_report, write_suite

PAGE = "Tides\nTidal storage moves water between two basins.\n- pumps\n- turbines"
PRICE_IN, PRICE_OUT = 2.5, 10.0  # US dollars per million tokens

costs = st.builds(
    StageCost,
    st.floats(0, 100),
    st.floats(0, 100),
    st.integers(0, 50),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.one_of(st.none(), st.floats(0, 10)),
)


@settings(deadline=None, max_examples=60)
@given(st.lists(costs, max_size=6))
def test_a_total_is_the_fieldwise_sum(parts: list[StageCost]) -> None:
    summed = total(parts)
    assert summed.cpu_seconds == pytest.approx(sum(p.cpu_seconds for p in parts))
    assert summed.wall_seconds == pytest.approx(sum(p.wall_seconds for p in parts))
    assert summed.requests == sum(p.requests for p in parts)
    assert summed.tokens_in == sum(p.tokens_in for p in parts)
    assert summed.tokens_out == sum(p.tokens_out for p in parts)
    priced = [p.usd for p in parts if p.usd is not None]
    assert summed.usd == (pytest.approx(sum(priced)) if priced else None)
    assert StageCost.from_dict(json.loads(json.dumps(summed.to_dict()))) == summed


def test_metrics_say_only_what_was_measured() -> None:
    cpu_only = StageCost(1.25, 2.5).metrics()
    assert cpu_only == {"cpu_seconds": 1.25, "wall_seconds": 2.5}
    asked = StageCost(0.0, 0.4, 2, 1_000, 250, price(1_000, 250, PRICE_IN, PRICE_OUT)).metrics()
    # $ per 1,000 such cases: (1000 x 2.5 + 250 x 10) / 1e6 dollars, times 1,000.
    assert asked["usd_per_1000"] == pytest.approx(5.0)
    assert (asked["model_requests"], asked["tokens_in"], asked["tokens_out"]) == (2, 1000, 250)
    assert set(asked) <= set(COST_METRICS)
    assert all(spec.direction == "lower" and not spec.headline for spec in COST_METRICS.values())


def test_usage_and_prices_read_defensively() -> None:
    assert tokens_of({"prompt_tokens": 7, "completion_tokens": 3}) == (7, 3)
    assert tokens_of({"input_tokens": 5, "output_tokens": 2}) == (5, 2)  # the Responses API
    assert tokens_of({"prompt_tokens": "7", "completion_tokens": True}) == (0, 0)
    assert tokens_of({}) == (0, 0)
    assert price(10, 10, None, None) is None
    assert price(10**6, 0, 3.0, None) == 3.0
    assert StageCost.from_dict({"cpu_seconds": "x"}) is None
    assert StageCost.from_dict(None) is None


def test_a_negative_price_is_refused() -> None:
    table = {"base_url": "http://127.0.0.1:1/v1", "model": "m", "price_in": -1}
    with pytest.raises(SuiteConfigError, match="price_in must be a number >= 0"):
        ModelConfig.from_table("m", table, source="pyproject.toml")


def _project(pytester: pytest.Pytester, server: ModelServer, gates: str = "") -> Path:
    pytester.makepyprojecttoml(
        '[tool.doceval]\nsuites = ["cases"]\nvlm = "echo"\n\n[tool.doceval.models.echo]\n'
        f'base_url = "{server.base_url}"\nmodel = "echo-1"\n'
        f"price_in = {PRICE_IN}\nprice_out = {PRICE_OUT}\n"
    )
    cases = {
        f"c{i}": {"truth": TRUTH, "pdf": PAGE.replace("Tides", f"Tides {i}"), "saved": TRUTH}
        for i in range(2)
    }
    systems = ["pymupdf", "pymupdf+vlm", "saved"]
    return write_suite(pytester.path, "tides", cases, systems=systems, gates=gates)


def _server_usage(server: ModelServer) -> dict[str, tuple[int, int]]:
    """Per case, the tokens the test server reported, recomputed from what it received by its
    own rule (prompt: characters of the text parts // 4 + 1; completion: of its reply)."""
    usage = {}
    for recorded in server.requests:
        messages = json.loads(recorded.body)["messages"]
        text = " ".join(str(p.get("text", "")) for m in messages for p in _parts(m["content"]))
        case = next(f"c{i}" for i in range(2) if f"Tides {i}" in text)
        usage[case] = (len(text) // 4 + 1, len(reply_text(messages)) // 4 + 1)
    return usage


def _rows(pytester: pytest.Pytester) -> dict[tuple[str, str], dict[str, Any]]:
    section = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]
    return {(r["case"], r["system"]): r for r in section["results"]}


@pytest.fixture
def server() -> ModelServer:
    with ModelServer() as running:
        yield running


@pytest.mark.parametrize("workers", WORKERS)
def test_rows_carry_their_cost_and_a_warm_run_reports_the_cold_one(
    pytester: pytest.Pytester, server: ModelServer, workers: list[str]
) -> None:
    _project(pytester, server)
    result = pytester.runpytest("--doceval", *workers)
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(
        [
            "*cost per case (mean, as measured when each output was made):",
            "*pymupdf: cpu_seconds * s, wall_seconds * s (p50 * s, p95 * s, p99 * s), "
            "model_requests -, tokens_in -,*",
            "*pymupdf+vlm: cpu_seconds * s, *model_requests 1.0, tokens_in *, usd_per_1000 $*",
        ]
    )
    assert "Cost per case: mean" in (pytester.path / "doceval-report.html").read_text()
    cold = _rows(pytester)
    usage = _server_usage(server)
    for case in ("c0", "c1"):
        parsed, refined = cold[case, "pymupdf"]["metrics"], cold[case, "pymupdf+vlm"]["metrics"]
        assert parsed["cpu_seconds"] > 0 and parsed["wall_seconds"] > 0
        assert parsed["peak_rss_mib"] > 10  # the pool process: Python and PyMuPDF resident
        assert "model_requests" not in parsed  # no model asked, nothing priced
        tokens_in, tokens_out = usage[case]
        assert (refined["model_requests"], refined["tokens_in"], refined["tokens_out"]) == (
            1,
            tokens_in,
            tokens_out,
        )
        usd = (tokens_in * PRICE_IN + tokens_out * PRICE_OUT) / 1e6
        assert refined["usd_per_1000"] == pytest.approx(usd * 1000, abs=1e-6)
        # The two-stage row's cost includes its stage 1, the same parse.
        assert refined["cpu_seconds"] >= parsed["cpu_seconds"] - 1e-6
        assert not any(m in COST_METRICS for m in cold[case, "saved"]["metrics"])
    section = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]
    assert section["metrics"]["cpu_seconds"]["direction"] == "lower"
    mean = section["aggregates"]["pymupdf"]["cpu_seconds"]["mean"]
    both = [cold[c, "pymupdf"]["metrics"]["cpu_seconds"] for c in ("c0", "c1")]
    assert mean == pytest.approx(sum(both) / 2, abs=1e-6)

    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=6)
    assert server.total == 2  # warm: nothing was parsed or asked again ...
    warm = _rows(pytester)
    for key, row in cold.items():  # ... and every row reports what its output cost cold
        for metric in (*COST_METRICS, "cpu_seconds"):
            assert warm[key]["metrics"].get(metric) == row["metrics"].get(metric), (key, metric)


def test_a_gate_on_a_cost_metric_fails_the_costly_tests(
    pytester: pytest.Pytester, server: ModelServer
) -> None:
    _project(pytester, server, gates='tokens_in = "<= 1"\n')
    result = pytester.runpytest("--doceval", "-rf")
    # Only the rows that asked the model have tokens; the others have nothing to gate.
    result.assert_outcomes(passed=4, failed=2)
    result.stdout.fnmatch_lines(["*tokens_in*"])
    assert math.isfinite(_rows(pytester)["c0", "pymupdf+vlm"]["metrics"]["tokens_in"])


PEAK_PROBE = """
import json, subprocess, sys
from pytest_doceval.engine import stages

def hold(mib):
    block = bytearray(mib * 1024 * 1024)
    block[::4096] = b"x" * len(block[::4096])  # touch every page: resident, not just reserved
    return len(block)

CHILD = (
    "import time; b = bytearray({mib} << 20); b[::4096] = b'x' * len(b[::4096])\\n"
    "t = time.process_time()\\nwhile time.process_time() - t < {seconds}: pass"
)

def child(mib, seconds):
    run = subprocess.Popen([sys.executable, "-c", CHILD.format(mib=mib, seconds=seconds)])
    _, _, usage = __import__("os").wait4(run.pid, 0)
    run.returncode = 0
    stages.child_finished(usage.ru_maxrss)

stages.count_whole_process()
out = {}
stages_run = (("big", hold, (300,)), ("small", hold, (5,)), ("child", child, (250, 0.3)))
for name, call, args in stages_run:
    _, cost = stages.timed_call(call, args)
    out[name] = cost.to_dict()
print(json.dumps(out))
"""


def test_a_pool_process_measures_each_stages_own_peak_memory_and_its_programs() -> None:
    """In a process that runs one stage at a time (as a pool's worker), each stage's peak is
    its own: 300 MiB held, then 5 MiB after the reset; a program it waits for counts with its
    peak memory (250 MiB) and its CPU time (0.3 s spun). Hand-known sizes, measured by the
    kernel's VmHWM and wait4."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", PEAK_PROBE], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    costs = {name: StageCost.from_dict(cost) for name, cost in json.loads(run.stdout).items()}
    big, small, child = costs["big"], costs["small"], costs["child"]
    assert big is not None and small is not None and child is not None
    assert big.peak_rss_mib is not None and small.peak_rss_mib is not None
    assert big.peak_rss_mib >= 300
    assert small.peak_rss_mib < big.peak_rss_mib - 250  # reset between stages
    assert child.peak_rss_mib is not None and child.peak_rss_mib >= 250
    assert child.cpu_seconds >= 0.25  # the program's CPU time is the stage's


def test_a_thread_measures_no_peak_memory() -> None:
    from pytest_doceval.engine.stages import timed_call

    _, cost = timed_call(sum, ([1, 2],))  # this process runs other things too
    assert cost.peak_rss_mib is None
    assert "peak_rss_mib" not in cost.metrics()


def test_a_sums_peak_is_its_largest_stages() -> None:
    parts = [
        StageCost(1, 1, peak_rss_mib=120.0),
        StageCost(1, 1),
        StageCost(1, 1, peak_rss_mib=80.0),
    ]
    assert total(parts).peak_rss_mib == 120.0
    assert total([StageCost(1, 1)]).peak_rss_mib is None
    assert StageCost.from_dict({"cpu_seconds": 1, "wall_seconds": 1}) == StageCost(1, 1)


def test_a_cold_update_leaves_the_baseline_as_it_was(pytester: pytest.Pytester) -> None:
    """The timings of a fresh CI runner are not a change: `--doceval-update` on a cold cache
    rewrites no entry, and the baseline holds no timing at all."""
    cases = {f"c{i}": {"truth": TRUTH, "pdf": PAGE} for i in range(2)}
    write_suite(pytester.path, "tides", cases, systems=["pymupdf"])
    pytester.runpytest("--doceval", "--doceval-update", "--doceval-cache=off").assert_outcomes(
        passed=2
    )
    baseline = pytester.path / "baselines" / "tides.json"
    before = baseline.read_text()
    entries = json.loads(before)["entries"]
    assert not any(m in COST_METRICS for e in entries.values() for m in e["metrics"]), entries
    result = pytester.runpytest("--doceval", "--doceval-update", "--doceval-cache=off")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*tides: baseline baselines/tides.json unchanged*"])
    assert baseline.read_text() == before
    assert _rows(pytester)["c0", "pymupdf"]["metrics"]["cpu_seconds"] > 0  # still reported
