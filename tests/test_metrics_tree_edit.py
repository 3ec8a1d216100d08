"""Tree edit distance and NTED (seed 004): the JSON-to-tree conversion by hand, and the fast
Zhang-Shasha against zss (the reference) on hand-made, hypothesis-generated and JSON trees."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.extraction.suite import ExtractionSuite
from pytest_doceval.metrics import tree_edit as tree_edit_module
from pytest_doceval.metrics.json_input import ExtractionInputError
from pytest_doceval.metrics.spec import find_spec
from pytest_doceval.metrics.tree_edit import (
    Node,
    json_to_tree,
    nted,
    tree_edit_distance,
    tree_edit_score,
)


def reference(a: Node, b: Node) -> int:
    """zss, the reference Zhang-Shasha (a test dependency: without it these tests skip)."""
    zss = pytest.importorskip("zss")

    def to_zss(node: Node) -> Any:
        out = zss.Node(node.label)
        for child in node.children:
            out.addkid(to_zss(child))
        return out

    return int(zss.simple_distance(to_zss(a), to_zss(b)))


def tree(spec: Any) -> Node:
    """("label", [children...]) or "label" for a leaf."""
    if isinstance(spec, str):
        return Node(spec)
    label, children = spec
    return Node(label, tuple(tree(c) for c in children))


# ---------------------------------------------------------------- JSON to tree


def test_json_to_tree_follows_the_seed() -> None:
    value = {"b": [1, {"c": None}], "a": "x y", "e": {}, "f": [], "g": 2.0, "h": True}
    assert json_to_tree(value) == Node(
        "root",
        (
            Node('a="x y"'),
            Node("b", (Node("[0]=1"), Node("[1]", (Node("c=null"),)))),
            Node("e={}"),
            Node("f=[]"),
            Node("g=2"),
            Node("h=true"),
        ),
    )
    assert json_to_tree("text") == Node('root="text"')
    assert json_to_tree(None) != json_to_tree("null") != json_to_tree("")


def test_json_to_tree_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(ExtractionInputError, match=r"prediction: value at \$\.a is a tuple"):
        json_to_tree({"a": (1, 2)}, what="prediction")


# ---------------------------------------------------------------- distance, by hand and vs zss


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("a", "a", 0),
        ("a", "b", 1),
        (("a", ["b"]), "a", 1),
        # zss's README example (the trees of Zhang & Shasha's paper): 2 edits
        (
            ("f", [("d", ["a", ("c", ["b"])]), "e"]),
            ("f", [("c", [("d", ["a", "b"])]), "e"]),
            2,
        ),
        (("r", ["a", "b", "c"]), ("r", ["c", "b", "a"]), 2),
        (("r", ["a", ("x", ["b", "c"])]), ("r", ["a", "b", "c"]), 1),
    ],
)
def test_distance_on_small_trees(a: Any, b: Any, expected: int) -> None:
    ta, tb = tree(a), tree(b)
    assert tree_edit_distance(ta, tb) == expected == reference(ta, tb)
    assert tree_edit_distance(tb, ta) == expected


labels = st.sampled_from("abcd")


def trees(max_leaves: int = 14) -> st.SearchStrategy[Node]:
    return st.recursive(
        labels.map(Node),
        lambda kids: st.tuples(labels, st.lists(kids, min_size=1, max_size=4)).map(
            lambda t: Node(t[0], tuple(t[1]))
        ),
        max_leaves=max_leaves,
    )


@given(trees(), trees())
@settings(max_examples=250, deadline=None)
def test_equals_zss_on_generated_trees(a: Node, b: Node) -> None:
    assert tree_edit_distance(a, b) == reference(a, b)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["x", "y", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=12,
)


@given(json_values, json_values)
@settings(max_examples=200, deadline=None)
def test_equals_zss_on_generated_json(a: Any, b: Any) -> None:
    ta, tb = json_to_tree(a), json_to_tree(b)
    assert tree_edit_distance(ta, tb) == reference(ta, tb)


def test_deep_and_wide_random_trees_equal_zss() -> None:
    rng = random.Random(11)
    for n, window in ((40, 3), (60, 60), (50, 1)):  # deep, flat, a path
        kids: list[list[int]] = [[] for _ in range(n)]
        for i in range(1, n):
            kids[rng.randrange(max(0, i - window), i)].append(i)
        names = [rng.choice("abc") for _ in range(n)]

        def build(i: int, kids: list[list[int]] = kids, names: list[str] = names) -> Node:
            return Node(names[i], tuple(build(c) for c in kids[i]))

        a = build(0)
        b = Node("a", (a, Node("b")))
        assert tree_edit_distance(a, b) == reference(a, b) == 2


def invoice(rng: random.Random, items: int, noise: float) -> dict[str, Any]:
    def value(text: str) -> str:
        return text + "x" if rng.random() < noise else text

    doc: dict[str, Any] = {f"h{k}": value(f"v{k}") for k in range(8)}
    doc["items"] = [{f"f{k}": value(f"{i}-{k}") for k in range(6)} for i in range(items)]
    return doc


def test_equals_zss_on_an_invoice_of_about_a_hundred_nodes() -> None:
    rng = random.Random(2)
    gold = invoice(rng, 13, 0.0)
    pred = invoice(rng, 13, 0.2)
    del pred["items"][4]
    pred["items"].insert(9, {"f0": "new"})
    a, b = json_to_tree(gold), json_to_tree(pred)
    assert a.size() > 100
    assert tree_edit_distance(a, b) == reference(a, b)


# ---------------------------------------------------------------- NTED


def test_nted_normalises_by_both_sizes() -> None:
    score = tree_edit_score({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4})
    # gold: root, a=1, b=2 (3 nodes); pred: root, a=1, b=3, c=4 (4): relabel b, insert c
    assert (score.distance, score.size_gold, score.size_pred) == (2, 3, 4)
    assert score.nted == pytest.approx(2 / 7)
    assert score.metrics() == {"nted": pytest.approx(2 / 7)}


@given(json_values, json_values)
@settings(max_examples=100, deadline=None)
def test_nted_is_a_bounded_symmetric_distance(a: Any, b: Any) -> None:
    assert 0.0 <= nted(a, b) <= 1.0
    assert nted(a, b) == pytest.approx(nted(b, a))
    assert nted(a, a) == 0.0


def test_an_empty_or_wrong_type_prediction_is_far_not_an_error() -> None:
    gold = {"a": 1, "b": [1, 2]}
    assert nted(gold, None) == pytest.approx(5 / 6)  # relabel the root, delete 4
    assert nted(gold, {}) == pytest.approx(5 / 6)
    assert nted(gold, "text") == pytest.approx(5 / 6)


def test_a_pair_too_large_for_memory_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_edit_module, "MAX_CELLS", 100)
    with pytest.raises(ExtractionInputError, match="21 and 21 nodes are too large"):
        nted({"a": list(range(19))}, {"a": list(range(19))})


def test_nted_declares_lower_is_better() -> None:
    spec = find_spec(ExtractionSuite.metrics, "nted")
    assert spec is not None and spec.direction == "lower"
