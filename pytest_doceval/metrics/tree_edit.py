"""Tree edit distance and NTED between JSON values (seed 004, "Tree Edit Distance").

**JSON to tree** (`json_to_tree`, the seed's ``json_to_tree``): every value is a node labelled by
where it hangs -- the document is ``root``, a dict value is labelled by its key, a list element
by ``[i]``. A dict's children are its values in sorted key order; a list's are its elements in
order. A scalar is a leaf labelled ``key=value`` with the value as JSON writes it (``"a b"``,
``12``, ``true``, ``null``; an integral float is written as an integer, strings in NFC), so that
``null``, ``"null"`` and ``""`` stay different. The seed gives an empty dict or list no
children and no value, which makes ``{}`` and ``[]`` the same node; here they are leaves
``key={}`` and ``key=[]``. Because elements are labelled by index, as in the seed, a list
element inserted at the front relabels every element after it: lists are ordered.

**Distance** (`tree_edit_distance`): the Zhang-Shasha ordered tree edit distance with unit
costs (insert 1, delete 1, relabel 1 when labels differ), the distance zss computes with its
defaults. **NTED** = TED / (|T1| + |T2|), in [0, 1]; 0 for identical values.
The extraction kind, which measures NTED, declares its `MetricSpec` (``nted``); this module is
the algorithm, shared with TEDS (documents kind).

**Speed.** zss takes seconds at 200 nodes; this implementation keeps Zhang-Shasha's keyroot
decomposition and its exact recurrences but computes a whole row of the forest-distance tables
of one keyroot of the first tree against *all* keyroots of the second at once, with numpy:

* a row's insertion chain ``fd[i][j] = min(a[j], fd[i][j-1] + 1)`` is a running minimum,
  ``min_k<=j (a[k] + j - k)``, so ``np.minimum.accumulate`` solves it; the second tree's
  keyroot tables are laid side by side and offset so that the running minimum restarts at
  each table's first column;
* the only dependency between those side-by-side tables is on rows of the first tree's left
  path, which read tree distances written earlier in the same row by tables of nested
  keyroots; those rows are done by levels of keyroot nesting (a handful in JSON);
* a keyroot that is a leaf needs no table: a single node against a tree T costs |T| - 1, plus
  1 when no node of T has its label.
* keyroots of the first tree at one nesting level are disjoint, so their tables are
  independent; those whose subtrees have the same shape advance together as one 2-d array (a
  table's forty ``tr`` keyroots are one step per row, not forty).

**Rename costs** (`weighted_tree_edit_distance`, for TEDS): the same algorithm with a matrix of
rename costs in [0, 1] between the two trees' nodes instead of label equality; insert and delete
stay 1. Only two places read labels: a leaf keyroot's distance to a tree T becomes |T| - 1 plus
the cheapest rename of the leaf into a node of T, and the relabel step of a left-path row reads
the matrix. The tables hold floats (exact for the unit-cost integers).

The cost is the textbook one, O(|T1| |T2| min(depth, leaves)^2), with Python work per row
instead of per cell: about 10 ms of CPU for two 200-node JSON documents, 20 ms at 300 (zss:
4 s at 200). Memory is O(|T1| |T2|) times the keyroot nesting; past `MAX_CELLS` a pair is
refused with `ExtractionInputError`. Tests check the distance against zss on hand-made and
hypothesis-generated trees and JSON.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from pytest_doceval.metrics.json_input import ExtractionInputError, check_json

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
# Rename costs between two trees' nodes in postorder: [i, j] for node i of T1 and j of T2.
RenameCosts = Callable[[Sequence["Node"], Sequence["Node"]], FloatArray]


@dataclass(frozen=True)
class Node:
    """A labelled ordered tree."""

    label: str
    children: tuple[Node, ...] = ()

    def size(self) -> int:
        count, stack = 0, [self]
        while stack:
            node = stack.pop()
            count += 1
            stack.extend(node.children)
        return count


def _scalar_text(value: Any) -> str:
    """A scalar as JSON writes it (json's own string encoder; the rest by hand, as json.dumps
    costs more than the whole tree edit distance of a small document)."""
    if isinstance(value, str):
        return encode_basestring(unicodedata.normalize("NFC", value))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def _to_tree(value: Any, label: str) -> Node:
    if isinstance(value, dict):
        if not value:
            return Node(f"{label}={{}}")
        return Node(label, tuple(_to_tree(value[k], k) for k in sorted(value)))
    if isinstance(value, list):
        if not value:
            return Node(f"{label}=[]")
        return Node(
            label,
            tuple(_to_tree(item, f"[{i}]") for i, item in enumerate(value)),
        )
    return Node(f"{label}={_scalar_text(value)}")


def json_to_tree(value: Any, *, what: str = "value") -> Node:
    """The tree of a JSON value (see the module docstring). Raises `ExtractionInputError`
    naming `what` and the path of anything that is not JSON."""
    check_json(value, what)
    try:
        return _to_tree(value, "root")
    except RecursionError:
        raise ExtractionInputError(f"{what}: nested too deeply to compare as a tree") from None


@dataclass(frozen=True)
class _Flat:
    """A tree in postorder: label ids, and the leftmost leaf of each node's subtree (so the
    subtree of node j is the postorder range lml[j]..j)."""

    labels: IntArray
    lml: IntArray

    @property
    def n(self) -> int:
        return len(self.labels)

    @property
    def size(self) -> IntArray:
        """Subtree sizes."""
        return np.arange(self.n) - self.lml + 1

    def inner_keyroots(self) -> list[int]:
        """Keyroots (the highest node of each leftmost leaf) that are not leaves, ascending."""
        last = {leaf: k for k, leaf in enumerate(self.lml.tolist())}
        return sorted(k for leaf, k in last.items() if k != leaf)

    def left_path(self, k: int) -> IntArray:
        """The nodes of k's subtree that share its leftmost leaf (k's left path)."""
        low = int(self.lml[k])
        return low + np.flatnonzero(self.lml[low : k + 1] == low)


def _flatten(root: Node, ids: dict[str, int], nodes: list[Node] | None = None) -> _Flat:
    """`root` in postorder; `nodes`, when given, receives the nodes in that order."""
    labels: list[int] = []
    lml: list[int] = []
    # Iterative postorder. When a node is expanded, the next postorder index is its leftmost
    # leaf's, since the first node emitted from its subtree is that leaf.
    stack: list[tuple[Node, int]] = [(root, -1)]
    while stack:
        node, first = stack.pop()
        if first >= 0 or not node.children:
            lml.append(first if first >= 0 else len(labels))
            labels.append(ids.setdefault(node.label, len(ids)))
            if nodes is not None:
                nodes.append(node)
            continue
        stack.append((node, len(labels)))
        stack.extend((child, -1) for child in reversed(node.children))
    return _Flat(np.asarray(labels, dtype=np.int64), np.asarray(lml, dtype=np.int64))


def _contains(labels: IntArray, t: _Flat) -> npt.NDArray[np.bool_]:
    """[q, j]: whether label ``labels[q]`` occurs in the subtree of node j of `t`."""
    seen = np.zeros((len(labels), t.n + 1), dtype=np.int64)
    np.cumsum(labels[:, None] == t.labels[None, :], axis=1, out=seen[:, 1:])
    return seen[:, np.arange(1, t.n + 1)] > seen[:, t.lml]


def _subtree_min(costs: FloatArray, t: _Flat, axis: int) -> FloatArray:
    """`costs` with each entry for a node j of `t` (along `axis`) replaced by the least entry
    over the nodes of j's subtree. In postorder a subtree is the range lml[j]..j: one
    reduction per inner node, over contiguous memory either way."""
    out = costs.copy()
    for j in np.flatnonzero(t.lml != np.arange(t.n)).tolist():
        low = int(t.lml[j])
        if axis == 1:
            out[:, j] = costs[:, low : j + 1].min(axis=1)
        else:
            out[j] = costs[low : j + 1].min(axis=0)
    return out


def _leaf_distances(t1: _Flat, t2: _Flat, td: FloatArray, rename: FloatArray | None) -> None:
    """Tree distances that need no table: a single node against a tree T costs |T| - 1 (insert
    the rest) plus the cheapest rename of it into a node of T (with rename costs at most 1,
    keeping it as some node beats deleting it and inserting all of T). With unit costs that
    rename is free when some node of T has its label, else 1. Fills td's rows of T1's leaves
    and columns of T2's."""
    leaves1 = np.flatnonzero(t1.lml == np.arange(t1.n))
    leaves2 = np.flatnonzero(t2.lml == np.arange(t2.n))
    if rename is None:
        td[leaves1, :] = t2.size[None, :] - _contains(t1.labels[leaves1], t2)
        td[:, leaves2] = t1.size[:, None] - _contains(t2.labels[leaves2], t1).T
        return
    td[leaves1, :] = t2.size[None, :] - 1 + _subtree_min(rename[leaves1], t2, axis=1)
    td[:, leaves2] = t1.size[:, None] - 1 + _subtree_min(rename[:, leaves2], t1, axis=0)


# Stands for "no such edit" in the tables: far above any distance, far below overflow.
_NEVER = 1 << 40


@dataclass(frozen=True)
class _Group:
    """The columns of one nesting level (a slice), and what a left-path row needs of them."""

    start: int
    stop: int
    inner: IntArray  # columns off their table's left path
    inner_base: IntArray
    inner_node: IntArray
    left: IntArray  # node columns on their table's left path: they settle tree distances
    left_node: IntArray
    left_offset: IntArray


@dataclass(frozen=True)
class _Columns:
    """T2's non-leaf keyroot tables side by side, in order of nesting level: per keyroot, an
    empty-forest column and one column per node of its subtree, in postorder.

    A table holds H = fd - offset - r, with offset = (position in its table) + (table
    number) * big and r the row. In H a table's insertion chain is a plain running minimum
    that restarts at each table, since every value of a later table is below every value of
    an earlier one; and deleting T1's node is just the previous row. Reading a tree distance
    td[i][j] and the forest before both subtrees becomes H[lml(i)-1][lcol] + tree_row[i]."""

    offset: IntArray
    first_row: IntArray  # H of the empty T1 forest: fd = position (insert the T2 forest)
    node: IntArray  # T2 node per column (0 for an empty-forest column: never read)
    lcol: IntArray  # column of lml(node) - 1 in the same table
    delta: IntArray  # offset[lcol] - offset, or _NEVER for an empty-forest column
    left: IntArray  # node columns on their table's left path
    left_label: IntArray
    left_node: IntArray  # T2 node of each of those columns
    groups: tuple[_Group, ...]

    def tree_rows(self, td_rows: FloatArray, size: IntArray) -> FloatArray:
        """td rows of T1 nodes (whose values are final) as non-left-path rows read them."""
        return td_rows.take(self.node, axis=1) + self.delta - size[:, None]


def _levels(t2: _Flat, keyroots: list[int]) -> dict[int, int]:
    """Nesting level of each keyroot: 0 with no keyroot below it, else one more than the
    highest below. A left-path row of a table reads tree distances that the tables of the
    keyroots below it write in the same row, so lower levels go first."""
    level: dict[int, int] = {}
    for k in keyroots:  # ascending: every keyroot below k comes first
        below = [v for j, v in level.items() if t2.lml[k] <= j < k]
        level[k] = max(below, default=-1) + 1
    return level


def _columns(t2: _Flat, big: int) -> _Columns:
    keyroots = t2.inner_keyroots()
    level = _levels(t2, keyroots)
    lml = t2.lml.tolist()
    node: list[int] = []
    pos: list[int] = []
    table: list[int] = []
    lcol: list[int] = []
    left: list[bool] = []
    edges: list[int] = []  # first column of each level
    for number, k in enumerate(sorted(keyroots, key=lambda k: (level[k], k))):
        low, start = lml[k], len(node)
        if level[k] == len(edges):
            edges.append(start)
        node.extend([0, *range(low, k + 1)])
        pos.extend(range(k - low + 2))
        table.extend([number] * (k - low + 2))
        lcol.extend([start] + [start + lml[j] - low for j in range(low, k + 1)])
        left.extend([False] + [lml[j] == low for j in range(low, k + 1)])
    edges.append(len(node))
    node_a, pos_a = np.asarray(node, dtype=np.int64), np.asarray(pos, dtype=np.int64)
    lcol_a = np.asarray(lcol, dtype=np.int64)
    offset = pos_a + np.asarray(table, dtype=np.int64) * big
    empty = pos_a == 0
    on_left = np.asarray(left, dtype=bool)
    inner = ~empty & ~on_left
    left_cols = np.flatnonzero(on_left)
    base = pos_a[lcol_a] - offset
    groups = []
    for start, stop in itertools.pairwise(edges):
        inner_cols = start + np.flatnonzero(inner[start:stop])
        left_g = start + np.flatnonzero(on_left[start:stop])
        groups.append(
            _Group(
                start=start,
                stop=stop,
                inner=inner_cols,
                inner_base=base[inner_cols],
                inner_node=node_a[inner_cols],
                left=left_g,
                left_node=node_a[left_g],
                left_offset=offset[left_g],
            )
        )
    return _Columns(
        offset=offset,
        first_row=pos_a - offset,
        node=node_a,
        lcol=np.where(empty, np.arange(len(node)), lcol_a),
        delta=np.where(empty, _NEVER, offset[lcol_a] - offset),
        left=left_cols,
        left_label=t2.labels[node_a[left_cols]],
        left_node=node_a[left_cols],
        groups=tuple(groups),
    )


def _keyroot_tables(
    ks: list[int],
    t1: _Flat,
    cols: _Columns,
    td: FloatArray,
    tdh: FloatArray,
    rename: FloatArray | None,
) -> None:
    """Zhang-Shasha's forest distances for keyroots `ks` of T1 against every non-leaf keyroot
    of T2 at once, one row (a node i of each k's subtree) at a time. The keyroots of `ks` are
    disjoint and their subtrees have the same shape (`_batches`), so their tables advance
    together as one 2-d array: the rows of a table's forty ``tr`` keyroots are one step each.
    Writes the tree distances they settle into `td`, and into `tdh` the rows later tables read
    (see `_Columns.tree_rows`)."""
    lml1 = t1.lml.tolist()
    low0, k0 = lml1[ks[0]], ks[0]
    lows = np.asarray([lml1[k] for k in ks], dtype=np.int64)
    width = len(cols.offset)
    h = np.empty((k0 - low0 + 2, len(ks), width), dtype=np.float64)
    h[0] = cols.first_row
    buf = np.empty((len(ks), width), dtype=np.float64)
    for r in range(1, k0 - low0 + 2):
        nodes = lows + (r - 1)
        prev, cur = h[r - 1], h[r]
        forest = lml1[low0 + r - 1] - low0
        if forest != 0:  # a forest ending in i's subtree, whose tree distances are known
            np.take(h[forest], cols.lcol, axis=1, out=buf)
            buf += tdh[nodes]
            np.minimum(buf, prev, out=buf)
            np.minimum.accumulate(buf, axis=1, out=cur)
            continue
        # On k's left path: where T2's node is on its table's left path too, the cell is a
        # tree-to-tree one (relabel); elsewhere it reads tree distances of this very row,
        # written by the tables of lower levels, so those go first.
        a = prev.copy()
        lc = cols.left
        if rename is None:
            relabel = cols.left_label[None, :] != t1.labels[nodes][:, None]
        else:
            relabel = rename[nodes[:, None], cols.left_node[None, :]]
        a[:, lc] = np.minimum(a[:, lc], prev[:, lc - 1] + relabel - 2)
        rows = td[nodes]
        for grp in cols.groups:
            inner = rows[:, grp.inner_node] + (grp.inner_base - r)
            a[:, grp.inner] = np.minimum(a[:, grp.inner], inner)
            np.minimum.accumulate(
                a[:, grp.start : grp.stop], axis=1, out=cur[:, grp.start : grp.stop]
            )
            rows[:, grp.left_node] = cur[:, grp.left] + grp.left_offset + r
        td[nodes] = rows
    for k in ks:
        path = t1.left_path(k)
        tdh[path] = cols.tree_rows(td[path], t1.size[path])


def _batches(t: _Flat, keyroots: list[int]) -> list[list[int]]:
    """Keyroots grouped for `_keyroot_tables`: by nesting level (a keyroot's table reads tree
    distances that the tables of keyroots below it write), then by the shape of their subtree
    (the leftmost-leaf pattern relative to its first node). Keyroots of one level are
    disjoint, so a batch's tables are independent."""
    level = _levels(t, keyroots)
    lml = t.lml
    batches: dict[tuple[int, bytes], list[int]] = {}
    for k in keyroots:
        low = int(lml[k])
        shape = (lml[low : k + 1] - low).tobytes()
        batches.setdefault((level[k], shape), []).append(k)
    return [batches[key] for key in sorted(batches, key=lambda key: key[0])]


# Zhang-Shasha keeps a tree distance per pair of nodes, and here a row per T1 node over all of
# T2's tables: past this many cells (8 bytes each) a pair is refused rather than risk memory.
# Two JSON documents of about 3,000 nodes each fit (measured: 2,173 x 2,028 nodes, 1.4 s and
# 370 MB).
MAX_CELLS: Final = 60_000_000


def _flat_distance(t1: _Flat, t2: _Flat, rename: FloatArray | None = None) -> float:
    """Zhang-Shasha's distance with insert and delete 1 and rename 1 between different labels,
    or `rename`[i, j] (in [0, 1]) between node i of T1 and j of T2 when given."""
    keyroots1 = t1.inner_keyroots()
    cols = _columns(t2, big=2 * (t1.n + t2.n) + 4) if keyroots1 and t2.n > 1 else None
    cells = t1.n * (t2.n + (0 if cols is None else len(cols.offset)))
    if cells > MAX_CELLS:
        raise ExtractionInputError(
            f"trees of {t1.n} and {t2.n} nodes are too large for an exact tree edit distance "
            f"({cells:,} table cells, limit {MAX_CELLS:,})"
        )
    td = np.zeros((t1.n, t2.n), dtype=np.float64)
    _leaf_distances(t1, t2, td, rename)
    if cols is not None:
        # Rows later tables read, as they read them; those of T1's leaves are final already.
        tdh = np.empty((t1.n, len(cols.offset)), dtype=np.float64)
        leaves = np.flatnonzero(t1.lml == np.arange(t1.n))
        tdh[leaves] = cols.tree_rows(td[leaves], t1.size[leaves])
        for batch in _batches(t1, keyroots1):
            _keyroot_tables(batch, t1, cols, td, tdh, rename)
    return float(td[t1.n - 1, t2.n - 1])


def _row_work(t: _Flat) -> int:
    """Table rows a tree costs as T1: the subtree sizes of its non-leaf keyroots."""
    return int(t.size[t.inner_keyroots()].sum())


def tree_edit_distance(a: Node, b: Node) -> int:
    """Zhang-Shasha tree edit distance with unit costs (the distance zss computes)."""
    ids: dict[str, int] = {}
    t1, t2 = _flatten(a, ids), _flatten(b, ids)
    # The distance is symmetric with unit costs, and the Python work grows with T1's rows.
    if _row_work(t2) < _row_work(t1):
        t1, t2 = t2, t1
    return round(_flat_distance(t1, t2))


def weighted_tree_edit_distance(a: Node, b: Node, rename: RenameCosts) -> float:
    """Zhang-Shasha tree edit distance with insert and delete cost 1 and the rename costs
    ``rename(nodes_a, nodes_b)`` gives for the two trees' nodes in postorder (a matrix of
    values in [0, 1], symmetric as a cost: renaming x into y costs what y into x does)."""
    ids: dict[str, int] = {}
    nodes_a: list[Node] = []
    nodes_b: list[Node] = []
    t1, t2 = _flatten(a, ids, nodes_a), _flatten(b, ids, nodes_b)
    costs = np.asarray(rename(nodes_a, nodes_b), dtype=np.float64)
    if costs.shape != (t1.n, t2.n):
        raise ValueError(f"rename costs of shape {costs.shape}, expected {(t1.n, t2.n)}")
    if _row_work(t2) < _row_work(t1):
        return _flat_distance(t2, t1, np.ascontiguousarray(costs.T))
    return _flat_distance(t1, t2, costs)


@dataclass(frozen=True)
class TreeEditScore:
    """TED between two JSON values with the tree sizes: NTED = distance / (size_a + size_b)."""

    distance: int
    size_gold: int
    size_pred: int

    @property
    def nted(self) -> float:
        return self.distance / (self.size_gold + self.size_pred)

    def metrics(self) -> dict[str, float]:
        return {"nted": self.nted}


def tree_edit_score(gold: Any, pred: Any) -> TreeEditScore:
    """TED and tree sizes of two JSON values. Raises `ExtractionInputError` (a ValueError)
    naming the side and path of a value JSON cannot hold."""
    a, b = json_to_tree(gold, what="gold"), json_to_tree(pred, what="prediction")
    return TreeEditScore(tree_edit_distance(a, b), a.size(), b.size())


def nted(gold: Any, pred: Any) -> float:
    """Normalised tree edit distance of two JSON values, in [0, 1] (lower is better)."""
    return tree_edit_score(gold, pred).nted
