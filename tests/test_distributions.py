"""Distributions beside means (issue 36): every aggregate's percentiles, checked against the
standard library's ``statistics.quantiles`` (method "inclusive", the same type-7 rule); the
share of cases past a threshold (a kind's, or a suite's absolute gate) counted by hand; the
percentile suite gate (``wall_seconds = "p95:+20%"``) judged by hand, alone and end to end;
and the HTML's box plots."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.config import StatsConfig
from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.gates import parse_suite_gates
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.report.analysis import analyse_suite
from pytest_doceval.report.html import render_html
from pytest_doceval.stats.distribution import PERCENTILES, beyond, percentile, percentiles
from tests.conftest import TRUTH, read_report, write_suite

SPECS = {
    "cer": MetricSpec("lower", threshold=0.2),
    "teds": MetricSpec("higher", threshold=0.5),
    "wall_seconds": MetricSpec("lower", headline=False),
}


def meta(
    case_gates: dict[str, list[str]] | None = None, suite_gates: dict[str, str] | None = None
) -> dict:
    return {
        "kind": "documents",
        "path": "cases/x",
        "systems": ["a", "b"],
        "metrics": {k: v.to_dict() for k, v in SPECS.items()},
        "gate_rules": {"case": case_gates or {}, "suite": suite_gates or {}},
    }


def row(case: str, system: str, metrics: dict[str, float], baseline: dict | None = None) -> dict:
    return {
        "case": case,
        "system": system,
        "outcome": "passed",
        "metrics": metrics,
        "counts": {},
        "baseline": baseline,
    }


@settings(deadline=None, max_examples=200)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=40))
def test_percentiles_are_the_inclusive_quantiles(values: list[float]) -> None:
    cuts = statistics.quantiles(values, n=100, method="inclusive")  # p1 .. p99
    found = percentiles(values)
    assert set(found) == set(PERCENTILES)
    assert found["p0"] == min(values) and found["p100"] == max(values)
    for name, q in PERCENTILES.items():
        if 0 < q < 100:
            assert found[name] == pytest.approx(cuts[int(q) - 1], rel=1e-9, abs=1e-9)


def test_percentiles_of_one_and_of_none() -> None:
    assert percentiles([0.3]) == dict.fromkeys(PERCENTILES, 0.3)
    assert percentiles([]) == {}
    assert percentile([], 95) != percentile([], 95)  # NaN
    with pytest.raises(ValueError, match="between 0 and 100"):
        percentile([1.0], 101)


def test_beyond_counts_strictly_past_the_threshold() -> None:
    found = beyond([0.1, 0.2, 0.3, 0.9], ">", 0.2)  # the case at 0.2 is not past it
    assert (found.cases, found.n, found.share) == (2, 4, 0.5)
    with pytest.raises(ValueError, match="comparison"):
        beyond([1.0], "!=", 0.2)


def test_aggregates_carry_percentiles_and_the_tail() -> None:
    cer = {"c1": 0.05, "c2": 0.10, "c3": 0.30, "c4": 0.90}
    teds = {"c1": 1.0, "c2": 0.4, "c3": 0.5, "c4": 0.2}
    rows = [row(c, "a", {"cer": cer[c], "teds": teds[c]}) for c in cer]
    section = analyse_suite(meta(), rows, StatsConfig(resamples=200))
    agg = section["aggregates"]["a"]
    assert agg["cer"]["quantiles"]["p50"] == pytest.approx(statistics.median(cer.values()))
    assert agg["cer"]["beyond"] == {
        "op": ">",
        "threshold": 0.2,
        "source": "kind",
        "cases": 2,
        "n": 4,
        "share": 0.5,
    }
    assert agg["teds"]["beyond"]["op"] == "<" and agg["teds"]["beyond"]["cases"] == 2
    # the suite's absolute per-case gate is the threshold there: cases it would fail
    gated = analyse_suite(meta({"cer": ["+0.5pp", "<= 0.1"]}), rows, StatsConfig(resamples=200))
    assert gated["aggregates"]["a"]["cer"]["beyond"] == {
        "op": ">",
        "threshold": 0.1,
        "source": "gate",
        "cases": 2,
        "n": 4,
        "share": 0.5,
    }
    assert "wall_seconds" not in agg  # not measured: no distribution


def test_percentile_gates_parse() -> None:
    (gate,) = parse_suite_gates({"wall_seconds": "p95:+20%"})
    assert (gate.percentile, gate.margin, gate.tolerance.relative) == (95.0, 0.2, True)
    (absolute,) = parse_suite_gates({"cer": "p99:+1pp"})
    assert (absolute.percentile, absolute.margin, absolute.tolerance.relative) == (
        99.0,
        0.01,
        False,
    )
    with pytest.raises(SuiteConfigError, match="p<q>"):
        parse_suite_gates({"wall_seconds": "p95:<= 3"})


def _latency_rows(now: list[float], before: list[float]) -> list[dict]:
    return [
        row(f"c{i}", "a", {"cer": 0.1, "teds": 1.0, "wall_seconds": n}, {"wall_seconds": b})
        for i, (n, b) in enumerate(zip(now, before, strict=True))
    ]


def test_the_percentile_gate_by_hand() -> None:
    # p95 of 20 values is at rank 1 + 19 x 0.95 = 19.05: x19 + 0.05 (x20 - x19) = 1.05
    before = [1.0] * 19 + [2.0]
    assert percentile(before, 95) == pytest.approx(1.05)
    gate = meta(suite_gates={"wall_seconds": "p95:+20%"})
    # the tail doubles (the last two cases at 2.5 s): p95 = 2.5 > 1.05 x 1.2 = 1.26
    slower = analyse_suite(gate, _latency_rows([1.0] * 18 + [2.5, 2.5], before), StatsConfig())
    (verdict,) = slower["gates"]
    assert verdict["passed"] is False
    assert (verdict["value"], verdict["baseline_value"], verdict["limit"]) == (2.5, 1.05, 1.26)
    assert verdict["message"] == (
        "[a] wall_seconds p95 2.5 > baseline p95 1.05 + 20% (limit 1.26, n=20)"
    )
    # the same mean shift spread over every case moves p95 by 10 %: within 20 %
    steady = analyse_suite(gate, _latency_rows([x * 1.1 for x in before], before), StatsConfig())
    assert steady["gates"][0]["passed"] is True


def test_box_plots_in_the_html(tmp_path: Path) -> None:
    cer = {"c1": 0.05, "c2": 0.10, "c3": 0.30, "c4": 0.90}
    rows = [row(c, s, {"cer": v, "teds": 0.7}) for c, v in cer.items() for s in ("a", "<b>")]
    section = analyse_suite(meta(), rows, StatsConfig(resamples=200))
    report = {
        "schema": "doceval-report/1",
        "created": "2026-01-01T00:00:00Z",
        "environment": {"python": "3", "platform": "x", "executable": "python", "packages": {}},
        "config": {"resamples": 200, "confidence": 0.95, "seed": 0},
        "shard": None,
        "interrupted": False,
        "suites": {"x": {**section, "systems": ["a", "<b>"]}},
    }
    page = render_html(json.loads(json.dumps(report)))
    assert "Distributions of per-case values" in page
    assert page.count('class="box"') == 4  # two metrics x two systems
    assert "2/4 &gt; 0.2" in page  # the tail beside the row, escaped
    assert "<b>" not in page.split("Distributions of per-case values")[1].split("</details>")[0]


def test_a_p95_latency_gate_end_to_end(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    cases = {f"c{i}": {"truth": TRUTH, "pdf": f"Tides {i}\nTidal storage."} for i in range(4)}
    write_suite(
        pytester.path,
        "tides",
        cases,
        systems=["pymupdf"],
        gates='[gates.suite]\nwall_seconds = "p95:+20%"\n',
    )
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=4)
    baseline_file = pytester.path / "baselines" / "tides.json"
    baseline = json.loads(baseline_file.read_text())
    for entry in baseline["entries"].values():  # the baseline was ten times faster
        entry["metrics"]["wall_seconds"] = entry["metrics"]["wall_seconds"] / 10
    baseline_file.write_text(json.dumps(baseline))
    result = pytester.runpytest("--doceval")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*wall_seconds p95 * > baseline p95 * + 20% (limit *, n=4)*"])
    gates = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]["gates"]
    assert gates[0]["passed"] is False and gates[0]["percentile"] == 95.0


def test_a_tail_of_a_big_run_is_grouped_and_fits_beside_its_box() -> None:
    """At 100,000 cases the tail read "16703/100000 > 0.08" and ran past the plot's edge (seen
    in Chromium); it is grouped by thousands and the plot is as wide as it needs."""
    from pytest_doceval.html.distributions import BOX, beyond_text, box_plot

    agg = {
        "n": 100_000,
        "mean": 0.06,
        "quantiles": {q: v for q, v in zip(BOX, (0, 0.04, 0.06, 0.07, 0.3), strict=True)},
        "beyond": {"cases": 16_703, "n": 100_000, "op": ">", "threshold": 0.08},
    }
    assert beyond_text(agg) == "16,703/100,000 > 0.08"
    small = box_plot(
        "cer", "lower", [("noisy", {**agg, "beyond": {**agg["beyond"], "cases": 2, "n": 4}})]
    )
    wide = box_plot("cer", "lower", [("noisy", agg)])
    width = [int(svg.split('width="')[1].split('"')[0]) for svg in (small, wide)]
    assert width[1] - width[0] >= 7 * (len("16,703/100,000") - len("2/4"))
