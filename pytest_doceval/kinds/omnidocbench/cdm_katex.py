"""A KaTeX-like tree of a formula and its rendering as normalised LaTeX tokens: the node types
and renderer of OmniDocBench v1.6's CDM tokenizer (``tokenize_latex/katex_nodes.py``,
``katex_renderer.py``, its Python rewrite of the KaTeX ``parseTree`` walk CDM started with).

The tree is built from pylatexenc's (`cdm_katex_parse`); `render` writes it back as
space-separated tokens with every argument braced (``\\frac {a} {b}``, ``x ^ {2}``), arrays with
their column spec, ``\\operatorname*`` for limits operators, text as ``\\mathrm``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

RENDERERS: Final = (
    "mathord textord bin rel open close inner punct ordgroup text supsub genfrac array sqrt "
    "leftright accent spacing op font overline underline rule llap rlap phantom"
).split()


@dataclass
class Node:
    """``KaTeXNode``: a type and its value (text, a child list, or one of the records below)."""

    type: str
    value: Any = None


@dataclass
class SupSub:
    base: Node
    sup: Node | None = None
    sub: Node | None = None


@dataclass
class GenFrac:
    bar: bool  # hasBarLine: \frac (True) or \binom
    numer: Node
    denom: Node


@dataclass
class Sqrt:
    body: Node
    index: Node | None = None


@dataclass
class Accent:
    accent: str
    base: Node


@dataclass
class Font:
    font: str
    body: Node


@dataclass
class Body:
    """The value of ``text``, ``phantom`` (a node list), ``llap``/``rlap``/``overline``/
    ``underline`` (one node in ``node``)."""

    nodes: list[Node] = field(default_factory=list)
    node: Node | None = None


@dataclass
class RuleDim:
    number: float
    unit: str


@dataclass
class Rule:
    width: RuleDim
    height: RuleDim


@dataclass
class Column:
    """A column spec letter: an alignment (``l``/``c``/``r``) or anything else (a separator)."""

    char: str
    align: bool


@dataclass
class Array:
    style: str
    cols: list[Column] | None
    body: list[list[Node]]


@dataclass
class LeftRight:
    left: str
    right: str
    body: list[Node]


@dataclass
class Op:
    limits: bool
    body: str


def _number(value: float) -> str:
    """A rule dimension as JavaScript prints it (no ``.0`` on an integer)."""
    return str(int(value)) if float(value).is_integer() else str(value)


class Renderer:
    """``KaTeXRenderer``: the tree as tokens. ``tabular`` renders arrays as tabulars."""

    def __init__(self, tabular: bool = False) -> None:
        self.tabular = tabular
        self.tokens: list[str] = []

    def render(self, nodes: Sequence[Node]) -> str:
        self.tokens = []
        self._all(nodes, None)
        return " ".join(self.tokens).strip()

    def _emit(self, *tokens: str | None) -> None:
        self.tokens.extend(t for t in tokens if t)

    def _all(self, nodes: Sequence[Node], font: str | None) -> None:
        for node in nodes:
            self._one(node, font)

    def _one(self, node: Node, font: str | None) -> None:
        if node.type not in RENDERERS:
            raise ValueError(f"Got group of unknown type: '{node.type}'")
        getattr(self, "_" + node.type)(node, font)

    def _mathord(self, node: Node, font: str | None) -> None:
        value = str(node.value)
        if font == "mathrm" and value and not value.startswith("\\"):
            self._emit(*(r"\;" if ch == " " else ch for ch in value))
        else:
            self._emit(value)

    def _textord(self, node: Node, font: str | None) -> None:
        self._emit(str(node.value))

    _bin = _rel = _open = _close = _inner = _punct = _textord

    def _ordgroup(self, node: Node, font: str | None) -> None:
        self._emit("{")
        self._all(node.value or [], font)
        self._emit("}")

    def _text(self, node: Node, font: str | None) -> None:
        self._emit(r"\mathrm", "{")
        self._all(node.value.nodes, font)
        self._emit("}")

    def _script(self, mark: str, script: Node | None, font: str | None) -> None:
        if script is None:
            return
        self._emit(mark)
        if script.type != "ordgroup":
            self._emit("{")
            self._one(script, font)
            self._emit("}")
        else:
            self._one(script, font)

    def _supsub(self, node: Node, font: str | None) -> None:
        self._one(node.value.base, font)
        self._script("_", node.value.sub, font)
        self._script("^", node.value.sup, font)

    def _genfrac(self, node: Node, font: str | None) -> None:
        self._emit(r"\frac" if node.value.bar else r"\binom")
        self._one(node.value.numer, font)
        self._one(node.value.denom, font)

    def _array(self, node: Node, font: str | None) -> None:
        value: Array = node.value
        if self.tabular:
            self._tabular(value, font)
            return
        self._emit(r"\begin{array}", "{")
        if value.cols is not None:
            self._emit(*(c.char for c in value.cols if c.align))
        elif value.body:
            aligned = (value.style or "").startswith("aligned")
            self._emit(
                *(
                    ("r" if i % 2 == 0 else "l") if aligned else "l"
                    for i in range(len(value.body[0]))
                )
            )
        self._emit("}")
        for row in value.body:
            if not row or not any(cell.value for cell in row):
                continue
            for cell in row:
                self._one(cell, font)
                if self.tokens[-2:] == ["{", "}"]:  # an empty cell leaves nothing
                    del self.tokens[-2:]
                self._emit("&")
            if self.tokens and self.tokens[-1] == "&":
                self.tokens.pop()
            self._emit("\\\\")
        self._emit(r"\end{array}")

    def _tabular(self, value: Array, font: str | None) -> None:
        self._emit(r"\begin{" + value.style + "}")
        if value.style in ("array", "tabular", "tabularx"):
            self._emit("{")
            if value.cols is not None:
                self._emit(*(c.char for c in value.cols))
            elif value.body:
                self._emit(*("c" for _ in value.body[0]))
            self._emit("}")
        for row in value.body:
            if not row or (len(row) == 1 and not row[0].value):
                continue
            first = row[0]
            cells = first.value if first.type == "ordgroup" else None
            if isinstance(cells, list) and cells and getattr(cells[0], "value", None) == r"\hline":
                self._emit(r"\hline")
                first.value = cells[1:]
            for cell in row:
                self._one(cell, font)
                self._emit("&")
            if self.tokens and self.tokens[-1] == "&":
                self.tokens.pop()
            self._emit("\\\\")
        self._emit(r"\end{" + value.style + "}")

    def _sqrt(self, node: Node, font: str | None) -> None:
        index = node.value.index
        if index is not None:
            self._emit(r"\sqrt", "[")
            self._all(index.value or [], font)
            self._emit("]")
        else:
            self._emit(r"\sqrt")
        self._one(node.value.body, font)

    def _leftright(self, node: Node, font: str | None) -> None:
        self._emit(r"\left" + node.value.left)
        self._all(node.value.body, font)
        self._emit(r"\right" + node.value.right)

    def _accent(self, node: Node, font: str | None) -> None:
        base = node.value.base
        if base.type != "ordgroup":
            self._emit(node.value.accent, "{")
            self._one(base, font)
            self._emit("}")
        else:
            self._emit(node.value.accent)
            self._one(base, font)

    def _spacing(self, node: Node, font: str | None) -> None:
        self._emit("~" if node.value == " " else str(node.value))

    def _op(self, node: Node, font: str | None) -> None:
        self._emit(r"\operatorname*" if node.value.limits else r"\operatorname", "{")
        self._emit(*node.value.body[1:])  # its body is "\\name": the name's letters
        self._emit("}")

    def _font(self, node: Node, font: str | None) -> None:
        name = "mathrm" if node.value.font in ("mbox", "hbox") else node.value.font
        self._emit("\\" + name)
        self._one(node.value.body, name)

    def _overline(self, node: Node, font: str | None) -> None:
        self._emit("\\" + node.type, "{")
        self._one(node.value.node, font)
        self._emit("}")

    _underline = _overline

    def _rule(self, node: Node, font: str | None) -> None:
        w, h = node.value.width, node.value.height
        self._emit(
            r"\rule", "{", _number(w.number), w.unit, "}", "{", _number(h.number), h.unit, "}"
        )

    def _llap(self, node: Node, font: str | None) -> None:
        self._emit("\\" + node.type)
        self._one(node.value.node, font)

    _rlap = _llap

    def _phantom(self, node: Node, font: str | None) -> None:
        self._emit(r"\phantom", "{")
        self._all(node.value.nodes, font)
        self._emit("}")
