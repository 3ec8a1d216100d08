"""Headings: ``heading_hierarchy`` (levels and text), and opendataloader-bench's MHS and MHS-S.

**MHS, MHS-S** are opendataloader-bench's Markdown Hierarchical Similarity
(``src/evaluator_heading_level.py`` at b4b9505, MIT; README section 3.3), computed as it
computes them so that its leaderboard's numbers can be quoted: the text, its markdown tables
written as HTML (`odl_tables`), is read line by line; a line ``^(#{1,6})\\s+(.*)$`` is a heading
(inside a code fence too), and the other non-blank lines up to the next heading form one
content node (their whitespace-folded lines joined by a space). The tree is flat: the document
root holds any content before the first heading, then every heading, each holding its content
node -- heading levels play no part. MHS = 1 - TED / max(|T_truth|, |T_output|), counting every
node, the root included; TED has insert and delete cost 1, rename 1 between a heading and a
content node and otherwise the normalised Levenshtein distance of the texts (edits / the longer
text). MHS-S renames for free between nodes of one kind: structure only. Both are clipped to
[0, 1]; a truth without headings has neither, an output without headings scores 0 in both, as
there.

**heading_hierarchy** is this project's score of the hierarchy a chunker builds from headings,
which MHS leaves out: the same tree edit similarity (MHS's, after TEDS, Zhong et al. 2020) on
the *heading tree* -- each ATX heading a child of the nearest heading above it with a smaller
level (``#`` < ``##``), or of the document's root -- with headings only, no content nodes:

    heading_hierarchy = 1 - TED(H_truth, H_output) / max(|H_truth|, |H_output|)

|H| counting the headings (not the root), rename cost the normalised Levenshtein distance of two
headings' texts, insert and delete 1; clipped at 0. A heading is read as the structure metric
reads one (`structure`, seed 000's ``^#{1,6}\\s+`` outside code fences; its text without closing
``#``s and pandoc attributes, NFKC, emphasis and links removed, whitespace folded, case folded).
Levels count only through the nesting they make: an output that writes every level one deeper
(``##`` for the truth's ``#``) has the same tree and scores 1; a heading one level too high or
low moves under another parent and costs a delete and an insert (2), a heading missing costs 1
(its children move up to its parent), a misspelt one its text distance. A truth without headings
has no ``heading_hierarchy`` (nothing to find); an output without headings scores 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pytest_doceval.kinds.documents.odl_tables import squeezed, with_html_tables
from pytest_doceval.kinds.documents.structure import element_text
from pytest_doceval.kinds.documents.teds import CellNode, rename_costs
from pytest_doceval.metrics.spec import SHARE, MetricSpec
from pytest_doceval.metrics.tree_edit import FloatArray, Node, weighted_tree_edit_distance
from pytest_doceval.text import markdown as md
from pytest_doceval.text.normalise import unify_line_endings

HEADING_METRICS: Final[Mapping[str, MetricSpec]] = {
    "heading_hierarchy": MetricSpec(
        "higher",
        bounds=SHARE,
        description="tree edit similarity of the heading trees (each heading under the nearest "
        "shallower one above it): levels through the nesting, texts by edit distance",
        threshold=0.5,
    ),
    "mhs": MetricSpec(
        "higher",
        headline=False,
        bounds=SHARE,
        description="opendataloader-bench's MHS: flat tree of headings and their content, "
        "tree edit similarity with texts (levels ignored)",
    ),
    "mhs_s": MetricSpec(
        "higher",
        headline=False,
        bounds=SHARE,
        description="opendataloader-bench's MHS-S: MHS on the tree's shape only",
    ),
}
_ODL_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


@dataclass(frozen=True)
class HeadingScores:
    metrics: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _similarity(a: Node, b: Node, size: int, *, text: bool = True) -> float:
    costs = rename_costs if text else _shape_costs
    distance = weighted_tree_edit_distance(a, b, costs)
    return min(1.0, max(0.0, 1.0 - distance / size)) if size else 1.0


def _shape_costs(nodes_a: Sequence[Node], nodes_b: Sequence[Node]) -> FloatArray:
    """Rename costs of the trees' shapes: the node kinds alone (texts left out)."""
    return rename_costs([Node(n.label) for n in nodes_a], [Node(n.label) for n in nodes_b])


# ------------------------------------------------------------------------ MHS (opendataloader)


def mhs_tree(markdown: str) -> tuple[Node, int, int]:
    """opendataloader-bench's flat heading/content tree of `markdown` (module docstring), its
    node count (root included) and its number of headings."""
    root: list[Node] = []
    current: list[Node] = root
    sections: list[tuple[str, list[Node]]] = []
    pending: list[str] = []

    def flush() -> None:
        content = squeezed(" ".join(pending))
        if content:
            current.append(CellNode("content", (), content))
        pending.clear()

    for line in with_html_tables(markdown).splitlines():
        if match := _ODL_HEADING.match(line):
            flush()
            current = []
            sections.append((squeezed(match.group(2)), current))
        elif folded := squeezed(line):
            pending.append(folded)
    flush()
    children = [*root, *(CellNode("heading", tuple(kids), text) for text, kids in sections)]
    tree = Node("document", tuple(children))
    return tree, tree.size(), len(sections)


def mhs(truth: str, output: str) -> dict[str, float]:
    """``mhs`` and ``mhs_s`` (module docstring): none for a truth without headings."""
    truth_tree, truth_size, truth_headings = mhs_tree(truth)
    if not truth_headings:
        return {}
    output_tree, output_size, output_headings = mhs_tree(output)
    if not output_headings:
        return {"mhs": 0.0, "mhs_s": 0.0}
    size = max(truth_size, output_size, 1)
    return {
        "mhs": _similarity(truth_tree, output_tree, size),
        "mhs_s": _similarity(truth_tree, output_tree, size, text=False),
    }


# ------------------------------------------------------------------------ heading hierarchy


def headings(markdown: str) -> list[tuple[int, str]]:
    """The ATX headings of `markdown` outside code fences, as (level, text as matched)."""
    found: list[tuple[int, str]] = []
    in_code = False
    for line in unify_line_endings(markdown).split("\n"):
        line = line.rstrip()
        if md.FENCE.match(line.strip() if in_code else line):
            in_code = not in_code
        elif not in_code and (match := md.HEADING.match(line)):
            found.append((len(line) - len(line.lstrip("#")), element_text(match.group(1))))
    return found


def heading_tree(found: list[tuple[int, str]]) -> Node:
    """Each heading under the nearest one above it with a smaller level (module docstring)."""

    def siblings(start: int, level: int) -> tuple[tuple[Node, ...], int]:
        """The headings from `start` on that are deeper than `level`, each with its own."""
        nodes: list[Node] = []
        index = start
        while index < len(found) and found[index][0] > level:
            own, text = found[index]
            children, index = siblings(index + 1, own)
            nodes.append(CellNode("heading", children, text))
        return tuple(nodes), index

    return Node("document", siblings(0, 0)[0])


def heading_scores(truth: str, output: str) -> HeadingScores:
    """``heading_hierarchy``, ``mhs`` and ``mhs_s`` with notes for a side without headings."""
    metrics = mhs(truth, output)
    truth_headings, output_headings = headings(truth), headings(output)
    notes = []
    if truth_headings:
        size = max(len(truth_headings), len(output_headings))
        metrics["heading_hierarchy"] = _similarity(
            heading_tree(truth_headings), heading_tree(output_headings), size
        )
        if not output_headings:
            notes.append("the output has no headings: heading_hierarchy, mhs and mhs_s are 0")
    else:
        notes.append("the truth has no headings: no heading_hierarchy (nothing to find)")
    return HeadingScores(metrics, notes)
