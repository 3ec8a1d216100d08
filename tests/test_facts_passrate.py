"""pass_rate (mean over files of each file's pass fraction), its within-file bootstrap interval
checked against the exact binomial distribution, and the per-type and per-file breakdowns."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from pytest_doceval.kinds.facts.model import Fact, parse_fact
from pytest_doceval.kinds.facts.passrate import (
    breakdown_by_file,
    breakdown_by_type,
    pass_rate,
    pass_rate_ci,
)
from pytest_doceval.kinds.facts.result import FactResult
from pytest_doceval.stats import resampling

T, F = FactResult(True, 1.0, ""), FactResult(False, 0.0, "")


def test_pass_rate_is_the_mean_of_file_means_not_of_facts() -> None:
    results = {"a.jsonl": [T, F, F, T], "b.jsonl": [T]}
    assert pass_rate(results) == pytest.approx((2 / 4 + 1 / 1) / 2)  # 0.75, not 3/5
    assert pass_rate({"a": [True, False, False, True], "b": [True]}) == pytest.approx(0.75)


def test_skipped_facts_and_empty_files_are_left_out() -> None:
    skipped = FactResult(None, 0.3, "no renderer")
    assert pass_rate({"a": [T, skipped, F]}) == pytest.approx(0.5)
    assert pass_rate({"a": [skipped], "b": [T], "c": []}) == 1.0
    assert math.isnan(pass_rate({"a": [skipped]}))
    assert math.isnan(pass_rate({}))
    assert math.isnan(pass_rate_ci({"a": []}).ci_low)


def test_interval_is_seeded_and_contains_the_estimate() -> None:
    rng = np.random.default_rng(1)
    results = {f"f{i}": list(rng.random(30 + 10 * i) < 0.3 + 0.1 * i) for i in range(5)}
    results_bool = {k: [bool(v) for v in vs] for k, vs in results.items()}
    first = pass_rate_ci(results_bool, seed=7)
    assert first == pass_rate_ci(results_bool, seed=7)
    assert first != pass_rate_ci(results_bool, seed=8)
    assert first.ci_low < first.mean < first.ci_high
    assert first.mean == pass_rate(results_bool)
    assert (first.n_files, first.n_facts) == (5, sum(len(v) for v in results_bool.values()))
    assert first.to_dict()["method"] == "bootstrap within fact files, percentile, seeded"


def test_degenerate_files_give_a_degenerate_interval() -> None:
    ci = pass_rate_ci({"a": [True] * 10, "b": [False] * 3})
    assert (ci.mean, ci.ci_low, ci.ci_high) == (0.5, 0.5, 0.5)


def test_resampling_does_not_depend_on_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    results = {"a": [True, False, True] * 20, "b": [False, True] * 7}
    whole = pass_rate_ci(results, n_resamples=500, seed=3)
    monkeypatch.setattr(resampling, "_MAX_CHUNK_ENTRIES", 7)
    assert pass_rate_ci(results, n_resamples=500, seed=3) == whole


def _exact_quantiles(files: list[tuple[int, int]], qs: list[float]) -> list[float]:
    """Quantiles of the mean of per-file means when each file's resampled pass count is
    Binomial(n, passed/n) -- what resampling 0/1 scores with replacement is, exactly."""
    supports = [
        [(k / n, stats.binom.pmf(k, n, passed / n)) for k in range(n + 1)] for n, passed in files
    ]
    outcomes: dict[float, float] = {}
    for combo in itertools.product(*supports):
        value = round(sum(v for v, _ in combo) / len(files), 12)
        outcomes[value] = outcomes.get(value, 0.0) + math.prod(p for _, p in combo)
    values = sorted(outcomes)
    cdf = np.cumsum([outcomes[v] for v in values])
    return [values[int(np.searchsorted(cdf, q - 1e-12))] for q in qs]


@pytest.mark.parametrize(
    "files",
    [
        [(40, 12)],
        [(25, 20), (12, 3)],
        [(10, 5), (8, 8), (15, 9)],
    ],
)
def test_interval_matches_the_exact_bootstrap_distribution(files: list[tuple[int, int]]) -> None:
    results = {
        f"f{i}": [True] * passed + [False] * (n - passed) for i, (n, passed) in enumerate(files)
    }
    ci = pass_rate_ci(results, n_resamples=40_000, seed=11)
    low, high = _exact_quantiles(files, [0.025, 0.975])
    # The percentile of 40,000 draws lands within one support step of the exact quantile.
    step = 1.0 / (len(files) * min(n for n, _ in files))
    assert ci.ci_low == pytest.approx(low, abs=step)
    assert ci.ci_high == pytest.approx(high, abs=step)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="confidence"):
        pass_rate_ci({"a": [True]}, confidence=1.0)
    with pytest.raises(ValueError, match="resamples"):
        pass_rate_ci({"a": [True]}, n_resamples=0)


def test_breakdowns() -> None:
    def fact(kind: str, **fields: str) -> Fact:
        return parse_fact({"pdf": "d.pdf", "page": 1, "id": kind, "type": kind, **fields})

    present, table = fact("present", text="x"), fact("table", cell="1")
    two_of_three = FactResult(True, 2 / 3, "", (T, T, F))
    one_of_three = FactResult(False, 1 / 3, "", (T, F, F))
    skipped = FactResult(None, 0.0, "", (FactResult(None, 0.4, ""),))
    by_type = breakdown_by_type(
        [(present, two_of_three), (present, one_of_three), (table, T), (table, skipped)]
    )
    # olmOCR's per-type figure averages the fraction of repeats passed, not the verdicts.
    assert by_type["present"].mean == pytest.approx(0.5)
    assert (by_type["present"].passed, by_type["present"].failed) == (1, 1)
    assert by_type["table"].mean == 1.0 and by_type["table"].skipped == 1
    assert by_type["table"].to_dict()["total"] == 2
    by_file = breakdown_by_file({"a": [two_of_three, one_of_three, skipped], "b": []})
    assert by_file["a"].mean == pytest.approx(0.5)  # verdicts: 1 of 2 decided
    assert (by_file["a"].passed, by_file["a"].failed, by_file["a"].skipped) == (1, 1, 1)
    assert math.isnan(by_file["b"].mean)


def test_interval_is_the_naive_within_file_bootstrap() -> None:
    """stats' stratified bootstrap against a separately written loop: one generator, each file
    in turn draws every resample (one row of indices at a time), then the percentile interval."""
    results = {"a": [True, False, True, True] * 5, "b": [False, True, False], "c": [True] * 4}
    rng = np.random.default_rng(11)
    per_file = []
    for verdicts in results.values():
        values = np.array(verdicts, dtype=np.float64)
        per_file.append(
            [values[rng.integers(0, values.size, size=values.size)].mean() for _ in range(300)]
        )
    totals = np.mean(per_file, axis=0)
    low, high = np.percentile(totals, [2.5, 97.5])
    ci = pass_rate_ci(results, n_resamples=300, seed=11)
    assert (ci.ci_low, ci.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert ci.n_files == 3 and ci.n_facts == 27
