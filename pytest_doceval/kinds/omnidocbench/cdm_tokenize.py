"""A formula as the space-separated normalised tokens CDM colours one by one (OmniDocBench v1.6's
``tokenize_latex`` and its ``preprocess_formula``/``preprocess_tabular``).

A formula: ``split``/``align``/``eqnarray`` environments become ``aligned``, ``smallmatrix``
``matrix``; comments, ``\\label``, ``\\~`` and ``$`` go; ``\\\\`` outside environments becomes
``\\,``; ``\\rm`` becomes ``\\mathrm{``; then the KaTeX-like tree (`cdm_katex_parse`) is
rendered (`cdm_katex`), ``\\operatorname{sin}`` written ``\\sin``, ``\\left`` joined to its
delimiter. A LaTeX table (``tabular``) is tokenised as written, token by token. Unbalanced
input (braces, environments, ``\\left``/``\\right``, math delimiters; over 20,000 characters)
gives no tokens, and CDM then renders the LaTeX as it is.
"""

from __future__ import annotations

import re
from typing import Any, Final

from pytest_doceval.kinds.omnidocbench.cdm_katex import Renderer
from pytest_doceval.kinds.omnidocbench.cdm_katex_parse import OPERATOR_NAMES, parse
from pytest_doceval.kinds.omnidocbench.latex_text import quiet_pylatexenc, unbalanced_latex

MAX_CDM_LATEX: Final = 20000  # its CDM_MAX_LATEX_INPUT_LEN
_ALIGN: Final = re.compile(
    r"\\begin{(split|align|alignedat|alignat|eqnarray)\*?}(.+?)\\end{\1\*?}", re.S
)
_SMALLMATRIX: Final = re.compile(r"\\begin{(smallmatrix)\*?}(.+?)\\end{\1\*?}", re.S)
_HSKIP: Final = re.compile(r"hskip(.*?)(cm|in|pt|mm|em)")
_OPERATORNAME: Final = re.compile(r"\\operatorname\s*\{([^{}]*?)\}")
_LABEL: Final = re.compile(r"\\label\{.*?\}")
_CJK_AFTER_MACRO: Final = re.compile(r"(\\[A-Za-z]+)(?=[\u4e00-\u9fff])")


def _prepared(line: str, *, formula: bool) -> str:
    """``preprocess_line`` (`formula`) / ``preprocess_tabular_line``."""
    if not line:
        return line
    if line.startswith("%"):
        line = line[1:]
    if formula:
        line = line.split("%", 1)[0]
    line = line.replace(r"\~", " ")
    if formula:
        line = _CJK_AFTER_MACRO.sub(r"\1 ", line)
    line = line.replace("\\>", " ")
    line = _LABEL.sub("", line)
    if all(key not in line for key in ("matrix", "cases", "array", "begin")):
        line = line.replace("\\\\", "\\,")
    return line


def _walk_tokens(out: list[str], nodes: Any) -> None:
    """``_emit_tokens_from_nodes``: pylatexenc nodes as KaTeX's lexer tokens."""
    from pylatexenc.latexwalker import (
        LatexCharsNode,
        LatexCommentNode,
        LatexEnvironmentNode,
        LatexGroupNode,
        LatexMacroNode,
        LatexMathNode,
        LatexSpecialsNode,
    )

    for node in list(nodes or []):
        if isinstance(node, LatexCommentNode):
            continue
        if isinstance(node, LatexCharsNode | LatexSpecialsNode):
            chars = node.chars if isinstance(node, LatexCharsNode) else node.specials_chars
            out.extend(ch for ch in chars or "" if not ch.isspace())
        elif isinstance(node, LatexGroupNode):
            left, right = getattr(node, "delimiters", ("{", "}"))
            out.append(left)
            _walk_tokens(out, node.nodelist)
            out.append(right)
        elif isinstance(node, LatexMathNode):
            out.append("$")
            _walk_tokens(out, node.nodelist)
            out.append("$")
        elif isinstance(node, LatexEnvironmentNode):
            name = node.environmentname
            out += [r"\begin", "{" + name + "}"]
            for arg in list(getattr(node.nodeargd, "argnlist", []) or []):
                if arg is not None:
                    _walk_tokens(out, [arg])
            _walk_tokens(out, node.nodelist)
            out += [r"\end", "{" + name + "}"]
        elif isinstance(node, LatexMacroNode):
            out.append("\\" + node.macroname)
            listed = list(getattr(node.nodeargd, "argnlist", []) or [])
            for arg in listed if listed else list(getattr(node, "nodeargs", []) or []):
                if arg is not None:
                    _walk_tokens(out, [arg])


def _tokens(latex: str) -> list[str]:
    from pylatexenc.latexwalker import LatexWalker

    nodes, _, _ = LatexWalker(latex).get_latex_nodes()
    out: list[str] = []
    _walk_tokens(out, nodes)
    return out


def normalised_formula_tokens(line: str) -> str:
    """``normalize_formula(mode="normalize")``: the tokens, or "" where the input is
    unbalanced or does not parse."""
    try:
        guarded = _prepared(line, formula=True)
        if unbalanced_latex(guarded, math=True, max_len=MAX_CDM_LATEX):
            return ""
        pre = guarded.replace("$", " ")
        trailing = pre.endswith("\\")
        pre = (
            pre.replace(r"{\rm", r"\mathrm{")
            .replace(r"{ \rm", r"\mathrm{")
            .replace(r"\rm{", r"\mathrm{")
        )
        with quiet_pylatexenc():
            out = Renderer().render(parse(pre))
        out = out.replace("SSSSSS", "$").replace(" S S S S S S", "$")
        out = re.sub(r"\\label \{ .*? \}", "", out).strip()
        if not out and pre.strip() == "\\":
            out = "\\"
        if trailing and out and out.split()[-1] != "\\":
            out = f"{out} \\"
        return out
    except Exception:  # OmniDocBench's own catch-all: a formula that breaks the parser
        return ""


def _tabular_tokens(line: str) -> str:
    try:
        pre = _prepared(line, formula=False)
        if unbalanced_latex(pre, math=False, max_len=MAX_CDM_LATEX):
            return ""
        with quiet_pylatexenc():
            return " ".join(_tokens(pre)).strip()
    except Exception:  # as above
        return ""


def _operatornames(post: str) -> str:
    def named(match: re.Match[str]) -> str:
        compact = re.sub(r"\s+", "", match.group(1).strip())
        return "\\" + compact if compact in OPERATOR_NAMES else match.group(0)

    return _OPERATORNAME.sub(named, post) if "\\operatorname" in post else post


def _left_right_joined(post: str) -> str:
    if "\\left" not in post and "\\right" not in post:
        return post
    tokens = post.strip().split()
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] in (r"\left", r"\right") and i + 1 < len(tokens):
            out.append(tokens[i] + tokens[i + 1])
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return " ".join(out)


def tokenize_latex(latex: str) -> tuple[bool, str]:
    """``tokenize_latex``: (done, tokens). (True, "") for a formula that gives no tokens;
    (False, latex) for a table that gives none."""
    if not latex:
        return False, latex
    if "tabular" not in latex:
        pre = _SMALLMATRIX.sub(
            r"\\begin{matrix}\2\\end{matrix}",
            _ALIGN.sub(r"\\begin{aligned}\2\\end{aligned}", latex),
        )
        post = normalised_formula_tokens(pre)
        if not post:
            return True, ""
        post = _left_right_joined(_operatornames(" ".join(post.strip().split())))
        return True, post.replace(r"\\ \end{array}", r"\end{array}")
    code = latex.replace("\\\\%", "\\\\ %").replace(r"\%", "<PERCENTAGE_TOKEN>")
    code = code.split("%")[0].replace("<PERCENTAGE_TOKEN>", r"\%")
    if "\\end{tabular}" not in code:
        code += "\\end{tabular}"
    code = _HSKIP.sub(r"hspace{\1\2}", code)
    post = _tabular_tokens(code.replace("\r", " ").replace("\n", " "))
    if not post:
        return False, latex
    return True, " ".join(post.strip().split())
