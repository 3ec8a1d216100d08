"""Seed 004's corpus field accuracy (issue 19): Σ_k w_k Acc_k / Σ_k w_k with Acc_k pooled over
documents, checked against a separately written computation from the verdicts themselves."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.extraction.fields import FIELD_METRICS, score_fields
from pytest_doceval.kinds.extraction.verdicts import FieldOptions
from pytest_doceval.report.analysis import aggregates
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import new_row
from pytest_doceval.stats import pooled_share

NAMES = ["date", "total", "vendor"]
VALUE = st.sampled_from(["a", "b", 1, 2])
DOCUMENT = st.dictionaries(st.sampled_from(NAMES), VALUE, min_size=1)
ITEMS = st.lists(st.fixed_dictionaries({"code": VALUE}), max_size=3)


def _seed_004(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], weights: dict[str, float]
) -> float:
    """From the raw documents: for each field name k, the share of (gold field named k) that the
    prediction holds with an equal value, over all documents; then the weighted mean."""
    matched: dict[str, int] = {}
    total: dict[str, int] = {}
    for gold, pred in pairs:
        for name, value in gold.items():
            if name == "items":
                for i, item in enumerate(value):
                    key = "items[].code"
                    total[key] = total.get(key, 0) + 1
                    got = pred.get("items", [])
                    hit = i < len(got) and got[i].get("code") == item["code"]
                    matched[key] = matched.get(key, 0) + hit
                continue
            total[name] = total.get(name, 0) + 1
            matched[name] = matched.get(name, 0) + (pred.get(name) == value)
    used = [k for k in total if weights.get(k, 1.0) > 0]
    return sum(weights.get(k, 1.0) * matched[k] / total[k] for k in used) / sum(
        weights.get(k, 1.0) for k in used
    )


def _rows(pairs: list[tuple[Any, Any]], options: FieldOptions) -> list[dict[str, Any]]:
    rows = []
    for i, (gold, pred) in enumerate(pairs):
        score = score_fields(gold, pred, options)
        result = CaseResult(
            "s", f"doc{i}", "x", score.metrics(per_field=False), counts=score.pooled_counts()
        )
        rows.append({**result.fill_row(new_row("s", f"doc{i}", "x")), "outcome": "passed"})
    return rows


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.tuples(DOCUMENT, ITEMS), st.tuples(DOCUMENT, ITEMS)),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([1.0, 2.0, 0.5]),
)
def test_the_corpus_value_is_seed_004s_formula(pairs: list[Any], total_weight: float) -> None:
    documents = []
    for (gold, gold_items), (pred, pred_items) in pairs:
        gold = {**gold, **({"items": gold_items} if gold_items else {})}
        pred = {**pred, **({"items": pred_items} if pred_items else {})}
        documents.append((gold, pred))
    weights = {"total": total_weight}
    options = FieldOptions(weights=weights)
    rows = _rows(documents, options)
    agg = aggregates(rows, {"field_accuracy": FIELD_METRICS["field_accuracy"]}, StatsConfig())
    entry = agg["x"]["field_accuracy"]
    assert entry["corpus"] == pytest.approx(_seed_004(documents, weights), abs=1e-12)
    mean = sum(r["metrics"]["field_accuracy"] for r in rows) / len(rows)
    assert entry["mean"] == pytest.approx(mean)
    assert entry["corpus_ci_low"] <= entry["corpus"] <= entry["corpus_ci_high"]


def test_the_two_aggregates_differ_as_the_issue_says() -> None:
    """A document with one field weighs as much as one with ten in the mean of per-document
    values, but counts one field in ten in the pooled share."""
    small = ({"total": 1}, {"total": 1})  # 1/1 matched
    big = ({"items": [{"code": i} for i in range(9)]}, {"items": []})  # 0/9
    rows = _rows([small, big], FieldOptions())
    entry = aggregates(rows, {"field_accuracy": FIELD_METRICS["field_accuracy"]}, StatsConfig())
    # mean of per-document: (1 + 0) / 2; pooled: Acc_total = 1, Acc_items = 0, mean of the two
    assert entry["x"]["field_accuracy"]["mean"] == 0.5
    assert entry["x"]["field_accuracy"]["corpus"] == 0.5
    more = ({"total": 1, "vendor": "a"}, {"total": 2, "vendor": "a"})
    rows = _rows([small, more], FieldOptions())
    entry = aggregates(rows, {"field_accuracy": FIELD_METRICS["field_accuracy"]}, StatsConfig())
    assert entry["x"]["field_accuracy"]["mean"] == pytest.approx((1 + 0.5) / 2)
    assert entry["x"]["field_accuracy"]["corpus"] == pytest.approx((1 / 2 + 1) / 2)


def test_pooled_share_edges_and_bootstrap() -> None:
    assert pooled_share([]).mean != pooled_share([]).mean  # NaN: nothing to pool
    assert pooled_share([{"k": (0, 0, 1.0)}]).mean != pooled_share([{"k": (0, 0, 1.0)}]).mean
    rng = random.Random(3)
    cases = [
        {"a": (rng.randint(0, 3), 3, 1.0), "b": (rng.randint(0, 1), 1, 2.0)} for _ in range(30)
    ]
    interval = pooled_share(cases, resamples=500, seed=1)
    matched_a = sum(c["a"][0] for c in cases) / 90
    matched_b = sum(c["b"][0] for c in cases) / 30
    assert interval.mean == pytest.approx((matched_a + 2 * matched_b) / 3)
    assert interval.ci_low < interval.mean < interval.ci_high
    assert pooled_share(cases, resamples=500, seed=1) == interval  # seeded
