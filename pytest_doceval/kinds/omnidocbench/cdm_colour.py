"""The normalised tokens of a formula coloured one by one, as OmniDocBench v1.6's CDM colours
them (``latex_processor.py``: ``normalize_latex`` and ``token_add_color_RGB``).

`normalised_tokens` splits function names and ellipses into characters, joins tokens that
render as one (``\\big(``, ``\\string x``, ``\\hspace{..}``, a ``\\rule``), drops colour and
spacing commands, and braces the arguments of accents, fonts, roots and fractions. `coloured`
wraps each token that prints something in ``\\mathcolor[RGB]{<color_k>}{..}`` (its k-th colour)
and lists the tokens in colour order; structural tokens (braces, scripts, ``&``, environments,
rules) get none, and a font or ``\\text`` group colours its content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

_SKIP_PATTERNS: Final = tuple(
    re.compile(p)
    for p in (
        r"\{", r"\}", r"[\[\]]", r"\\begin\{.*?\}", r"\\end\{.*?\}", r"\^", r"\_",
        r"\\.*rule.*", r"\\.*line.*", r"\[[\-.0-9]+[epm][xtm]\]",
    )
)  # fmt: skip
_SKIP_TOKENS: Final = {
    "\\", "\\\\", "\\index", "\\a", "&", "$", "\\multirow", "\\def", "\\edef", "\\raggedright",
    "\\url", "\\cr", "\\ensuremath", "\\left", "\\right", "\\mathchoice", "\\scriptstyle",
    "\\displaystyle", "\\qquad", "\\quad", "\\,", "\\!", "~", "\\boldmath", "\\gdef", "\\today",
    "\\the",
}  # fmt: skip
_PHANTOMS: Final = {
    "\\fontfamily", "\\vphantom", "\\phantom", "\\rowcolor", "\\ref", "\\thesubequation",
    "\\global", "\\theboldgroup",
}  # fmt: skip
_TWO_TAILS: Final = {"\\frac", "\\binom"}
_AB_TAILS: Final = {"\\xrightarrow", "\\xleftarrow", "\\sqrt"}
_TWO_TAILS_INVISIBLE: Final = {"\\overset", "\\underset", "\\stackrel"}
_ONE_TAIL: Final = [
    "\\widetilde", "\\overline", "\\hat", "\\widehat", "\\tilde", "\\Tilde", "\\dot", "\\bar",
    "\\vec", "\\underline", "\\underbrace", "\\check", "\\breve", "\\Bar", "\\Vec",
    "\\mathring", "\\ddot", "\\Ddot", "\\dddot", "\\ddddot",
]  # fmt: skip
_ONE_TAIL_INVISIBLE: Final = [
    "\\boldsymbol", "\\pmb", "\\textbf", "\\mathrm", "\\mathbf", "\\mathbb", "\\mathcal",
    "\\textmd", "\\texttt", "\\textnormal", "\\text", "\\textit", "\\textup", "\\mathop",
    "\\mathbin", "\\smash", "\\operatorname", "\\textrm", "\\mathfrak", "\\emph", "\\textsf",
    "\\textsc",
]  # fmt: skip
_ONE_TAILS: Final = {*_ONE_TAIL, *_ONE_TAIL_INVISIBLE}
# A token replaced, when it stands alone, by what it prints as separate characters.
_SPELLED: Final = [
    ("--", "- -"), ("---", "- - -"), ("…", ". . ."), ("\\ldots", ". . ."), ("\\hdots", ". . ."),
    ("\\cdots", ". . ."), ("\\dddot", ". . ."), ("\\dots", ". . ."), ("\\dotsc", ". . ."),
    ("\\dotsi", ". . ."), ("\\dotsm", ". . ."), ("\\dotso", ". . ."), ("\\dotsb", ". . ."),
    ("\\mathellipsis", ". . ."),
] + [
    ("\\" + name, "\\mathrm { " + " ".join(letters) + " }")
    for name, letters in (
        ("ex", "ex"), ("ln", "ln"), ("lg", "lg"), ("cot", "cot"), ("mod", "mod"),
        ("bmod", "mod"), ("pmod", "mod"), ("min", "min"), ("max", "max"), ("ker", "ker"),
        ("hom", "hom"), ("sec", "sec"), ("scs", "scs"), ("csc", "csc"), ("deg", "deg"),
        ("arg", "arg"), ("log", "log"), ("dim", "dim"), ("exp", "exp"), ("sin", "sin"),
        ("cos", "cos"), ("tan", "tan"), ("tanh", "tanh"), ("cosh", "cosh"), ("sinh", "sinh"),
        ("coth", "coth"), ("arcsin", "arcsin"), ("arccos", "arccos"), ("arctan", "arctan"),
    )
]  # fmt: skip
_COLOURS: Final = re.compile(
    r"\\colorbox[ \[\]RGBrgb]+{ [A-Za-z 0-9,!]+ } |\\color[ \[\]RGBrgb]+{ [A-Za-z 0-9,!]+ } "
    r"|\\textcolor[ \[\]RGBrgb]+{ [A-Za-z 0-9,!]+ } |\\cellcolor[ \[\]RGBrgb]+{ [A-Za-z 0-9,!]+ } "
)


def matching(tokens: Sequence[str], start: int, pair: tuple[str, str] = ("{", "}")) -> int:
    """``find_matching_brace``: the index closing the bracket opened at or after `start`;
    ValueError when it never closes (OmniDocBench's), -1 when none opened."""
    left, right = pair
    depth = 0
    for i in range(start, len(tokens)):
        if tokens[i] == left:
            depth += 1
        elif tokens[i] == right:
            depth -= 1
            if depth == 0:
                return i
    if depth > 0:
        raise ValueError("Warning! found no matching brace in sequence !")
    return -1


def _joined(text: str, pattern: str, then: str = " ", flags: int = re.DOTALL) -> str:
    """Every match of `pattern` with its spaces removed (plus `then` where OmniDocBench adds
    it back)."""
    for found in re.findall(pattern, text, flags):
        text = text.replace(found, found.replace(" ", "") + then)
    return text


def _tabular_tokens(text: str) -> str:
    for env in ("tabular", "array"):
        text = text.replace(f"\\begin {{{env}}}", f"\\begin{{{env}}}")
        text = text.replace(f"\\end {{{env}}}", f"\\end{{{env}}}")
    tokens = text.split(" ")
    for i, token in enumerate(tokens):
        if token == "\\begin{tabular}":
            end = matching(tokens, i + 1)
            tokens = [*tokens[:i], "".join(tokens[i : end + 1]), *tokens[end + 1 :]]
            break
    i = 0
    while i < len(tokens):
        if tokens[i] in ("\\cmidrule", "\\cline"):
            if tokens[i + 1] == "(":
                end = matching(tokens, matching(tokens, i + 1, ("(", ")")) + 1)
            else:
                end = matching(tokens, i + 1)
            tokens = [*tokens[:i], "".join(tokens[i : end + 1]), *tokens[end + 1 :]]
        i += 1
    return " ".join(tokens)


def _braced_arguments(tokens: list[str]) -> list[str]:
    """Missing braces filled in: ``\\hat \\lambda`` -> ``\\hat { \\lambda }``, ``\\sqrt A`` ->
    ``\\sqrt { A }``, ``\\frac {a} 2`` -> ``\\frac {a} { 2 }``."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in _ONE_TAILS:
            sub = i + 1
            while sub < len(tokens) and tokens[sub] in _ONE_TAILS:
                sub += 1
            opened = [t for k in range(i, sub) for t in (tokens[k], "{")]
            closing = ["}"] * (sub - i)
            if tokens[sub] != "{":
                tokens = [*tokens[:i], *opened, tokens[sub], *closing, *tokens[sub + 1 :]]
            else:
                end = matching(tokens, sub)
                tokens = [
                    *tokens[:i],
                    *opened,
                    *tokens[sub + 1 : end],
                    *closing,
                    *tokens[end + 1 :],
                ]
        elif token in _AB_TAILS:
            if tokens[i + 1] not in ("[", "{"):
                tokens = [*tokens[: i + 1], "{", tokens[i + 1], "}", *tokens[i + 2 :]]
            else:
                end = matching(tokens, i + 1, ("[", "]")) if tokens[i + 1] == "[" else i
                if tokens[end + 1] != "{":
                    tokens = [*tokens[: end + 1], "{", tokens[end + 1], "}", *tokens[end + 2 :]]
        elif token in _TWO_TAILS | _TWO_TAILS_INVISIBLE:
            if tokens[i + 1] != "{":
                tokens = [*tokens[: i + 1], "{", tokens[i + 1], "}", *tokens[i + 2 :]]
            end = matching(tokens, i + 1)
            if tokens[end + 1] != "{":
                tokens = [*tokens[: end + 1], "{", tokens[end + 1], "}", *tokens[end + 2 :]]
        i += 1
    return tokens


def normalised_tokens(latex: str) -> str:
    """``normalize_latex``: the formula's tokens ready to colour (module docstring)."""
    tabular = "tabular" in latex
    text = latex.strip().replace(r"\pmatrix", r"\mypmatrix").replace(r"\matrix", r"\mymatrix")
    for item in ("\\raggedright", "\\arraybackslash", "\\lowercase", "\\uppercase"):
        text = text.replace(item, "")
    for found in re.findall(r"\\[hv]space { [.0-9a-z ]+ }", text, re.DOTALL):
        text = text.replace(found, "" if tabular else found.replace(" ", ""))
    if tabular:
        text = _tabular_tokens(text)
    for found in re.findall(r"\\begin{array} { [lrc ]+ }", text, re.DOTALL):
        aft = (
            found.replace("\\begin{array} ", "<s>")
            .replace(" ", "")
            .replace("<s>", "\\begin{array} ")
        )
        text = text.replace(found, aft)
    text = " " + text + " "
    for token, spelled in _SPELLED:
        text = re.sub(
            r"(?<=\s)" + re.escape(token) + r"(?=\s)", spelled.replace("\\", "\\\\"), text
        )
    text = _joined(text, r"\\string [^ ]+ ")
    text = _joined(text, r"\\[Bb]ig[g]?[glrm]? [(){}|\[\]] ")
    text = _joined(text, r"\\[Bb]ig[g]?[glrm]? \\.*? ")
    text = text.replace("\\operatorname *", "\\operatorname")
    text = text.replace("\\lefteqn", "").replace("\\footnote ", "^ ")
    text = _joined(text, r"\\\' [^{] ")
    if tabular:
        text = _joined(text, r"\[ [\-.0-9 ]+[exptcm ]+ \]", "")
    text = _joined(text, r"\\parbox {[^{]+}", "")
    for found in re.findall(r"\\raisebox {[^{]+} [\[\]0-9 exptcm]+{", text, re.DOTALL):
        text = text.replace(found, found.replace(" ", "")[0:-1] + " {")
    for found in re.findall(r"{ \\char[0-9\' ]+}", text, re.DOTALL):
        text = text.replace(found, "{ " + found.replace(" ", "")[1:-1] + " }")
    text = _joined(text, r"\\rule {[ .0-9a-z]+} {[ .0-9a-z]+}", "")
    text = _joined(text, r"\\specialrule {[ .0-9a-z]+} {[ .0-9a-z]+} {[ .0-9a-z]+}", "")
    for found in _COLOURS.findall(text):
        text = text.replace(found, "")
    return " ".join(_braced_arguments(text.split(" ")))


def _colour(k: int) -> str:
    return "\\mathcolor[RGB]{<color_" + str(k) + ">}{"


def _skipped(token: str) -> bool:
    return (
        token in _SKIP_TOKENS
        or token in _TWO_TAILS_INVISIBLE
        or any(p.match(token) for p in _SKIP_PATTERNS)
    )


def colour_step(
    tokens: list[str], i: int, colours: list[str], brace: bool = False
) -> tuple[list[str], int]:
    """``token_add_color_RGB``: token `i` coloured (its tail walked), the tokens and the next
    index; the coloured tokens are appended to `colours` in colour order."""
    token = tokens[i]
    if not token:
        return tokens, i + 1
    if token in _PHANTOMS:
        end = matching(tokens, i + 1) if tokens[i + 1] == "{" else i + 1
        return tokens, end + 1
    if token in _TWO_TAILS:
        end = matching(tokens, matching(tokens, i + 1) + 1)
        tokens = [
            *tokens[:i],
            _colour(len(colours)) + token,
            *tokens[i + 1 : end + 1],
            "}",
            *tokens[end + 1 :],
        ]
        colours.append(token)
        return tokens, i + 1
    if token in _ONE_TAIL:
        end = matching(tokens, i + 1)
        mark = _colour(len(colours))
        if token != "\\underbrace" and end + 1 < len(tokens) and tokens[end + 1] == "_":
            tokens = [
                *tokens[:i],
                "{" + mark + token,
                *tokens[i + 1 : end + 1],
                "}}",
                *tokens[end + 1 :],
            ]
        else:
            tokens = [*tokens[:i], mark + token, *tokens[i + 1 : end + 1], "}", *tokens[end + 1 :]]
        colours.append(token)
        return tokens, i + 1
    if token in _ONE_TAIL_INVISIBLE:
        end = matching(tokens, i + 1)
        if end - (i + 1) == 2:
            colours.append(tokens[i + 2])
            tokens = [
                *tokens[: i + 2],
                _colour(len(colours) - 1) + tokens[i + 2] + "}",
                *tokens[end:],
            ]
        else:
            sub = i + 2
            while sub < end:
                tokens, sub = colour_step(tokens, sub, colours)
        return tokens, end + 1
    if token in _AB_TAILS:
        if tokens[i + 1] == "{":
            end = matching(tokens, i + 1)
            tokens = [
                *tokens[:i],
                _colour(len(colours)) + token,
                *tokens[i + 1 : end + 1],
                "}",
                *tokens[end + 1 :],
            ]
            colours.append(token)
            sub = i + 2
            while sub < end:
                tokens, sub = colour_step(tokens, sub, colours)
            return tokens, end + 1
        if tokens[i + 1] == "[":
            optional_end = matching(tokens, i + 1, ("[", "]"))
            end = matching(tokens, optional_end + 1)
            tokens = [
                *tokens[:i],
                _colour(len(colours)) + token,
                *tokens[i + 1 : end + 1],
                "}",
                *tokens[end + 1 :],
            ]
            colours.append(token)
            sub = i + 2
            while sub < optional_end:
                tokens, sub = colour_step(tokens, sub, colours, brace=True)
            sub = optional_end + 2
            while sub < end:
                tokens, sub = colour_step(tokens, sub, colours)
            return tokens, end + 1
        raise UnboundLocalError("next_idx")  # OmniDocBench's, for a root with no argument
    if token in ("\\multicolumn", "\\multirow"):
        first = matching(tokens, i + 1)
        second = matching(tokens, first + 1)
        third = matching(tokens, second + 1)
        sub = second + 2
        while sub < third:
            tokens, sub = colour_step(tokens, sub, colours)
        return tokens, third + 1
    if _skipped(token):
        if (token == "[" and tokens[i - 1] != "\\sqrt") or (
            token == "]" and i >= 3 and tokens[i - 3] != "\\sqrt"
        ):
            tokens = [*tokens[:i], _colour(len(colours)) + tokens[i] + "}", *tokens[i + 1 :]]
            colours.append(token)
        return tokens, i + 1
    mark = _colour(len(colours))
    if brace or (i > 1 and tokens[i - 1] == "_"):
        tokens = [*tokens[:i], "{" + mark + tokens[i] + "}}", *tokens[i + 1 :]]
    else:
        tokens = [*tokens[:i], mark + tokens[i] + "}", *tokens[i + 1 :]]
    colours.append(token)
    return tokens, i + 1


def coloured(latex: str) -> tuple[str, list[str]]:
    """The normalised formula with every printing token coloured, and those tokens."""
    tokens = latex.strip().split(" ")
    colours: list[str] = []
    i = 0
    while i < len(tokens):
        tokens, i = colour_step(tokens, i, colours)
    return " ".join(tokens), colours
