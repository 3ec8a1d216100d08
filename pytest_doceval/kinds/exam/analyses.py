"""The exam kind's suite-level analyses (seed 001, sections 4.4-4.6), pure functions of the rows.

Each is an `Analysis`: a ``key`` (where its result goes in the suite's report section) and
``__call__(rows, meta, stats_config)`` returning builtin types (NaN as None), so a run,
``doceval merge`` and ``doceval report`` compute the same tables. `EXAM_ANALYSES` is the tuple
the exam kind lists. An accuracy (per system, nation or task) carries the interval its
MetricSpec names (`metric_interval`: Wilson for the 0/1 ``correct``), the one the summary gives
the same number; paired deltas keep the seed's paired percentile bootstrap, with questions the
resampling unit (the seed's ``bootstrap_ci``). The seed, the number of resamples and the
confidence come from ``stats_config``, and alpha = 1 - confidence (0.05 by default, the seed's
level).

Rows are read by `pytest_doceval.kinds.exam.table` (labels model/track/nation/task, metrics correct
and parse_failure, details choices). The built-in ``random`` model is in the accuracy, delta
and pairwise tables (it is the floor a model must clear) but not in the ANOVA or the
consistency test, which describe how real models' correctness varies.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pytest_doceval import stats
from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.analyses import metric_interval
from pytest_doceval.kinds.base import Analysis
from pytest_doceval.kinds.exam.scoring import EXAM_METRICS, RANDOM_MODEL
from pytest_doceval.kinds.exam.table import (
    Answer,
    answers_from_rows,
    by_system,
    chance_rate,
    correct_vector,
    paired,
    track_order,
    tracks_of,
)
from pytest_doceval.metrics.spec import MetricSpec, specs_from_section
from pytest_doceval.rows import plain
from pytest_doceval.stats.anova import additive_anova

Rows = Sequence[Mapping[str, Any]]

# Seed 001, 4.4: the delta table, each with the seed's reading of a positive delta (the seed's
# column, translated: "VLM 내장 OCR이 병목", "OCR 엔진 품질이 문제", "전체 perception 병목",
# "멀티모달 시너지 존재", "이미지가 추가 가치 제공").
DELTAS: tuple[tuple[str, str, str], ...] = (
    ("B1", "A", "> 0: the VLM's built-in OCR is the bottleneck"),
    ("B2", "B1", "> 0: the OCR engine's quality is the problem"),
    ("B2", "A", "> 0: perception as a whole is the bottleneck"),
    ("C", "A", "> 0: image and text together help (multimodal synergy)"),
    ("C", "B2", "> 0: the image adds value beyond a perfect transcription"),
)
FACTORS = ("nation", "task")


def _correct_spec(meta: Mapping[str, Any]) -> MetricSpec:
    """The spec of ``correct`` the report carries (the kind's own when a caller passes none)."""
    return specs_from_section(meta).get("correct", EXAM_METRICS["correct"])


def _paired_change(
    x: NDArray[np.float64], y: NDArray[np.float64], config: StatsConfig
) -> stats.PairedChange:
    """mean(x - y) over paired questions (`stats.paired_change`, binary: McNemar), with the
    seed's paired (question) percentile bootstrap CI."""
    interval = stats.paired_bootstrap_ci(
        x, y, resamples=config.resamples, confidence=config.confidence, seed=config.seed
    )
    return stats.paired_change(x, y, binary=True, alpha=1.0 - config.confidence, interval=interval)


def _defined(p: float | None) -> float:
    """A McNemar p-value `stats.paired_change` computed (it does for binary values)."""
    assert p is not None
    return p


def _summary(answers: Sequence[Answer], spec: MetricSpec, config: StatsConfig) -> dict[str, Any]:
    """Accuracy with the interval the summary gives the same mean (`metric_interval`: the
    method ``correct``'s spec names), parse failures apart."""
    ci = metric_interval(correct_vector(answers).tolist(), spec, config)
    failures = int(sum(a.parse_failure for a in answers))
    return {
        "n": ci.n,
        "accuracy": ci.mean,
        "ci_low": ci.ci_low,
        "ci_high": ci.ci_high,
        "parse_failures": failures,
        "parse_failure_rate": failures / ci.n if ci.n else None,
    }


@dataclass(frozen=True)
class Accuracy:
    """Accuracy per (model, track) with its CI (the summary's, `metric_interval`), the parse
    failures (counted wrong, reported apart) and the chance rate of the questions that system
    saw."""

    key: str = "accuracy"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> Any:
        spec = _correct_spec(meta)
        out = []
        for (model, track), answers in by_system(answers_from_rows(rows)).items():
            listed = list(answers.values())
            summary = _summary(listed, spec, stats_config)
            entry = {"model": model, "track": track, **summary}
            entry["chance"] = chance_rate(listed)
            out.append(entry)
        return plain(out)


@dataclass(frozen=True)
class Breakdowns:
    """Accuracy per (model, track) and per nation, then per task, each with its CI."""

    key: str = "breakdowns"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> Any:
        spec = _correct_spec(meta)
        out = []
        for (model, track), answers in by_system(answers_from_rows(rows)).items():
            for factor in FACTORS:
                levels: dict[str, list[Answer]] = {}
                for a in answers.values():
                    levels.setdefault(getattr(a, factor), []).append(a)
                for level in sorted(levels):
                    head = {"model": model, "track": track, "factor": factor, "level": level}
                    out.append({**head, **_summary(levels[level], spec, stats_config)})
        return plain(out)


@dataclass(frozen=True)
class Deltas:
    """Seed 001's delta table per model: the paired difference in accuracy between two tracks
    on the questions both answered (so every delta with B2 is on the oracle subset), its
    paired bootstrap CI, the exact McNemar p-value, and the seed's interpretation.
    ``supported`` is True when the delta is positive and p_mcnemar < alpha."""

    key: str = "deltas"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> Any:
        alpha = 1.0 - stats_config.confidence
        systems = by_system(answers_from_rows(rows))
        models = sorted({model for model, _ in systems})
        out = []
        for model in models:
            for first, second, interpretation in DELTAS:
                if (model, first) not in systems or (model, second) not in systems:
                    continue
                common, x, y = paired(systems[model, first], systems[model, second])
                if not common:
                    continue
                change = _paired_change(x, y, stats_config)
                p = _defined(change.p_mcnemar)
                out.append(
                    {
                        "model": model,
                        "delta": f"{first}-{second}",
                        "n": change.n,
                        "value": change.mean_diff,
                        "ci_low": change.ci_low,
                        "ci_high": change.ci_high,
                        "p_mcnemar": p,
                        "accuracy_first": change.mean_a,
                        "accuracy_second": change.mean_b,
                        "only_first": change.only_a,
                        "only_second": change.only_b,
                        "significant": p < alpha,
                        "supported": change.mean_diff > 0 and p < alpha,
                        "mde": change.mde,
                        "interpretation": interpretation,
                    }
                )
        return plain(out)


@dataclass(frozen=True)
class Anova:
    """Per track: correctness decomposed into model (block), nation and task effects at the
    item level (Type II, additive; see `pytest_doceval.stats.anova.additive_anova`), with
    eta^2 and partial eta^2. The ``random`` model is left out."""

    key: str = "anova"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> Any:
        answers = [a for a in answers_from_rows(rows) if a.model != RANDOM_MODEL]
        out = []
        for track in tracks_of(answers):
            here = sorted(
                (a for a in answers if a.track == track), key=lambda a: (a.model, a.question)
            )
            result = additive_anova(
                correct_vector(here),
                {
                    "model": [a.model for a in here],
                    "nation": [a.nation for a in here],
                    "task": [a.task for a in here],
                },
            )
            out.append(
                {
                    "track": track,
                    "models": len({a.model for a in here}),
                    "questions": len({a.question for a in here}),
                    "method": "Type II sums of squares, additive OLS, model as block",
                    **result.to_dict(),
                }
            )
        return plain(out)


@dataclass(frozen=True)
class Pairwise:
    """Per track, every pair of models on the questions both answered: accuracy difference
    (a - b) with its paired bootstrap CI, exact McNemar p-value, Bonferroni-adjusted over the
    track's pairs, Cohen's d_z of the paired 0/1 outcomes, and the seed's post-hoc paired t."""

    key: str = "pairwise"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> Any:
        alpha = 1.0 - stats_config.confidence
        systems = by_system(answers_from_rows(rows))
        out: list[dict[str, Any]] = []
        for track in sorted({t for _, t in systems}, key=track_order):
            models = sorted(m for m, t in systems if t == track)
            family: list[dict[str, Any]] = []
            for a, b in itertools.combinations(models, 2):
                common, x, y = paired(systems[a, track], systems[b, track])
                if not common:
                    continue
                change = _paired_change(x, y, stats_config)
                family.append(
                    {
                        "track": track,
                        "a": a,
                        "b": b,
                        "n": change.n,
                        "accuracy_a": change.mean_a,
                        "accuracy_b": change.mean_b,
                        "diff": change.mean_diff,
                        "ci_low": change.ci_low,
                        "ci_high": change.ci_high,
                        "only_a": change.only_a,
                        "only_b": change.only_b,
                        "p_mcnemar": _defined(change.p_mcnemar),
                        "cohens_d": change.cohens_d,
                        "p_ttest": change.p_ttest,
                        "mde": change.mde,
                    }
                )
            adjusted = stats.bonferroni([c["p_mcnemar"] for c in family])
            for comparison, p in zip(family, adjusted, strict=True):
                comparison["p_bonferroni"] = p
                comparison["significant"] = p < alpha
            out.extend(family)
        return plain(out)


def _level_variance(answers: Sequence[Answer], factor: str) -> tuple[int, float]:
    """Number of levels of `factor` and the sample variance (ddof 1) of their accuracies
    (unweighted: each nation or task counts once, however many questions it has)."""
    levels: dict[str, list[float]] = {}
    for a in answers:
        levels.setdefault(getattr(a, factor), []).append(a.correct)
    means = [math.fsum(levels[k]) / len(levels[k]) for k in sorted(levels)]
    if len(means) < 2:
        return len(means), float("nan")
    mean = math.fsum(means) / len(means)
    return len(means), math.fsum((m - mean) ** 2 for m in means) / (len(means) - 1)


@dataclass(frozen=True)
class Consistency:
    """Seed 001's model consistency, per track. Within each model: the variance of its
    accuracy across nations and across tasks, and their ratio (nation / task). Across models:
    does one factor win consistently? The exact binomial (sign) test of how many models have
    the larger variance across nations, against 1/2; ties and undefined ratios are dropped."""

    key: str = "consistency"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> Any:
        alpha = 1.0 - stats_config.confidence
        answers = [a for a in answers_from_rows(rows) if a.model != RANDOM_MODEL]
        out = []
        for track in tracks_of(answers):
            per_model = []
            for model in sorted({a.model for a in answers if a.track == track}):
                mine = [a for a in answers if a.track == track and a.model == model]
                nations, var_nation = _level_variance(mine, "nation")
                tasks, var_task = _level_variance(mine, "task")
                larger = None
                if not (math.isnan(var_nation) or math.isnan(var_task)):
                    larger = (
                        "nation"
                        if var_nation > var_task
                        else "task"
                        if var_task > var_nation
                        else "tie"
                    )
                ratio = var_nation / var_task if larger and var_task > 0 else float("nan")
                per_model.append(
                    {
                        "model": model,
                        "n": len(mine),
                        "nations": nations,
                        "tasks": tasks,
                        "var_nation": var_nation,
                        "var_task": var_task,
                        "ratio": ratio,
                        "larger": larger,
                    }
                )
            k = sum(1 for m in per_model if m["larger"] == "nation")
            n = sum(1 for m in per_model if m["larger"] in ("nation", "task"))
            p = stats.binomial_test_p(k, n, 0.5) if n else float("nan")
            out.append(
                {
                    "track": track,
                    "models": per_model,
                    "nation_larger": k,
                    "task_larger": n - k,
                    "undecided": len(per_model) - n,
                    "p_binomial": p,
                    "consistent": bool(n) and p < alpha,
                }
            )
        return plain(out)


@dataclass(frozen=True)
class References:
    """Reference lines (seed 001, 4.6): the random baseline -- mean of 1/choices over the
    questions, overall, per track (B2 runs on a subset) and per nation -- and the human pass
    marks per nation from ``meta["human_pass_marks"]`` when the suite configures them
    (reference only: not comparable item by item)."""

    key: str = "references"

    def __call__(self, rows: Rows, meta: Mapping[str, Any], stats_config: StatsConfig) -> Any:
        answers = answers_from_rows(rows)
        by_track: dict[str, list[Answer]] = {}
        by_nation: dict[str, list[Answer]] = {}
        for a in answers:
            by_track.setdefault(a.track, []).append(a)
            by_nation.setdefault(a.nation, []).append(a)
        marks = meta.get("human_pass_marks") or {}
        return plain(
            {
                "random": chance_rate(answers),
                "random_by_track": {
                    t: chance_rate(by_track[t]) for t in sorted(by_track, key=track_order)
                },
                "random_by_nation": {n: chance_rate(by_nation[n]) for n in sorted(by_nation)},
                "human_pass_marks": {str(k): float(v) for k, v in sorted(marks.items())},
            }
        )


EXAM_ANALYSES: tuple[Analysis, ...] = (
    Accuracy(),
    Breakdowns(),
    Deltas(),
    Anova(),
    Pairwise(),
    Consistency(),
    References(),
)
