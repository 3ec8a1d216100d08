"""TEDS and TEDS-S: tree-edit-distance similarity of two tables (PubTabNet; issue 20).

A `Table` (see `table_trees`) becomes PubTabNet's tree: ``table`` > ``thead``/``tbody``/
``tfoot`` as written > ``tr`` > ``td``, a cell carrying its colspan, rowspan and text (header
cells are ``td`` too: PubTabNet's trees have no ``th``).

**TEDS** = 1 - TED(T_a, T_b) / max(|T_a|, |T_b|), where TED is the ordered tree edit distance
with insert and delete cost 1 and rename cost: 1 between nodes of different tags or spans; 0
between two equal non-cell nodes; between two cells of the same spans, the normalised
Levenshtein distance of their texts (edits / the longer text, by characters: rapidfuzz's
``Levenshtein.normalized_distance``; 0 for two empty cells). |T| counts every element below
``<table>`` (``thead``, ``tbody``, ``tr``, ``td``), not the root, as PubTabNet's reference
implementation does (``len(tree.xpath(".//*"))``). **TEDS-S** is the same with every cell's
text left out: structure only.

TEDS can be negative in principle (two trees of very different shapes can be further apart than
the larger one's size); it is clipped at 0, "nothing in common". The distance itself is the
vectorised Zhang-Shasha of `tree_edit` with a rename-cost matrix; tests check it against the
``apted`` package with PubTabNet's cost rules written separately.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from pytest_doceval.kinds.documents.table_trees import Row, Table
from pytest_doceval.metrics.tree_edit import FloatArray, Node, weighted_tree_edit_distance


@dataclass(frozen=True)
class CellNode(Node):
    """A ``td`` node: its label holds tag and spans, `text` its content."""

    text: str = ""


def table_tree(table: Table, *, structure_only: bool = False) -> Node:
    """PubTabNet's tree of `table` (module docstring). Labels are ``tag`` for structure nodes
    and ``td colspan rowspan`` for cells, so two nodes rename for free only with equal labels
    (and, for cells, equal texts)."""

    def row(cells: Row) -> Node:
        return Node(
            "tr",
            tuple(
                CellNode(f"td {c.colspan} {c.rowspan}", (), "" if structure_only else c.text)
                for c in cells
            ),
        )

    children: list[Node] = []
    for group in table.groups:
        rows = [row(r) for r in group.rows]
        if group.tag:
            children.append(Node(group.tag, tuple(rows)))
        else:
            children.extend(rows)
    return Node("table", tuple(children))


def rename_costs(nodes_a: Sequence[Node], nodes_b: Sequence[Node]) -> FloatArray:
    """[i, j]: the cost of renaming node i of one tree into node j of the other (module
    docstring). The text distances of all cell pairs come from one rapidfuzz ``cdist``."""
    ids: dict[str, int] = {}
    labels_a = np.array([ids.setdefault(n.label, len(ids)) for n in nodes_a])
    labels_b = np.array([ids.setdefault(n.label, len(ids)) for n in nodes_b])
    costs: FloatArray = (labels_a[:, None] != labels_b[None, :]).astype(np.float64)
    texts_a = [n.text if isinstance(n, CellNode) else "" for n in nodes_a]
    texts_b = [n.text if isinstance(n, CellNode) else "" for n in nodes_b]
    if any(texts_a) or any(texts_b):  # else structure only, or no text: labels decide
        # Non-cell nodes have no text: against each other the text term is 0, and against a
        # cell the labels differ anyway (cost 1).
        text = cdist(texts_a, texts_b, scorer=Levenshtein.normalized_distance, dtype=np.float64)
        np.maximum(costs, text, out=costs)
    return costs


@dataclass(frozen=True)
class TedsScore:
    distance: float
    size_a: int
    size_b: int

    @property
    def teds(self) -> float:
        size = max(self.size_a, self.size_b)
        return 1.0 if size == 0 else max(0.0, 1.0 - self.distance / size)


def teds_score(a: Table, b: Table, *, structure_only: bool = False) -> TedsScore:
    """The tree edit distance of two tables and their sizes |T| (nodes below the root)."""
    tree_a = table_tree(a, structure_only=structure_only)
    tree_b = table_tree(b, structure_only=structure_only)
    distance = weighted_tree_edit_distance(tree_a, tree_b, rename_costs)
    return TedsScore(distance, tree_a.size() - 1, tree_b.size() - 1)


def teds(a: Table, b: Table) -> float:
    """TEDS of two tables, in [0, 1] (higher is better)."""
    return teds_score(a, b).teds


def teds_s(a: Table, b: Table) -> float:
    """TEDS-S: TEDS on structure only (cell texts left out)."""
    return teds_score(a, b, structure_only=True).teds
