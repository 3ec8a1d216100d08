"""Entry alignment and IMQ (seed 003): hand-worked distances, the assignment against brute force
and against POT's optimal transport, IMQ against the mean quality and a Riemann sum."""

from __future__ import annotations

import difflib
import importlib.util
import itertools
import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from pytest_doceval.kinds.extraction.entries import (
    ENTRY_METRICS,
    EntryFields,
    Method,
    assign,
    imq,
    name_distance,
    score_entries,
    set_distance,
)
from pytest_doceval.metrics.json_input import ExtractionInputError
from pytest_doceval.metrics.spec import find_spec

# POT runs the seed's optimal transport (method="emd"); without it only those tests skip.
needs_pot = pytest.mark.skipif(importlib.util.find_spec("ot") is None, reason="POT not installed")


def entry(name: str, pages: list[Any]) -> dict[str, Any]:
    return {"name": name, "pages": pages}


# ---------------------------------------------------------------- distances, by hand


def test_name_distance_is_ratcliff_obershelp_on_lowercased_trimmed_names() -> None:
    # "smith" / "smyth": matching blocks "sm" and "th", 4 of 10 characters -> ratio 0.8
    assert name_distance("Smith", "smyth") == pytest.approx(0.2)
    assert name_distance("  SMITH ", "smith") == 0.0
    assert name_distance("abc", "xyz") == 1.0
    # Ratcliff/Obershelp: the longest block first ("ab"), then recursively on either side of
    # it ("c" in "xcd" / "c"): 3 matched of 8 characters, ratio 2*3/8
    assert name_distance("abxcd", "abc") == pytest.approx(1 - 2 * 3 / 8)


@given(st.text("abcdé ,.", max_size=30), st.text("abcdé ,.", max_size=30))
def test_name_distance_equals_the_standard_librarys_difflib(gold: str, pred: str) -> None:
    # The hot path uses cydifflib when installed; its ratios must be difflib's, bit for bit.
    a, b = gold.strip().lower(), pred.strip().lower()
    expected = 1.0 - difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    assert name_distance(gold, pred) == expected


def _ratcliff_obershelp_matches(a: str, b: str) -> int:
    """Plain Ratcliff/Obershelp, written apart from difflib: the longest common block
    (earliest in `a`, then in `b`, difflib's tie rule), then recursively left and right."""
    if not a or not b:
        return 0
    best = (0, 0, 0)  # length, start in a, start in b
    for i in range(len(a)):
        for j in range(len(b)):
            k = 0
            while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                k += 1
            if k > best[0]:
                best = (k, i, j)
    k, i, j = best
    if k == 0:
        return 0
    return (
        k
        + _ratcliff_obershelp_matches(a[:i], b[:j])
        + _ratcliff_obershelp_matches(a[i + k :], b[j + k :])
    )


def _plain_distance(a: str, b: str) -> float:
    a, b = a.strip().lower(), b.strip().lower()
    if not a and not b:
        return 0.0
    return 1.0 - 2 * _ratcliff_obershelp_matches(a, b) / (len(a) + len(b))


def test_long_names_have_no_junk_heuristic() -> None:
    """Issue 19: with difflib's autojunk, "ab"*100 vs "ba"*100 had distance 1.0 (IMQ 0)."""
    assert name_distance("ab" * 100, "ba" * 100) == pytest.approx(0.005)
    assert name_distance("ab" * 100, "ba" * 100) == pytest.approx(
        _plain_distance("ab" * 100, "ba" * 100)
    )
    gold = [{"name": "ab" * 100, "pages": [1]}]
    pred = [{"name": "ba" * 100, "pages": [2]}]
    assert score_entries({"entries": gold}, {"entries": pred}).imq == pytest.approx(0.995)


@settings(max_examples=60, deadline=None)
@given(st.text("abc ", max_size=260), st.text("abc ", max_size=260))
def test_name_distance_is_plain_ratcliff_obershelp_at_any_length(gold: str, pred: str) -> None:
    assert name_distance(gold, pred) == pytest.approx(_plain_distance(gold, pred), abs=1e-12)


def test_set_distance_is_one_minus_iou() -> None:
    assert set_distance({"1", "2", "3"}, {"2", "3", "4"}) == pytest.approx(0.5)
    assert set_distance(set(), set()) == 0.0
    assert set_distance({"1"}, set()) == 1.0


def test_entry_distance_is_the_product_and_pages_compare_as_text() -> None:
    gold = {"entries": [entry("Smith", [1, 2, 3])]}
    pred = {"entries": [entry("smyth", ["2", "3", 4.0])]}
    score = score_entries(gold, pred)
    # d_n = 0.2, d_p = 1 - 2/4 = 0.5 -> d_e = 0.1, q = 0.9
    assert score.pairs[0].distance == pytest.approx(0.1)
    assert score.imq == pytest.approx(0.9)


def test_the_product_forgives_either_part_as_the_seed_defines_it() -> None:
    gold = {"entries": [entry("Smith", [1]), entry("Jones", [5])]}
    right_name_wrong_pages = {"entries": [entry("smith", [9]), entry("Xavier", [5])]}
    assert score_entries(gold, right_name_wrong_pages).imq == 1.0


# ---------------------------------------------------------------- assignment


def brute_force_cost(cost: np.ndarray) -> float:
    n = cost.shape[0]
    return min(
        float(sum(cost[i, p[i]] for i in range(n))) for p in itertools.permutations(range(n))
    )


matrices = st.integers(1, 6).flatmap(
    lambda n: st.lists(
        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n, max_size=n),  # many ties
        min_size=n,
        max_size=n,
    )
)


@needs_pot
@given(matrices)
@settings(max_examples=150, deadline=None)
def test_lsa_and_emd_reach_the_brute_force_optimum(rows: list[list[float]]) -> None:
    cost = np.asarray(rows)
    best = brute_force_cost(cost)
    methods: tuple[Method, ...] = ("lsa", "emd")
    for method in methods:
        cols = assign(cost, method)
        assert sorted(cols.tolist()) == list(range(len(rows)))  # a permutation
        assert cost[np.arange(len(rows)), cols].sum() == pytest.approx(best)


@needs_pot
def test_lsa_and_emd_agree_on_random_matrices_with_ties() -> None:
    import ot  # type: ignore[import-untyped,unused-ignore]

    rng = np.random.default_rng(3)
    for n in (10, 50, 120):
        for tied in (False, True):
            cost = rng.random((n, n))
            if tied:
                cost = np.round(cost * 4) / 4
            lsa, emd = assign(cost, "lsa"), assign(cost, "emd")
            rows = np.arange(n)
            assert cost[rows, lsa].sum() == pytest.approx(cost[rows, emd].sum(), abs=1e-9)
            # and POT's own optimal cost agrees
            uniform = np.full(n, 1 / n)
            assert ot.emd2(uniform, uniform, cost) * n == pytest.approx(cost[rows, lsa].sum())


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="lsa"):
        assign(np.zeros((2, 2)), "greedy")  # type: ignore[arg-type]


# ---------------------------------------------------------------- IMQ


@given(st.lists(st.floats(0, 1), max_size=40))
def test_imq_is_the_mean_quality(qualities: list[float]) -> None:
    expected = sum(qualities) / len(qualities) if qualities else 1.0
    assert imq(qualities) == pytest.approx(expected, abs=1e-12)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_imq_is_the_limit_of_a_riemann_sum_of_f(qualities: list[float]) -> None:
    q = np.asarray(qualities)
    grid = 20_000
    t = (np.arange(grid) + 0.5) / grid  # midpoints
    riemann = float((q[None, :] >= t[:, None]).mean())
    assert imq(qualities) == pytest.approx(riemann, abs=2 / grid * len(qualities) + 1e-9)


def test_missing_and_spurious_entries_are_pairs_of_quality_zero() -> None:
    gold = {"entries": [entry("A", [1]), entry("B", [2])]}
    one_found = score_entries(gold, {"entries": [entry("a", [1])]})
    assert one_found.qualities == (1.0, 0.0)
    assert one_found.imq == 0.5
    assert one_found.pairs[1].pred is None
    spurious = score_entries(gold, {"entries": [entry("A", [1]), entry("B", [2]), entry("C", [3])]})
    assert spurious.imq == pytest.approx(2 / 3)
    assert spurious.pairs[-1].gold is None and spurious.pairs[-1].pred == 2


@given(st.permutations(list(range(6))))
def test_imq_does_not_depend_on_prediction_order(order: list[int]) -> None:
    names = ["Ahn", "Baek", "Cho", "Doe", "Eun", "Fox"]
    gold = {"entries": [entry(n, [i, i + 1]) for i, n in enumerate(names)]}
    pred_entries = [entry(n.upper() + "x", [i + 1]) for i, n in enumerate(names)]
    base = score_entries(gold, {"entries": pred_entries}).imq
    shuffled = score_entries(gold, {"entries": [pred_entries[i] for i in order]}).imq
    assert shuffled == pytest.approx(base)


@needs_pot
def test_imq_matches_an_independent_computation_on_random_documents() -> None:
    rng = random.Random(5)
    for _ in range(20):
        gold = [entry(f"name{rng.randrange(30)}", rng.sample(range(20), 3)) for _ in range(8)]
        pred = [entry(e["name"] + rng.choice(["", "x"]), e["pages"][:2]) for e in gold[:7]]
        rng.shuffle(pred)
        n = 8
        cost = np.ones((n, n))
        for i, g in enumerate(gold):
            for j, p in enumerate(pred):
                a, b = set(map(str, g["pages"])), set(map(str, p["pages"]))
                cost[i, j] = name_distance(g["name"], p["name"]) * (1 - len(a & b) / len(a | b))
        r, c = linear_sum_assignment(cost)
        expected = 1 - cost[r, c].sum() / n
        score = score_entries({"entries": gold}, {"entries": pred})
        assert score.imq == pytest.approx(expected)
        assert score_entries({"entries": gold}, {"entries": pred}, method="emd").imq == (
            pytest.approx(expected)
        )


# ---------------------------------------------------------------- precision, recall, F1


def test_precision_recall_f1_at_the_threshold() -> None:
    gold = {"entries": [entry("Smith", [1, 2]), entry("Jones", [3]), entry("Kim", [4])]}
    pred = {
        "entries": [
            entry("smith", [1]),  # q = 1 (name equal)
            entry("Jonas", [7]),  # "jon" + "s": d_n = 1 - 2*4/10 = 0.2, d_p = 1: q = 0.8
            entry("Park", [8]),  # "k": d_n = 1 - 2/7, d_p = 1: q = 2/7 against Kim
            entry("Lee", [9]),  # spurious: paired with a dummy, q = 0
        ]
    }
    score = score_entries(gold, pred, threshold=0.75)
    assert score.qualities == pytest.approx((1.0, 0.8, 2 / 7, 0.0))
    assert score.true_positives == 2
    assert score.precision == pytest.approx(2 / 4)
    assert score.recall == pytest.approx(2 / 3)
    assert score.f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert score_entries(gold, pred, threshold=0.85).true_positives == 1
    assert score_entries(gold, pred, threshold=1.0).true_positives == 1  # q >= t, as F(t)
    assert score.metrics()["entry_f1"] == score.f1


def test_empty_documents_score_one_and_an_empty_prediction_zero() -> None:
    empty = score_entries({"entries": []}, {"entries": []})
    assert (empty.imq, empty.precision, empty.recall, empty.f1) == (1.0, 1.0, 1.0, 1.0)
    gold = {"entries": [entry("A", [1])]}
    preds: tuple[Any, ...] = (None, {"entries": []})
    for pred in preds:
        zero = score_entries(gold, pred)
        assert (zero.imq, zero.precision, zero.recall, zero.f1) == (0.0, 0.0, 0.0, 0.0)
        assert zero.problems == ()


# ---------------------------------------------------------------- configuration, bad input


def test_fields_are_configured_by_the_caller() -> None:
    fields = EntryFields(name="speaker", set="refs", list=None)
    gold = [{"speaker": "Kim", "refs": ["p1"]}]
    assert score_entries(gold, [{"speaker": "KIM ", "refs": ["p1"]}], fields).imq == 1.0


def test_a_prediction_of_the_wrong_type_scores_zero_and_says_why() -> None:
    gold = {"entries": [entry("A", [1])]}
    preds: tuple[Any, ...] = ("entries", [entry("A", [1])], {"other": []})
    for pred in preds:
        score = score_entries(gold, pred)
        assert score.imq == 0.0
        assert "$.entries" in score.problems[0]


def test_an_unreadable_predicted_entry_is_spurious_and_named() -> None:
    gold = {"entries": [entry("A", [1])]}
    pred = {"entries": [entry("A", [1]), {"name": 3, "pages": [1]}, "B", {"name": "C"}]}
    score = score_entries(gold, pred)
    assert score.imq == pytest.approx(1 / 4)
    assert score.problems == (
        "$.entries[1].name is not a string",
        "$.entries[2] is a str, not an entry",
        "$.entries[3].pages is not a list",
    )


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ({"entries": "x"}, r"gold: \$\.entries is a str"),
        ({"items": []}, r"gold: no list of entries at \$\.entries"),
        ({"entries": [entry("A", [1]), {"name": None, "pages": []}]}, r"\$\.entries\[1\]\.name"),
        (None, r"gold: no list of entries"),
    ],
)
def test_an_unreadable_gold_is_a_value_error_naming_the_place(gold: Any, message: str) -> None:
    with pytest.raises(ExtractionInputError, match=message) as caught:
        score_entries(gold, {"entries": []})
    assert isinstance(caught.value, ValueError)


def test_threshold_outside_the_unit_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="threshold"):
        score_entries({"entries": []}, {"entries": []}, threshold=1.5)


def test_every_metric_declares_its_direction_and_the_view_is_json() -> None:
    gold = {"entries": [entry("Smith", [1]), entry("Kim", [2])]}
    score = score_entries(gold, {"entries": [entry("Smyth", [1]), "junk"]})
    for name in score.metrics():
        spec = find_spec(ENTRY_METRICS, name)
        assert spec is not None and spec.direction == "higher", name
    view = json.loads(json.dumps(score.view()))
    assert [p["quality"] for p in view["pairs"]] == sorted(p["quality"] for p in view["pairs"])
    assert view["pairs"][-1] == {
        "gold": 0, "pred": 0, "gold_name": "Smith", "pred_name": "Smyth", "quality": 1.0
    }  # fmt: skip
    assert view["problems"] == ["$.entries[1] is a str, not an entry"]
