"""`MetricSpec.flag_dominance` (issue 26): a flag that marks a mean only when the flagged cases
carry more than a share of its sum, shown wherever the value is compared (aggregates, baseline
deltas, pairwise comparisons, the terminal), and read from the report's specs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.analyses import AllPairs
from pytest_doceval.kinds.documents.insertions import CER_DOMINANCE
from pytest_doceval.kinds.documents.suite import DocumentsSuite
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.report.analysis import analyse_suite
from pytest_doceval.report.terminal import summary_lines
from pytest_doceval.rows import FLAG_MARK, flag_reasons, new_row

REASON = "insertions exceed the truth's length"
SPECS = {"rate": MetricSpec("lower", flag_dominance=0.5), "plain": MetricSpec("lower")}
META = {"kind": "documents", "metrics": {k: v.to_dict() for k, v in SPECS.items()}}


def _rows(outlier: float) -> list[dict[str, Any]]:
    """Five cases at 0.10 per system; system ``a`` has a sixth, flagged, at `outlier`."""
    rows = []
    for system in ("a", "b"):
        for i in range(6 if system == "a" else 5):
            row = {**new_row("s", f"c{i}", system), "outcome": "passed"}
            value = outlier if i == 5 else 0.10
            row["metrics"] = {"rate": value, "plain": value}
            row["baseline"] = {"rate": 0.10, "plain": 0.10}
            if i == 5:
                row["flags"] = {"rate": [REASON], "plain": [REASON]}
            rows.append(row)
    return rows


def test_the_issue_example_dominates_and_is_marked_everywhere() -> None:
    """Five pages at 0.10 and one page-number page at 40: mean 6.75, 40 of 40.5 of the sum."""
    suite = analyse_suite(META, _rows(40.0), StatsConfig(resamples=200), (AllPairs(),))
    entry = suite["aggregates"]["a"]["rate"]
    assert entry["mean"] == pytest.approx((5 * 0.10 + 40) / 6) == pytest.approx(6.75)
    assert entry["flagged"] == {REASON: 1}
    delta = next(
        d for d in suite["baseline_deltas"] if d["system"] == "a" and d["metric"] == "rate"
    )
    assert delta["flagged"] == {REASON: 1}
    comparison = next(c for c in suite["comparisons"] if c["metric"] == "rate")
    assert comparison["flagged"] == {"a": {REASON: 1}}
    text = "\n".join(summary_lines({"suites": {"s": {**suite, "scoring_id": "x"}}}))
    assert f"6.750{FLAG_MARK} [" in text
    assert f"{FLAG_MARK} rate [a] may mislead: {REASON} (1 of 6 cases)" in text


def test_a_flagged_case_that_does_not_dominate_leaves_the_mean_unmarked() -> None:
    # 0.45 of a sum of 0.95: under half. Without flag_dominance (``plain``) any flag marks.
    suite = analyse_suite(META, _rows(0.45), StatsConfig(resamples=200), (AllPairs(),))
    assert "flagged" not in suite["aggregates"]["a"]["rate"]
    assert suite["aggregates"]["a"]["plain"]["flagged"] == {REASON: 1}
    assert all("flagged" not in d for d in suite["baseline_deltas"] if d["metric"] == "rate")
    assert all("flagged" not in c for c in suite["comparisons"] if c["metric"] == "rate")
    text = "\n".join(summary_lines({"suites": {"s": {**suite, "scoring_id": "x"}}}))
    assert "rate [a] may mislead" not in text and "plain [a] may mislead" in text


@settings(deadline=None, max_examples=100)
@given(
    st.lists(st.floats(0, 50), min_size=1, max_size=12),
    st.lists(st.booleans(), min_size=12, max_size=12),
    st.sampled_from([0.0, 0.25, 0.5, 0.9]),
)
def test_dominance_is_the_flagged_share_of_the_sum(
    values: list[float], flagged: list[bool], share: float
) -> None:
    rows = []
    for i, value in enumerate(values):
        row = {**new_row("s", f"c{i}", "a"), "outcome": "passed", "metrics": {"m": value}}
        if flagged[i]:
            row["flags"] = {"m": ["why"]}
        rows.append(row)
    marked = "a" in flag_reasons(rows, "m", dominance=share)
    flagged_sum = sum(v for v, f in zip(values, flagged, strict=False) if f)
    assert marked == (any(flagged[: len(values)]) and flagged_sum > share * sum(values))


def test_specs_carry_flag_dominance_through_the_report() -> None:
    spec = DocumentsSuite.metrics["cer"]
    assert spec.flag_dominance == CER_DOMINANCE == 0.5
    assert MetricSpec.from_dict(spec.to_dict()) == spec
    assert MetricSpec.from_dict({"direction": "lower"}).flag_dominance is None
