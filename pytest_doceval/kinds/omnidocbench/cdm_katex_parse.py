"""A formula parsed by pylatexenc and turned into the KaTeX-like tree of `cdm_katex`
(OmniDocBench v1.6's ``tokenize_latex/pylatexenc_to_katex.py``).

pylatexenc does not know every macro's arguments as KaTeX does, so some are bound by looking
ahead (``\\operatorname{..}``, ``\\phantom``, ``\\rule``, fonts and accents around a font, a
``\\frac``/``\\binom`` without braced arguments); ``^``, ``_`` and primes attach to the node
before them; environments become arrays (cases and matrices inside their delimiters). The
choices, including OmniDocBench's habit of editing a parsed node's text when ``\\binom`` takes
its arguments out of it, are its own: the tokens decide which characters CDM colours.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_doceval.kinds.omnidocbench.cdm_katex import (
    Accent,
    Array,
    Body,
    Column,
    Font,
    GenFrac,
    LeftRight,
    Node,
    Op,
    Rule,
    RuleDim,
    Sqrt,
    SupSub,
)

_SIZE: Final = re.compile(r"^\s*(-?)\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]{2})\s*$")
_OP_WITH_LIMITS: Final = {"det", "gcd", "inf", "lim", "liminf", "limsup", "max", "min", "Pr", "sup"}
_OP_WITHOUT_LIMITS: Final = {"arccos", "tanh"}
FONTS: Final = {
    "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "mathcal", "mathbb", "mathfrak",
    "mathscr", "mbox", "hbox",
}  # fmt: skip
_ACCENTS: Final = {"hat", "bar", "vec", "dot", "ddot", "tilde", "breve", "check", "acute", "grave"}
_WIDE: Final = {"widetilde", "widehat"}
OPERATOR_NAMES: Final = {
    "arccos", "arcsin", "arctan", "arg", "cos", "cosh", "cot", "coth", "csc", "deg", "det",
    "dim", "exp", "gcd", "hom", "inf", "injlim", "ker", "lg", "lim", "liminf", "limsup", "ln",
    "log", "max", "min", "Pr", "projlim", "sec", "sin", "sinh", "sup", "tan", "tanh",
}  # fmt: skip
_MATRIX_DELIMITERS: Final = {
    "pmatrix": ("(", ")"),
    "bmatrix": ("[", "]"),
    "Bmatrix": (r"\{", r"\}"),
    "vmatrix": ("|", "|"),
    "Vmatrix": (r"\Vert", r"\Vert"),
}
_CASES_DELIMITERS: Final = {"cases": (r"\{", "."), "dcases": (r"\{", "."), "rcases": (".", r"\}")}


@dataclass(frozen=True)
class _Script:
    """A ``^`` or ``_`` waiting for the node it applies to."""

    kind: str


Item = Node | _Script


def parse(latex: str) -> list[Node]:
    """``parse_latex_to_katex_ast``."""
    from pylatexenc.latexwalker import LatexWalker

    nodes, _, _ = LatexWalker(latex).get_latex_nodes()
    return convert(nodes, text=False)


def _args(node: Any) -> list[Any]:
    """``_macro_args``: the parsed arguments (``nodeargd.argnlist``, else ``nodeargs``)."""
    argd = getattr(node, "nodeargd", None)
    listed = list(getattr(argd, "argnlist", []) or [])
    if listed:
        return [a for a in listed if a is not None]
    return list(getattr(node, "nodeargs", []) or [])


def _children(node: Any) -> list[Any]:
    """``_node_to_nodelist``."""
    if node is None:
        return []
    found = getattr(node, "nodelist", None)
    return [node] if found is None else list(found or [])


def _is_group(node: Any) -> bool:
    return hasattr(node, "nodelist") and hasattr(node, "delimiters")


def _braced(node: Any) -> bool:
    return _is_group(node) and getattr(node, "delimiters", None) == ("{", "}")


def _group_text(node: Any) -> str:
    return "".join(
        c for n in getattr(node, "nodelist", None) or [] if (c := getattr(n, "chars", None))
    )


def _ordgroup(node: Any, text: bool, primes: bool = True) -> Node:
    return Node("ordgroup", convert(getattr(node, "nodelist", None), text=text, primes=primes))


def _one_or_group(nodes: list[Node]) -> Node:
    return nodes[0] if len(nodes) == 1 else Node("ordgroup", nodes)


def _skip_blank(nodes: Sequence[Any], j: int) -> int:
    while j < len(nodes):
        chars, specials = (
            getattr(nodes[j], "chars", None),
            getattr(nodes[j], "specials_chars", None),
        )
        if (isinstance(chars, str) and not chars.strip()) or (
            isinstance(specials, str) and not specials.strip()
        ):
            j += 1
            continue
        break
    return j


def _at(nodes: Sequence[Any], j: int) -> Any:
    return nodes[j] if j < len(nodes) else None


def _binom_from_chars(nodes: Sequence[Any], j1: int, text: bool, items: list[Item]) -> int | None:
    """``\\binom`` taking its arguments out of the text after it: the next index, or None."""
    g1 = _at(nodes, j1)
    chars = getattr(g1, "chars", None)
    if g1 is not None and isinstance(chars, str):
        m = re.match(r"\s*([^\s]+)\s+([^\s]+)(.*)", chars, flags=re.S)
        if m:
            numer = attach(chars_to_nodes(m.group(1), text=text))
            denom = attach(chars_to_nodes(m.group(2), text=text))
            if numer and denom:
                items.append(
                    Node("genfrac", GenFrac(False, _one_or_group(numer), _one_or_group(denom)))
                )
                g1.chars = m.group(3)  # OmniDocBench edits the parsed node, then reads it on
                return j1
    return None


def _frac_lookahead(
    macro: str, nodes: Sequence[Any], i: int, text: bool, items: list[Item]
) -> int | None:
    """A fraction or binomial whose arguments pylatexenc did not bind: the next index."""
    j1 = _skip_blank(nodes, i + 1)
    j2 = _skip_blank(nodes, j1 + 1)
    g1, g2 = _at(nodes, j1), _at(nodes, j2)
    if macro == "binom" and (found := _binom_from_chars(nodes, j1, text, items)) is not None:
        return found
    if _is_group(g1) and _is_group(g2):
        top = Node("ordgroup", convert(getattr(g1, "nodelist", None), text=text))
        bottom = Node("ordgroup", convert(getattr(g2, "nodelist", None), text=text))
        items.append(Node("genfrac", GenFrac(macro != "binom", top, bottom)))
        return j2 + 1
    if macro != "binom" or g1 is None or g2 is None:
        return None
    if getattr(g1, "specials_chars", None) == "&" or getattr(g2, "specials_chars", None) == "&":
        return None
    if getattr(g2, "macroname", None) == "\\":
        return None
    chars = getattr(g2, "chars", None)
    if isinstance(chars, str):
        m = re.match(r"\s*([^\s]+)(.*)", chars, flags=re.S)
        if m and m.group(2).strip():
            numer = convert(_children(g1), text=text)
            denom = attach(chars_to_nodes(m.group(1), text=text))
            if numer and denom:
                items.append(
                    Node("genfrac", GenFrac(False, _one_or_group(numer), _one_or_group(denom)))
                )
                g2.chars = m.group(2)
                return j2
    numer = convert(_children(g1), text=text)
    denom = convert(_children(g2), text=text)
    if numer and denom:
        items.append(Node("genfrac", GenFrac(False, _one_or_group(numer), _one_or_group(denom))))
        return j2 + 1
    return None


def _lookahead(
    node: Any, nodes: Sequence[Any], i: int, text: bool, items: list[Item]
) -> int | None:
    """The macros bound by looking ahead (module docstring): the next index, or None."""
    macro = getattr(node, "macroname", None)
    more = i + 1 < len(nodes)
    if macro in _ACCENTS | _WIDE and more:
        args = _args(node)
        inner = getattr(args[0], "macroname", None) if len(args) == 1 else None
        if inner in FONTS and not _args(args[0]):
            j1 = _skip_blank(nodes, i + 1)
            following = _at(nodes, j1)
            if _braced(following):
                font = Node("font", Font(inner, _ordgroup(following, text)))
                if macro in _ACCENTS:
                    items.append(Node("accent", Accent("\\" + macro, font)))
                else:
                    items += [Node("textord", "\\" + macro), font]
                return j1 + 1
    if macro == "operatorname" and more:
        j1 = _skip_blank(nodes, i + 1)
        following = _at(nodes, j1)
        if _is_group(following):
            raw = _group_text(following)
            if raw == raw.strip() and (compact := re.sub(r"\s+", "", raw)) in OPERATOR_NAMES:
                items.append(Node("textord", "\\" + compact))
                return j1 + 1
            items += [Node("mathord", r"\operatorname"), _ordgroup(following, False)]
            return j1 + 1
    if macro in FONTS and more and not _args(node):
        j1 = _skip_blank(nodes, i + 1)
        following = _at(nodes, j1)
        if following is not None:
            if _braced(following):
                body = _ordgroup(following, text)
            else:
                body = _one_or_group(convert(_children(following), text=text))
            items.append(Node("font", Font(macro, body)))
            return j1 + 1
    if macro in _OP_WITH_LIMITS or macro in _OP_WITHOUT_LIMITS:
        items.append(Node("op", Op(macro in _OP_WITH_LIMITS, "\\" + macro)))
        return i + 1
    if macro in ("binom", "frac", "tfrac", "dfrac") and more and not _args(node):
        found = _frac_lookahead(macro, nodes, i, text, items)
        if found is not None:
            return found
    if macro in ("phantom", "llap", "rlap") and more:
        j1 = _skip_blank(nodes, i + 1)
        following = _at(nodes, j1)
        if _is_group(following):
            inside = convert(getattr(following, "nodelist", None), text=text)
            if macro == "phantom":
                items.append(Node("phantom", Body(nodes=inside)))
            else:
                items.append(Node(macro, Body(node=Node("ordgroup", inside))))
            return j1 + 1
    if macro == "rule" and more:
        j1 = _skip_blank(nodes, i + 1)
        j2 = _skip_blank(nodes, j1 + 1)
        g1, g2 = (nodes[j1], nodes[j2]) if j2 < len(nodes) else (None, None)
        if _is_group(g1) and _is_group(g2):
            width, height = _rule_dim(_group_text(g1)), _rule_dim(_group_text(g2))
            if width and height:
                items.append(Node("rule", Rule(width, height)))
                return j2 + 1
    return None


def convert(nodes: Any, *, text: bool, primes: bool = True) -> list[Node]:
    """``_convert_nodes_to_katex``: pylatexenc nodes as tree nodes, scripts attached."""
    items: list[Item] = []
    found = list(nodes or [])
    i = 0
    while i < len(found):
        node = found[i]
        following = _lookahead(node, found, i, text, items)
        if following is not None:
            i = following
            continue
        after_script = bool(items) and isinstance(items[-1], _Script)
        items.extend(_single(node, text=text, primes=primes and not after_script))
        i += 1
    return attach(items)


def _primes(node: Node | None) -> list[Node] | None:
    if node is None:
        return None
    if node.type == "mathord" and node.value in ("'", r"\prime"):
        return [node]
    if node.type == "ordgroup":
        value = list(node.value or [])
        if value and all(c.type == "mathord" and c.value in ("'", r"\prime") for c in value):
            return value
    return None


def _prime_group(primes: list[Node]) -> Node:
    return primes[0] if len(primes) == 1 else Node("ordgroup", primes)


def _as_primes(script: Node | None) -> Node | None:
    """``^{\\prime...}`` written out after ``'`` read as primes."""
    if script is None or script.type != "ordgroup" or not script.value:
        return script
    head = script.value[0]
    if head.type != "textord" or head.value != "^":
        return script
    primes: list[Node] = []
    for node in script.value[1:]:
        found = _primes(node)
        if found is None:
            return script
        primes += found
    return _prime_group(primes) if primes else script


def attach(items: Sequence[Item]) -> list[Node]:
    """``_attach_scripts``: each run of ``^``/``_`` markers applied to the node before it."""
    out: list[Node] = []
    i = 0
    while i < len(items):
        base = items[i]
        if isinstance(base, _Script):
            out.append(Node("textord", base.kind))  # a stray marker stays a token
            i += 1
            continue
        sup: Node | None = None
        sub: Node | None = None
        j = i + 1
        while j < len(items) and isinstance(marker := items[j], _Script):
            script: Node | None = None
            k = after = j + 1
            while k < len(items):
                candidate = items[k]
                if isinstance(candidate, _Script):
                    break
                if candidate.type == "spacing" and candidate.value == " ":
                    k += 1
                    continue
                script, after = candidate, k + 1
                break
            if marker.kind == "^":
                script = _as_primes(script)
                existing, added = _primes(sup), _primes(script)
                sup = (
                    _prime_group([*existing, *added])
                    if sup is not None and existing is not None and added is not None
                    else script
                )
            else:
                sub = script
            j = after if script is not None else j + 1
        if sup is not None or sub is not None:
            out.append(Node("supsub", SupSub(base, sup, sub)))
            i = j
        else:
            out.append(base)
            i += 1
    return out


def _single(node: Any, *, text: bool, primes: bool) -> list[Item]:
    """``_convert_single_node``."""
    from pylatexenc.latexwalker import (
        LatexCharsNode,
        LatexCommentNode,
        LatexEnvironmentNode,
        LatexGroupNode,
        LatexMacroNode,
        LatexMathNode,
        LatexSpecialsNode,
    )

    if isinstance(node, LatexCommentNode):
        return []
    if isinstance(node, LatexCharsNode):
        return chars_to_nodes(node.chars or "", text=text, primes=primes)
    if isinstance(node, LatexSpecialsNode):
        return chars_to_nodes(getattr(node, "specials_chars", "") or "", text=text, primes=primes)
    if isinstance(node, LatexGroupNode):
        return [
            Node("ordgroup", convert(getattr(node, "nodelist", None), text=text, primes=primes))
        ]
    if isinstance(node, LatexMathNode):
        inner = convert(getattr(node, "nodelist", None), text=False, primes=primes)
        return [Node("mathord", "$"), *inner, Node("mathord", "$")]
    if isinstance(node, LatexEnvironmentNode):
        return [_environment(node)]
    if isinstance(node, LatexMacroNode):
        return _macro(node, text=text)
    return []


def _arg_node(arg: Any, text: bool) -> Node:
    """A macro argument as one node: a braced group as an ordgroup, else its single node."""
    if arg is None:
        return Node("ordgroup", [])
    if _braced(arg):
        return Node("ordgroup", convert(getattr(arg, "nodelist", None), text=text))
    return _one_or_group(convert(_children(arg), text=text))


def _arg_inline(arg: Any, text: bool) -> list[Node]:
    """A macro argument as inline nodes (``[..]`` kept as brackets)."""
    if arg is None:
        return []
    if _is_group(arg):
        inner = convert(getattr(arg, "nodelist", None), text=text)
        if getattr(arg, "delimiters", None) == ("[", "]"):
            return [Node("open", "["), *inner, Node("close", "]")]
        return [Node("ordgroup", inner)]
    return convert(_children(arg), text=text)


def _macro(node: Any, *, text: bool) -> list[Item]:
    """``_convert_macro``."""
    name = getattr(node, "macroname", "")
    if name in ("limits", "nolimits"):
        return []
    args = _args(node)
    first = args[0] if args else None
    out: list[Item]
    if name in ("frac", "tfrac", "dfrac", "binom"):
        numer, denom = (
            (_arg_node(args[0], text), _arg_node(args[1], text))
            if len(args) >= 2
            else (Node("ordgroup", []), Node("ordgroup", []))
        )
        out = [Node("genfrac", GenFrac(name != "binom", numer, denom))]
    elif name == "sqrt":
        listed = list(getattr(getattr(node, "nodeargd", None), "argnlist", []) or [])
        index_arg = listed[0] if len(listed) >= 2 else None
        body_arg = listed[1] if len(listed) >= 2 else (listed[0] if len(listed) == 1 else None)
        index = (
            Node("ordgroup", convert(_children(index_arg), text=text))
            if index_arg is not None
            else None
        )
        out = [Node("sqrt", Sqrt(_arg_node(body_arg, text), index))]
    elif name in _ACCENTS:
        out = [Node("accent", Accent("\\" + name, _arg_node(first, text)))]
    elif name in FONTS:
        out = [Node("font", Font(name, _arg_node(first, text)))]
    elif name == "text":
        out = [Node("text", Body(nodes=convert(_children(first), text=True)))]
    elif name in ("overline", "underline"):
        out = [Node(name, Body(node=_arg_node(first, text)))]
    else:
        out = [Node("textord", "\\" + name)]
        for arg in args:
            out.extend(_arg_inline(arg, text))
    post_space: object = getattr(node, "macro_post_space", "")
    if text and post_space:
        last = out[-1] if out else None
        if not (isinstance(last, Node) and last.type == "spacing" and last.value == " "):
            out.append(Node("spacing", " "))
    return out


def _environment(node: Any) -> Node:
    """``_convert_environment``: an array, inside its delimiters for cases and matrices."""
    name = getattr(node, "environmentname", "")
    cols = _columns(node, name)
    rows = _rows(node, name)
    if cols is None and name.startswith("aligned"):
        widest = max((len(row) for row in rows), default=0)
        if widest > 0:
            cols = [Column("r" if i % 2 == 0 else "l", True) for i in range(widest)]
    array = Node("array", Array(name or "array", cols, rows))
    base = name.rstrip("*")
    delimiters = _CASES_DELIMITERS.get(base) or _MATRIX_DELIMITERS.get(base)
    if delimiters:
        return Node("leftright", LeftRight(delimiters[0], delimiters[1], [array]))
    return array


def _columns(node: Any, name: str) -> list[Column] | None:
    """``_parse_env_cols``: the column spec's letters (cases: two ``l``)."""
    listed = list(getattr(getattr(node, "nodeargd", None), "argnlist", []) or [])
    if name.rstrip("*") in _CASES_DELIMITERS:
        return [Column("l", True), Column("l", True)]
    if name == "array" and len(listed) >= 2:
        spec_node = listed[1]
    elif name in ("tabular", "tabularx") and listed:
        spec_node = listed[0]
    elif listed:
        spec_node = listed[-1]
    else:
        return None
    if spec_node is None:
        return None
    spec = _group_text(spec_node)
    if spec == "":
        return []
    cols = [Column(ch, ch in "lcr") for ch in spec if ch in "lcr|" or not ch.isspace()]
    return cols or None


def _rows(node: Any, name: str) -> list[list[Node]]:
    """``_parse_env_body``: cells split at ``&``, rows at ``\\\\`` (a ``*`` after it kept)."""
    from pylatexenc.latexwalker import LatexCharsNode, LatexMacroNode, LatexSpecialsNode

    rows: list[list[Node]] = []
    row: list[Node] = []
    cell: list[Any] = []
    aligned = name.startswith("aligned")

    def end_cell() -> None:
        nonlocal cell
        nodes = convert(cell, text=False)
        if aligned and len(row) % 2 == 1:  # KaTeX's empty group before an odd column
            nodes = [Node("ordgroup", []), *nodes]
        row.append(Node("ordgroup", nodes))
        cell = []

    def end_row() -> None:
        nonlocal row
        if row:
            rows.append(row)
        row = []

    for child in getattr(node, "nodelist", []) or []:
        if isinstance(child, LatexSpecialsNode) and getattr(child, "specials_chars", None) == "&":
            end_cell()
            continue
        if isinstance(child, LatexMacroNode) and getattr(child, "macroname", None) == "\\":
            listed = list(getattr(getattr(child, "nodeargd", None), "argnlist", []) or [])
            star = listed[0] if listed else None
            keep = (
                star
                if isinstance(star, LatexCharsNode) and getattr(star, "chars", None) == "*"
                else None
            )
            end_cell()
            end_row()
            if keep is not None:
                cell.append(keep)
            continue
        cell.append(child)
    end_cell()
    end_row()
    return rows


def chars_to_nodes(chars: str, *, text: bool, primes: bool = True) -> list[Item]:
    """``_chars_to_nodes``: one node a character; ``--`` one node in math; ``'`` a prime
    superscript; ``^``/``_`` script markers; white space one spacing node in text."""
    out: list[Item] = []
    i = 0
    while i < len(chars):
        ch = chars[i]
        if ch.isspace():
            last = out[-1] if out else None
            if text and not (
                isinstance(last, Node) and last.type == "spacing" and last.value == " "
            ):
                out.append(Node("spacing", " "))
            i += 1
        elif not text and ch == "-" and i + 1 < len(chars) and chars[i + 1] == "-":
            out.append(Node("mathord", "--"))
            i += 2
        elif ch == "'" and not text and primes:
            count = 1
            while i + count < len(chars) and chars[i + count] == "'":
                count += 1
            marks = [Node("mathord", r"\prime") for _ in range(count)]
            out += [_Script("^"), marks[0] if count == 1 else Node("ordgroup", marks)]
            i += count
        elif ch in "^_":
            out.append(_Script(ch))
            i += 1
        else:
            out.append(Node("mathord", ch))
            i += 1
    return out


def _rule_dim(text: str) -> RuleDim | None:
    m = _SIZE.match(text or "")
    if not m:
        return None
    try:
        return RuleDim(float(f"{m.group(1)}{m.group(2)}"), m.group(3))
    except ValueError:
        return None
