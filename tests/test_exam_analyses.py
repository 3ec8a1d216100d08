"""The exam kind's suite analyses, each cross-checked against an independent computation
(a naive bootstrap, scipy, statsmodels) on generated rows."""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
import statsmodels.formula.api as smf
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.exam.analyses import (
    DELTAS,
    EXAM_ANALYSES,
    Accuracy,
    Anova,
    Breakdowns,
    Consistency,
    Deltas,
    Pairwise,
    References,
)
from pytest_doceval.kinds.exam.scoring import EXAM_METRICS, random_answer
from pytest_doceval.report.analysis import analyse_suite
from pytest_doceval.stats.power import mcnemar_mde

CONFIG = StatsConfig(resamples=400, confidence=0.95, seed=7)
NATIONS = ("Korea", "Japan", "India")
TASKS = ("civics", "maths", "geography", "law")
TRACKS = ("A", "B1", "B2", "C")
FACTORS = ("nation", "task")
Row = dict[str, Any]


def make_rows(
    seed: int = 0,
    *,
    questions: int = 120,
    skill: Mapping[str, float] | None = None,
    track_bonus: Mapping[str, float] | None = None,
) -> list[Row]:
    """Rows as the exam kind writes them: every model on every question and track, B2 only on
    the questions with oracle text (two in five), choices alternating 4 and 5."""
    rng = random.Random(seed)
    skill = skill or {"m-strong": 0.75, "m-weak": 0.45}
    bonus = track_bonus or {"A": 0.0, "B1": 0.05, "B2": 0.15, "C": 0.1}
    nation_bonus = {"Korea": 0.1, "Japan": 0.0, "India": -0.1}
    rows: list[Row] = []
    for q in range(questions):
        qid = f"q{q:04d}"
        nation, task, choices = NATIONS[q % 3], TASKS[(q // 3) % 4], 4 + q % 2
        answer = 1 + q % choices
        for model in [*skill, "random"]:
            for track in TRACKS:
                if track == "B2" and q % 5 >= 2:
                    continue
                if model == "random":
                    correct = float(random_answer(qid, choices) == answer)
                else:
                    p = skill[model] + bonus[track] + nation_bonus[nation]
                    correct = float(rng.random() < p)
                failure = float(not correct and rng.random() < 0.1)
                rows.append(
                    {
                        "suite": "exam",
                        "case": qid,
                        "system": f"{model}-{track}",
                        "labels": {"model": model, "track": track, "nation": nation, "task": task},
                        "outcome": "passed",
                        "metrics": {"correct": correct, "parse_failure": failure},
                        "details": {"choices": choices},
                    }
                )
    return rows


def select(rows: Sequence[Row], **labels: str) -> list[Row]:
    return [r for r in rows if all(r["labels"][k] == v for k, v in labels.items())]


def by_case(rows: Sequence[Row]) -> dict[str, float]:
    return {r["case"]: r["metrics"]["correct"] for r in rows}


def naive_percentile_ci(values: Sequence[float], config: StatsConfig) -> tuple[float, float]:
    """The percentile bootstrap written out: one index matrix from the same seeded generator."""
    x = np.asarray(values, dtype=float)
    idx = np.random.default_rng(config.seed).integers(0, x.size, size=(config.resamples, x.size))
    alpha = 1 - config.confidence
    low, high = np.quantile(x[idx].mean(axis=1), [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return make_rows()


@pytest.fixture(scope="module")
def results(rows: list[Row]) -> dict[str, Any]:
    return {a.key: a(rows, {"human_pass_marks": {"Korea": 0.6}}, CONFIG) for a in EXAM_ANALYSES}


def test_keys_and_json(results: dict[str, Any]) -> None:
    assert list(results) == [
        "accuracy",
        "breakdowns",
        "deltas",
        "anova",
        "pairwise",
        "consistency",
        "references",
    ]
    json.dumps(results, allow_nan=False)  # builtin types, NaN written as None


def test_accuracy(rows: list[Row], results: dict[str, Any]) -> None:
    table = results["accuracy"]
    assert [(e["model"], e["track"]) for e in table][:4] == [("m-strong", t) for t in TRACKS]
    assert len(table) == 3 * 4
    for entry in table:
        mine = sorted(
            select(rows, model=entry["model"], track=entry["track"]), key=lambda r: r["case"]
        )
        correct = [r["metrics"]["correct"] for r in mine]
        assert entry["n"] == len(mine) == (48 if entry["track"] == "B2" else 120)
        assert entry["accuracy"] == pytest.approx(np.mean(correct))
        # The interval ``correct``'s spec names (Wilson), checked against statsmodels'.
        assert (entry["ci_low"], entry["ci_high"]) == pytest.approx(
            proportion_confint(int(sum(correct)), len(correct), alpha=0.05, method="wilson")
        )
        assert entry["parse_failures"] == sum(r["metrics"]["parse_failure"] for r in mine)
        assert entry["chance"] == pytest.approx(
            np.mean([1 / r["details"]["choices"] for r in mine])
        )


def test_breakdowns(rows: list[Row], results: dict[str, Any]) -> None:
    table = results["breakdowns"]
    assert len(table) == 3 * 4 * (len(NATIONS) + len(TASKS))
    for entry in table:
        mine = select(rows, model=entry["model"], track=entry["track"])
        cell = [
            r["metrics"]["correct"] for r in mine if r["labels"][entry["factor"]] == entry["level"]
        ]
        assert entry["n"] == len(cell)
        assert entry["accuracy"] == pytest.approx(np.mean(cell))
        assert entry["ci_low"] <= entry["accuracy"] <= entry["ci_high"]


def test_deltas(rows: list[Row], results: dict[str, Any]) -> None:
    table = results["deltas"]
    assert [e["delta"] for e in table if e["model"] == "m-strong"] == [
        "B1-A",
        "B2-B1",
        "B2-A",
        "C-A",
        "C-B2",
    ]
    interpretations = {f"{a}-{b}": text for a, b, text in DELTAS}
    for entry in table:
        first, second = entry["delta"].split("-")
        x_map = by_case(select(rows, model=entry["model"], track=first))
        y_map = by_case(select(rows, model=entry["model"], track=second))
        common = sorted(set(x_map) & set(y_map))
        x = np.array([x_map[c] for c in common])
        y = np.array([y_map[c] for c in common])
        # Deltas with B2 are on the oracle subset (two questions in five).
        assert entry["n"] == len(common) == (48 if "B2" in entry["delta"] else 120)
        assert entry["value"] == pytest.approx(x.mean() - y.mean())
        assert (entry["ci_low"], entry["ci_high"]) == pytest.approx(
            naive_percentile_ci((x - y).tolist(), CONFIG)
        )
        table2 = [
            [np.sum((x == 1) & (y == 1)), np.sum((x == 1) & (y == 0))],
            [np.sum((x == 0) & (y == 1)), np.sum((x == 0) & (y == 0))],
        ]
        assert entry["p_mcnemar"] == pytest.approx(mcnemar(table2, exact=True).pvalue)
        assert entry["interpretation"] == interpretations[entry["delta"]]
        assert entry["significant"] == (entry["p_mcnemar"] < 0.05)
        assert entry["supported"] == (entry["value"] > 0 and entry["p_mcnemar"] < 0.05)
        # issue 19: the change this delta detects with 80% power (exact McNemar at its n and
        # discordance; stats.power is checked by simulation)
        discordant = float(np.mean(x != y))
        if discordant > 0:
            assert entry["mde"] == pytest.approx(mcnemar_mde(len(common), discordant, 0.05))
    # The random system answers the same on every track: all of its deltas are exactly 0.
    assert {e["value"] for e in table if e["model"] == "random"} == {0.0}
    assert all(e["p_mcnemar"] == 1.0 for e in table if e["model"] == "random")


def test_deltas_skip_missing_tracks() -> None:
    rows = [r for r in make_rows(1, questions=30) if r["labels"]["track"] in ("A", "C")]
    table = Deltas()(rows, {}, CONFIG)
    assert {e["delta"] for e in table} == {"C-A"}


def test_anova_matches_statsmodels(rows: list[Row], results: dict[str, Any]) -> None:
    pd = pytest.importorskip("pandas")
    assert [e["track"] for e in results["anova"]] == list(TRACKS)
    for entry in results["anova"]:
        mine = [r for r in select(rows, track=entry["track"]) if r["labels"]["model"] != "random"]
        frame = pd.DataFrame(
            {
                "y": [r["metrics"]["correct"] for r in mine],
                **{k: [r["labels"][k] for r in mine] for k in ("model", "nation", "task")},
            }
        )
        reference = anova_lm(smf.ols("y ~ C(model) + C(nation) + C(task)", data=frame).fit(), typ=2)
        assert entry["n"] == len(mine) and entry["models"] == 2
        total = float(((frame["y"] - frame["y"].mean()) ** 2).sum())
        for effect in entry["effects"]:
            row = reference.loc[f"C({effect['name']})"]
            assert effect["ss"] == pytest.approx(row["sum_sq"], abs=1e-10)
            assert effect["df"] == row["df"]
            assert effect["p"] == pytest.approx(row["PR(>F)"], rel=1e-6)
            assert effect["eta_squared"] == pytest.approx(row["sum_sq"] / total, abs=1e-12)
        assert entry["ss_residual"] == pytest.approx(reference.loc["Residual", "sum_sq"])


def test_pairwise(rows: list[Row], results: dict[str, Any]) -> None:
    table = results["pairwise"]
    assert len(table) == 4 * 3  # 3 pairs of (m-strong, m-weak, random) per track
    for track in TRACKS:
        family = [e for e in table if e["track"] == track]
        assert [(e["a"], e["b"]) for e in family] == [
            ("m-strong", "m-weak"),
            ("m-strong", "random"),
            ("m-weak", "random"),
        ]
        expected_adjusted = multipletests([e["p_mcnemar"] for e in family], method="bonferroni")[1]
        assert [e["p_bonferroni"] for e in family] == pytest.approx(list(expected_adjusted))
        for entry in family:
            x_map = by_case(select(rows, model=entry["a"], track=track))
            y_map = by_case(select(rows, model=entry["b"], track=track))
            x = np.array([x_map[c] for c in sorted(x_map)])
            y = np.array([y_map[c] for c in sorted(x_map)])
            d = x - y
            assert entry["diff"] == pytest.approx(d.mean())
            assert entry["cohens_d"] == pytest.approx(d.mean() / d.std(ddof=1))
            assert entry["p_ttest"] == pytest.approx(sps.ttest_rel(x, y).pvalue)
            assert entry["only_a"] == np.sum((x == 1) & (y == 0))
            table2 = [[0, entry["only_a"]], [entry["only_b"], 0]]
            assert entry["p_mcnemar"] == pytest.approx(mcnemar(table2, exact=True).pvalue)
            assert entry["significant"] == (entry["p_bonferroni"] < 0.05)
    strong_vs_random = next(e for e in table if e["track"] == "A" and e["b"] == "random")
    assert strong_vs_random["diff"] > 0.3 and strong_vs_random["significant"]


def test_consistency(rows: list[Row], results: dict[str, Any]) -> None:
    for entry in results["consistency"]:
        for model in entry["models"]:
            mine = select(rows, model=model["model"], track=entry["track"])
            cells: dict[str, dict[str, list[float]]] = {
                "nation": defaultdict(list),
                "task": defaultdict(list),
            }
            for r in mine:
                for factor in cells:
                    cells[factor][r["labels"][factor]].append(r["metrics"]["correct"])
            var = {f: np.var([np.mean(v) for v in cells[f].values()], ddof=1) for f in cells}
            assert model["var_nation"] == pytest.approx(var["nation"])
            assert model["var_task"] == pytest.approx(var["task"])
            assert model["ratio"] == pytest.approx(var["nation"] / var["task"])
            assert model["larger"] == ("nation" if var["nation"] > var["task"] else "task")
        k, n = entry["nation_larger"], entry["nation_larger"] + entry["task_larger"]
        assert entry["p_binomial"] == pytest.approx(sps.binomtest(k, n, 0.5).pvalue)
        assert "random" not in {m["model"] for m in entry["models"]}


def test_consistency_across_many_models() -> None:
    # Eight models with a strong nation effect and no task effect: each has the larger
    # variance across nations, and 8 of 8 is significant (two-sided p = 2 / 2**8).
    skill = {f"m{i}": 0.3 + 0.04 * i for i in range(8)}
    rows = make_rows(3, questions=600, skill=skill)
    for row in rows:  # widen the nation effect so no model's sample hides it
        if row["labels"]["nation"] == "Korea" and row["labels"]["model"] != "random":
            row["metrics"]["correct"] = 1.0
    (track_a, *_) = Consistency()(rows, {}, CONFIG)
    assert (track_a["nation_larger"], track_a["task_larger"]) == (8, 0)
    assert track_a["p_binomial"] == pytest.approx(2 / 2**8)
    assert track_a["consistent"]


def test_references(results: dict[str, Any]) -> None:
    refs = results["references"]
    # Half four-choice, half five-choice: (1/4 + 1/5) / 2 = 22.5%, the seed's "about 22%".
    assert refs["random"] == pytest.approx(0.225)
    assert refs["random_by_track"]["B2"] == pytest.approx(0.225)
    assert set(refs["random_by_nation"]) == set(NATIONS)
    assert refs["human_pass_marks"] == {"Korea": 0.6}
    assert References()([], {}, CONFIG)["random"] is None


def test_pure_function_of_the_rows(rows: list[Row], results: dict[str, Any]) -> None:
    shuffled = list(rows)
    random.Random(5).shuffle(shuffled)
    extra = [
        {**rows[0], "outcome": "error", "metrics": {}},
        {**rows[1], "outcome": "skipped"},
        {**rows[2], "labels": {"model": "x", "track": "A"}, "case": "no-nation"},
    ]
    again = {
        a.key: a(shuffled + extra, {"human_pass_marks": {"Korea": 0.6}}, CONFIG)
        for a in EXAM_ANALYSES
    }
    assert again == results


def test_errored_rows_are_not_answers() -> None:
    rows = make_rows(2, questions=20)
    for row in rows[:10]:
        row["outcome"] = "error"
    table = Accuracy()(rows, {}, CONFIG)
    assert sum(e["n"] for e in table) == len(rows) - 10


def test_through_the_generic_report_pipeline(rows: list[Row]) -> None:
    meta = {
        "kind": "exam",
        "metrics": {name: spec.to_dict() for name, spec in EXAM_METRICS.items()},
        "human_pass_marks": {"Korea": 0.6},
    }
    section = analyse_suite(meta, rows, CONFIG, EXAM_ANALYSES)
    assert section["analysis_keys"] == [a.key for a in EXAM_ANALYSES]
    strong = next(e for e in section["accuracy"] if (e["model"], e["track"]) == ("m-strong", "A"))
    assert section["aggregates"]["m-strong-A"]["correct"]["mean"] == pytest.approx(
        strong["accuracy"]
    )


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=2, max_value=12))
@settings(max_examples=15, deadline=None)
def test_invariants_on_small_suites(seed: int, questions: int) -> None:
    rows = make_rows(seed, questions=questions, skill={"a": 0.6, "b": 0.4})
    for entry in Accuracy()(rows, {}, CONFIG):
        assert 0 <= entry["ci_low"] <= entry["accuracy"] <= entry["ci_high"] <= 1
    for entry in Deltas()(rows, {}, CONFIG):
        assert entry["value"] == pytest.approx(entry["accuracy_first"] - entry["accuracy_second"])
        assert 0 < entry["p_mcnemar"] <= 1
    for entry in Pairwise()(rows, {}, CONFIG):
        assert entry["p_mcnemar"] <= entry["p_bonferroni"] <= 1
    for entry in Anova()(rows, {}, CONFIG):
        shares = [e["eta_squared"] for e in entry["effects"] if e["eta_squared"] is not None]
        assert all(-1e-9 <= s <= 1 + 1e-9 for s in shares)
    for entry in Breakdowns()(rows, {}, CONFIG):
        assert entry["n"] >= 1
    for entry in Consistency()(rows, {}, CONFIG):
        ratio = [m["ratio"] for m in entry["models"]]
        assert all(r is None or r >= 0 for r in ratio)
        assert entry["p_binomial"] is None or 0 < entry["p_binomial"] <= 1
    assert not math.isnan(References()(rows, {}, CONFIG)["random"])


def test_accuracy_interval_is_the_summarys(rows: list[Row]) -> None:
    """Regression (issue 17, defect 2): the civil-exams page showed random-A's accuracy as
    0.0833 [0.0149, 0.3539] (Wilson) in the summary and 8.3% [0.0%, 25.0%] (percentile
    bootstrap) in the accuracy table. One number, one interval: the table's equals the
    summary's for every system, made by the method ``correct``'s spec names."""
    meta = {
        "kind": "exam",
        "metrics": {name: spec.to_dict() for name, spec in EXAM_METRICS.items()},
    }
    section = analyse_suite(meta, rows, CONFIG, EXAM_ANALYSES)
    assert section["accuracy"]
    for entry in section["accuracy"]:
        summary = section["aggregates"][f"{entry['model']}-{entry['track']}"]["correct"]
        assert summary["method"] == "wilson"
        assert (entry["accuracy"], entry["ci_low"], entry["ci_high"], entry["n"]) == (
            summary["mean"],
            summary["ci_low"],
            summary["ci_high"],
            summary["n"],
        )
        # Independent check: the Wilson score interval from statsmodels.
        low, high = proportion_confint(
            round(entry["accuracy"] * entry["n"]), entry["n"], alpha=0.05, method="wilson"
        )
        assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    # The breakdowns' per-level accuracies carry the same method's interval.
    for entry in section["breakdowns"]:
        low, high = proportion_confint(
            round(entry["accuracy"] * entry["n"]), entry["n"], alpha=0.05, method="wilson"
        )
        assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((low, high), abs=1e-12)
