"""The report's numbers from rows, checked against direct computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.analyses import AllPairs
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.report.analysis import analyse_suite, baseline_deltas

SPECS = {
    "cer": MetricSpec("lower", counts="cer"),
    "structure_f1": MetricSpec("higher"),
    "correct": MetricSpec("higher", binary=True),
}
META = {"kind": "documents", "metrics": {k: v.to_dict() for k, v in SPECS.items()}}


def _rows() -> list[dict]:
    rng = np.random.default_rng(7)
    rows = []
    for i in range(12):
        for system, shift in (("a", 0.0), ("b", 0.03)):
            cer = float(np.clip(rng.normal(0.1 + shift, 0.02), 0, 1))
            length = int(rng.integers(500, 2000))
            errors = round(cer * length)
            rows.append(
                {
                    "case": f"c{i:02d}",
                    "system": system,
                    "outcome": "passed",
                    "metrics": {
                        "cer": errors / length,
                        "structure_f1": float(i % 2),
                        "correct": float((i + (system == "b")) % 3 == 0),
                    },
                    "counts": {
                        "cer": {
                            "hits": length - errors,
                            "substitutions": errors,
                            "deletions": 0,
                            "insertions": 0,
                            "reference_length": length,
                        }
                    },
                    "baseline": {"cer": round(errors / length - 0.01, 6)},
                }
            )
    rows.append(
        {
            "case": "broken",
            "system": "a",
            "outcome": "error",
            "metrics": {},
            "counts": {},
            "baseline": None,
        }
    )
    return rows


def test_aggregates_match_direct_computation() -> None:
    rows = _rows()
    suite = analyse_suite(META, rows, StatsConfig(resamples=500), (AllPairs(),))
    agg = suite["aggregates"]["a"]["cer"]
    values = [r["metrics"]["cer"] for r in rows if r["system"] == "a" and r["metrics"]]
    assert agg["n"] == 12  # the errored row is not a measurement
    assert agg["mean"] == pytest.approx(np.mean(values))
    counts = [r["counts"]["cer"] for r in rows if r["system"] == "a" and r["counts"]]
    corpus = sum(c["substitutions"] for c in counts) / sum(c["reference_length"] for c in counts)
    assert agg["corpus"] == pytest.approx(corpus)
    assert suite["outcomes"] == {"error": 1, "passed": 24}


def test_comparisons_match_scipy_and_binary_metrics_by_their_spec() -> None:
    rows = _rows()
    suite = analyse_suite(META, rows, StatsConfig(resamples=500), (AllPairs(),))
    assert suite["analysis_keys"] == ["comparisons"]
    cer = next(c for c in suite["comparisons"] if c["metric"] == "cer")
    a = [r["metrics"]["cer"] for r in rows if r["system"] == "a" and r["metrics"]]
    b = [r["metrics"]["cer"] for r in rows if r["system"] == "b" and r["metrics"]]
    assert (cer["a"], cer["b"], cer["n"]) == ("a", "b", 12)
    assert cer["mean_diff"] == pytest.approx(np.mean(np.subtract(a, b)))
    assert cer["p_ttest"] == pytest.approx(sps.ttest_rel(a, b).pvalue)
    assert cer["p_wilcoxon"] == pytest.approx(sps.wilcoxon(a, b).pvalue)
    assert "p_mcnemar" not in cer
    f1 = next(c for c in suite["comparisons"] if c["metric"] == "structure_f1")
    assert "p_mcnemar" not in f1  # 0/1 values, but not declared binary: no guessing
    correct = next(c for c in suite["comparisons"] if c["metric"] == "correct")
    a = [r["metrics"]["correct"] for r in rows if r["system"] == "a" and r["metrics"]]
    b = [r["metrics"]["correct"] for r in rows if r["system"] == "b" and r["metrics"]]
    discordant = sum(x != y for x, y in zip(a, b, strict=True))
    only_a = sum(x > y for x, y in zip(a, b, strict=True))
    expected = sps.binomtest(only_a, discordant, 0.5).pvalue
    assert correct["p_mcnemar"] == pytest.approx(expected)


def test_baseline_deltas_current_minus_baseline() -> None:
    rows = _rows()
    [delta] = [
        d
        for d in baseline_deltas(rows, SPECS, StatsConfig(resamples=500))
        if d["system"] == "a" and d["metric"] == "cer"
    ]
    assert delta["mean_diff"] == pytest.approx(0.01, abs=1e-6)
    assert delta["verdict"] == "worse" and delta["significant"]


def test_rounding_noise_is_not_a_change() -> None:
    rows = [
        {
            "case": f"c{i}",
            "system": "s",
            "outcome": "passed",
            "metrics": {"cer": 0.1234564 + i / 100},
            "baseline": {"cer": round(0.1234564 + i / 100, 6)},
        }
        for i in range(10)
    ]
    [delta] = baseline_deltas(rows, SPECS, StatsConfig(resamples=200))
    assert delta["mean_diff"] == 0.0 and not delta["significant"]


def test_doceval_compare_gives_the_numbers_of_a_run() -> None:
    """`doceval compare baseline.json current.json` and a run's baseline_deltas agree."""
    from pytest_doceval.report.compare import compare_reports

    rows = [r for r in _rows() if r["outcome"] == "passed"]
    for r in rows:  # six decimals, as baselines hold them, so both paths see equal inputs
        r["metrics"] = {"cer": round(r["metrics"]["cer"], 6)}
    old = [dict(r, metrics=dict(r["baseline"])) for r in rows]
    config = StatsConfig(resamples=500)
    report = {"suites": {"s": {**META, "scoring_id": "fair-v1", "results": rows}}}
    before = {"suites": {"s": {**META, "scoring_id": "fair-v1", "results": old}}}
    compared = compare_reports(before, report, metrics=["cer"], resamples=500, seed=0)
    for delta in baseline_deltas(rows, SPECS, config):
        [match] = [c for c in compared if (c["system"], c["metric"]) == (delta["system"], "cer")]
        for key in ("n", "mean_diff", "ci_low", "ci_high", "p_ttest", "p_wilcoxon", "verdict"):
            assert match[key] == pytest.approx(delta[key]), key


def test_body_cer_is_cer_without_references() -> None:
    from pytest_doceval.kinds.documents.suite import score_document

    score = score_document("# A\n\nsome text", "A some txt", language="en", normalization="fair-v1")
    assert score.metrics["body_cer"] == score.metrics["cer"] and score.metrics["refs_delta"] == 0
    assert score.counts["body_cer"] == score.counts["cer"]


def test_a_higher_is_better_metric_reads_the_right_way() -> None:
    """A drop of a higher-is-better metric is a regression; a rise of a lower one too."""
    rows = [
        {
            "case": f"c{i}",
            "system": "s",
            "outcome": "passed",
            "metrics": {"structure_f1": 0.5 + i / 100, "cer": 0.2 + i / 100},
            "baseline": {"structure_f1": 0.6 + i / 100, "cer": 0.1 + i / 100},
        }
        for i in range(10)
    ]
    deltas = {d["metric"]: d for d in baseline_deltas(rows, SPECS, StatsConfig(resamples=200))}
    assert deltas["structure_f1"]["verdict"] == "worse"
    assert deltas["cer"]["verdict"] == "worse"
    for row in rows:
        row["metrics"], row["baseline"] = row["baseline"], row["metrics"]
    deltas = {d["metric"]: d for d in baseline_deltas(rows, SPECS, StatsConfig(resamples=200))}
    assert deltas["structure_f1"]["verdict"] == "better" and deltas["cer"]["verdict"] == "better"


def test_an_interval_is_clipped_to_the_metric_bounds() -> None:
    """A t interval of a share near 1 would reach past 1; the spec's bounds clip it."""
    from pytest_doceval.metrics.spec import SHARE

    specs = {"f1": MetricSpec("higher", bounds=SHARE), "raw": MetricSpec("higher")}
    rows = [
        {"case": f"c{i}", "system": "s", "outcome": "passed", "metrics": {"f1": v, "raw": v}}
        for i, v in enumerate([1.0, 1.0, 0.9, 1.0, 0.7])
    ]
    meta = {"metrics": {k: v.to_dict() for k, v in specs.items()}}
    aggregates = analyse_suite(meta, rows, StatsConfig(resamples=200))["aggregates"]["s"]
    assert aggregates["raw"]["ci_high"] > 1.0  # what the interval itself says
    assert (
        aggregates["f1"]["ci_high"] == 1.0
        and aggregates["f1"]["ci_low"] == aggregates["raw"]["ci_low"]
    )
    assert MetricSpec.from_dict(specs["f1"].to_dict()) == specs["f1"]


def test_gates_and_comparisons_report_their_minimum_detectable_effect() -> None:
    """Issue 19: every suite gate and paired comparison says the smallest change it detects
    with 80% power; statsmodels solves the same t power equation independently."""
    from statsmodels.stats.power import TTestPower

    from pytest_doceval.report.terminal import summary_lines

    rows = _rows()
    meta = {**META, "gate_rules": {"suite": {"cer": "significant:+0.5pp"}}}
    config = StatsConfig(resamples=500)
    suite = analyse_suite(meta, rows, config, (AllPairs(),))
    gate = next(g for g in suite["gates"] if g["system"] == "a")
    current = [r["metrics"]["cer"] for r in rows if r["system"] == "a" and r["metrics"]]
    base = [r["baseline"]["cer"] for r in rows if r["system"] == "a" and r["metrics"]]
    sd = float(np.std(np.round(current, 6) - np.array(base), ddof=1))
    effect = TTestPower().solve_power(nobs=12, alpha=0.025, power=0.8, alternative="larger")
    assert gate["mde"] == pytest.approx(effect * sd, rel=1e-4)
    assert gate["reliable"] is (gate["mde"] <= 0.005)
    assert "this suite detects changes of" in gate["power_note"]
    cer = next(c for c in suite["comparisons"] if c["metric"] == "cer")
    a = [r["metrics"]["cer"] for r in rows if r["system"] == "a" and r["metrics"]]
    b = [r["metrics"]["cer"] for r in rows if r["system"] == "b" and r["metrics"]]
    effect = TTestPower().solve_power(nobs=12, alpha=0.05, power=0.8)
    assert cer["mde"] == pytest.approx(effect * float(np.std(np.subtract(a, b), ddof=1)), rel=1e-4)
    correct = next(c for c in suite["comparisons"] if c["metric"] == "correct")
    assert correct["mde"] > 0  # exact McNemar (stats.power is checked by simulation)
    assert all("mde" in d for d in suite["baseline_deltas"])
    report = {"suites": {"s": {**suite, "kind": "documents", "scoring_id": "x"}}}
    lines = summary_lines(report)
    assert any(line.strip() == gate["power_note"] for line in lines)


def test_a_gate_below_its_mde_says_it_cannot_reliably_fail() -> None:
    from pytest_doceval.report.analysis import power_note

    assert power_note(0.005, 0.021) == (
        "this suite detects changes of 2.1pp or more (80% power); its tolerance 0.5pp is below "
        "that: it cannot reliably fail on a regression smaller than 2.6pp"
    )
    assert power_note(0.05, 0.021) == "this suite detects changes of 2.1pp or more (80% power)"
    assert "cannot detect" in power_note(0.05, float("inf"))


def test_the_terminal_never_calls_a_suite_with_failed_tests_unchanged() -> None:
    """Issue 18: a suite whose tests failed their per-case gates is not summed up as
    "unchanged", even when no mean moved beyond its CI."""
    from pytest_doceval.report.terminal import summary_lines

    def lines(rows: list[dict]) -> list[str]:
        suite = analyse_suite(META, rows, StatsConfig(resamples=200), (AllPairs(),))
        return summary_lines({"suites": {"s": {**suite, "kind": "documents", "scoring_id": "x"}}})

    rows = [
        {**r, "baseline": {m: round(v, 6) for m, v in r["metrics"].items()}}
        for r in _rows()
        if r.get("metrics")
    ]
    # Every case at its baseline value: unchanged, said so.
    assert "  metric x system pairs: 6 unchanged" in lines(rows)
    step = {m: 0.0 if m == "correct" else 0.01 for m in rows[0]["baseline"]}  # 0/1 stays 0/1
    moved = [
        {
            **r,
            "baseline": {
                m: v + (step[m] if i // 2 % 2 else -step[m]) for m, v in r["baseline"].items()
            },
        }
        for i, r in enumerate(rows)
    ]
    # Cases moved, the means within their CIs: "not significant", never "unchanged".
    assert any("changed within their CIs (not significant)" in line for line in lines(moved)), (
        lines(moved)
    )
    rows[0] = {**rows[0], "outcome": "failed"}
    failing = lines(rows)
    assert not any("unchanged" in line for line in failing)
    assert any("1 test(s) failed a per-case gate" in line for line in failing)


def test_the_terminal_shows_a_counted_metrics_corpus_value_beside_its_mean() -> None:
    """The terminal table's means are per-case means; where a metric has counts, the number a
    seed defines is the corpus value (Σ errors / Σ reference lengths), printed below it."""
    from pytest_doceval.report.terminal import summary_lines

    rows = _rows()
    suite = analyse_suite(META, rows, StatsConfig(resamples=200), (AllPairs(),))
    lines = summary_lines({"suites": {"s": {**suite, "kind": "documents", "scoring_id": "x"}}})
    start = lines.index("  corpus values (counts summed over the cases, then divided; 95% CI):")
    for system, line in zip(("a", "b"), lines[start + 1 : start + 3], strict=True):
        counts = [r["counts"]["cer"] for r in rows if r["system"] == system and r.get("counts")]
        errors = sum(c["substitutions"] + c["deletions"] + c["insertions"] for c in counts)
        corpus = errors / sum(c["reference_length"] for c in counts)
        assert line.startswith(f"    {system}: cer {corpus:.3f} [")
        assert "structure_f1" not in line  # no counts: no corpus value
