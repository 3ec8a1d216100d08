"""pass_rate, olmOCR-bench's headline score, its bootstrap interval, and per-type/per-file rates.

Definition (``olmocr/bench/benchmark.py``, "average of per-JSONL scores"): each fact file's
score is the fraction of its facts that passed (a fact passed when more than half of its repeats
did, `check_repeats`), and pass_rate is the unweighted mean of the files' scores -- a file of 20
facts weighs as much as one of 2,000. Files with no fact are left out, as there.

Skipped facts (math without a renderer) are left out of their file's fraction, numerator and
denominator; a file whose facts were all skipped is left out of the mean. olmOCR never skips.

Interval: olmOCR-bench's ``calculate_bootstrap_ci(..., splits=file sizes)`` -- each resample
draws, within every file independently, as many facts as the file has, with replacement, and
averages the files' means; the interval is the percentile interval of those averages (default
1,000 resamples, 95 %): `pytest_doceval.stats.bootstrap.stratified_bootstrap_ci`, the files its
strata. Files are strata, never resampled themselves: the score is defined as a
mean over these files. Randomness comes from ``numpy.random.default_rng(seed)`` alone.

The micro mean (`micro_mean`) is olmOCR-bench's other figure, ``overall_score`` in
``evaluate_candidate``: the mean over all facts of each fact's fraction of repeats passed, every
fact weighing the same (so the biggest file dominates it). olmOCR-bench computes it and then
prints the macro mean as the score; it is shown here under its own name so that it is not quoted
as the headline by mistake.

Per type, olmOCR reports the mean of each fact's fraction of repeats passed (``test_avg``), not
of the pass/fail verdicts; `breakdown_by_type` does the same. `breakdown_by_file` gives each
file's pass fraction (the terms of pass_rate).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pytest_doceval.kinds.facts.model import Fact
from pytest_doceval.kinds.facts.result import FactResult

__all__ = [
    "Group",
    "PassRate",
    "breakdown_by_file",
    "breakdown_by_type",
    "file_scores",
    "micro_mean",
    "pass_rate",
    "pass_rate_ci",
]

Verdict = FactResult | bool | None


def _passed(verdict: Verdict) -> bool | None:
    return verdict.passed if isinstance(verdict, FactResult) else verdict


def file_scores(results_by_file: Mapping[str, Sequence[Verdict]]) -> dict[str, list[float]]:
    """Per file, 1.0 or 0.0 for each fact that was decided (skipped facts dropped); files with
    no decided fact are left out."""
    out: dict[str, list[float]] = {}
    for name, verdicts in results_by_file.items():
        decided = [float(v) for v in map(_passed, verdicts) if v is not None]
        if decided:
            out[name] = decided
    return out


def pass_rate(results_by_file: Mapping[str, Sequence[Verdict]]) -> float:
    """Mean over fact files of each file's pass fraction; nan when no fact was decided."""
    scores = file_scores(results_by_file)
    if not scores:
        return math.nan
    return float(np.mean([np.mean(values) for values in scores.values()]))


def micro_mean(fractions: Iterable[float | None]) -> float:
    """olmOCR-bench's ``overall_score``: the mean over facts of each fact's fraction of repeats
    passed (skipped facts, None, left out); nan when none was decided. Not the headline."""
    decided = [f for f in fractions if f is not None]
    return float(np.mean(decided)) if decided else math.nan


@dataclass(frozen=True)
class PassRate:
    """pass_rate with its bootstrap percentile interval."""

    mean: float
    ci_low: float
    ci_high: float
    confidence: float
    n_resamples: int
    seed: int
    n_files: int
    n_facts: int
    method: str = "bootstrap within fact files, percentile, seeded"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pass_rate_ci(
    results_by_file: Mapping[str, Sequence[Verdict]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> PassRate:
    """pass_rate and its interval, resampling facts within each file (module docstring;
    `pytest_doceval.stats.bootstrap.stratified_bootstrap_ci`, files the strata)."""
    from pytest_doceval.stats.bootstrap import stratified_bootstrap_ci  # on use: heavy

    scores = file_scores(results_by_file)
    interval = stratified_bootstrap_ci(
        list(scores.values()), resamples=n_resamples, confidence=confidence, seed=seed
    )
    return PassRate(
        mean=interval.mean,
        ci_low=interval.ci_low,
        ci_high=interval.ci_high,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        n_files=len(scores),
        n_facts=interval.n,
    )


@dataclass(frozen=True)
class Group:
    """Facts of one type or one file: `mean` of their pass fractions (nan if none decided)."""

    mean: float
    passed: int
    failed: int
    skipped: int

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total}


def _group(fractions: Iterable[float | None], verdicts: Iterable[bool | None]) -> Group:
    decided = [f for f in fractions if f is not None]
    verdict_list = list(verdicts)
    return Group(
        mean=float(np.mean(decided)) if decided else math.nan,
        passed=sum(1 for v in verdict_list if v is True),
        failed=sum(1 for v in verdict_list if v is False),
        skipped=sum(1 for v in verdict_list if v is None),
    )


def breakdown_by_type(results: Iterable[tuple[Fact, FactResult]]) -> dict[str, Group]:
    """Per fact type, the mean fraction of repeats passed (olmOCR's per-type figure)."""
    by_type: dict[str, list[FactResult]] = {}
    for fact, result in results:
        by_type.setdefault(fact.type, []).append(result)
    return {
        kind: _group((r.pass_fraction for r in rs), (r.passed for r in rs))
        for kind, rs in sorted(by_type.items())
    }


def breakdown_by_file(results_by_file: Mapping[str, Sequence[Verdict]]) -> dict[str, Group]:
    """Per fact file, the fraction of its decided facts that passed (pass_rate's terms)."""
    out = {}
    for name, verdicts in results_by_file.items():
        passed = [_passed(v) for v in verdicts]
        fractions = [None if p is None else float(p) for p in passed]
        out[name] = _group(fractions, passed)
    return out
