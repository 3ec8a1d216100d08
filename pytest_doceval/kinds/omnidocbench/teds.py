"""TEDS and TEDS-S as OmniDocBench v1.6 computes them on one (prediction, truth) table pair.

This is PubTabNet's TEDS as OmniDocBench ships it (``src/metrics/table_metric.py``), which
differs from the documents kind's fair reading (`kinds/documents/teds.py`) in ways that move
numbers, so it has its own home here:

- both strings are parsed by lxml's HTML parser (libxml2's error recovery decides what a
  malformed prediction means), comments dropped; a side without ``<body><table>`` scores 0, as
  does an empty side or one whose ``colspan``/``rowspan`` is not an integer (the reference's
  error path: "the score is set to 0");
- the tree is every element below ``<table>`` down to the cells (``td``; a cell's inner tags are
  not nodes), a cell's content being its *tokens*: ``<tag>``, each character, ``</tag>`` of
  everything inside it, in document order;
- rename costs 1 between nodes of different tag or spans, the normalised Levenshtein distance
  of two cells' token lists (0 when both are empty), else 0; insert and delete cost 1;
- TEDS = 1 - distance / max(n_pred, n_truth), where n counts *every* element below
  ``<table>``, inner cell tags included: not the tree's size, and not clipped at 0;
- TEDS-S is the same with every cell's content left empty.

The distance is the exact optimal tree edit distance (our vectorised Zhang-Shasha,
`metrics.tree_edit`; the reference uses APTED, which computes the same optimum).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from lxml import etree, html
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from pytest_doceval.metrics.tree_edit import FloatArray, Node, weighted_tree_edit_distance


@dataclass(frozen=True)
class _Cell(Node):
    tokens: tuple[str, ...] = ()


def _tokens(node: Any, out: list[str]) -> None:
    out.append(f"<{node.tag}>")
    if node.text is not None:
        out.extend(node.text)
    for child in node.getchildren():
        _tokens(child, out)
    if node.tag != "unk":
        out.append(f"</{node.tag}>")
    if node.tag != "td" and node.tail is not None:
        out.extend(node.tail)


def _tree(node: Any, structure_only: bool) -> Node:
    if node.tag == "td":
        colspan = int(node.attrib.get("colspan", "1"))
        rowspan = int(node.attrib.get("rowspan", "1"))
        tokens: list[str] = []
        if not structure_only:
            _tokens(node, tokens)
        return _Cell(f"td {colspan} {rowspan}", (), tuple(tokens[1:-1]))
    return Node(str(node.tag), tuple(_tree(child, structure_only) for child in node.getchildren()))


def _token_strings(nodes: Sequence[Node], codes: dict[str, str]) -> list[str]:
    # Each distinct token becomes one character (from U+10000 up, clear of surrogates), so
    # that rapidfuzz's string distance counts token edits: the same number as on the lists.
    return [
        "".join(codes.setdefault(t, chr(0x10000 + len(codes))) for t in n.tokens)
        if isinstance(n, _Cell)
        else ""
        for n in nodes
    ]


def _rename_costs(nodes_a: Sequence[Node], nodes_b: Sequence[Node]) -> FloatArray:
    ids: dict[str, int] = {}
    labels_a = np.array([ids.setdefault(n.label, len(ids)) for n in nodes_a])
    labels_b = np.array([ids.setdefault(n.label, len(ids)) for n in nodes_b])
    same_label = labels_a[:, None] == labels_b[None, :]
    costs: FloatArray = (~same_label).astype(np.float64)
    codes: dict[str, str] = {}
    texts_a, texts_b = _token_strings(nodes_a, codes), _token_strings(nodes_b, codes)
    if not codes:  # structure only, or no cell has content: labels decide
        return costs
    lengths_a = np.array([len(t) for t in texts_a])
    lengths_b = np.array([len(t) for t in texts_b])
    longest = np.maximum(lengths_a[:, None], lengths_b[None, :])
    # Only cells carry tokens, and a cell's label differs from every other node's; two cells
    # of equal spans cost their token distance over the longer list, 0 when both are empty.
    scored = same_label & (longest > 0)
    distances = cdist(texts_a, texts_b, scorer=Levenshtein.distance, dtype=np.int64)
    costs[scored] = distances[scored] / longest[scored]
    return costs


def _table(markup: str) -> Any | None:
    parser = html.HTMLParser(remove_comments=True, encoding="utf-8")
    tables = html.fromstring(markup, parser=parser).xpath("body/table")
    return tables[0] if tables else None


def _score(pred: Any, true: Any, structure_only: bool) -> float:
    n_nodes = max(len(pred.xpath(".//*")), len(true.xpath(".//*")))
    distance = weighted_tree_edit_distance(
        _tree(pred, structure_only), _tree(true, structure_only), _rename_costs
    )
    return 1.0 - distance / n_nodes


def teds_pair(prediction: str, truth: str) -> tuple[float, float]:
    """(TEDS, TEDS-S) of a predicted table against the truth, both as normalised HTML."""
    if not prediction or not truth:
        return 0.0, 0.0
    try:
        pred, true = _table(prediction), _table(truth)
        if pred is None or true is None:
            return 0.0, 0.0
        return _score(pred, true, False), _score(pred, true, True)
    except (ValueError, ZeroDivisionError, etree.ParserError):
        # An unparsable side, a non-integer span or a table with no element at all: the
        # reference catches the exception and sets both scores to 0.
        return 0.0, 0.0
