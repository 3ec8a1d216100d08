"""OmniDocBench v1.6's text and formula normalisers (``src/core/preprocess/data_preprocess.py``),
the strings its edit distances compare.

* `normalised_text`: inline math with a ``\\``, ``^`` or ``_`` read as text (`latex_to_text`),
  circled characters and ``\\textcircled{..}`` unwrapped, then only word characters and CJK
  kept (no spaces, no punctuation).
* `normalised_formula`: delimiters, tags, font and spacing commands, environments, alignment
  marks and simple braces removed, lower-cased, without white space.
* `strip_formula_delimiters`, `strip_formula_tags`, `textblock_to_unicode`, `formula_to_text`,
  `textblock_with_normalised_formulas`: the helpers the matcher calls directly.

Both normalisers are pure and cached: the matcher asks for the same strings many times.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from pytest_doceval.kinds.omnidocbench.latex_text import latex_to_text

_CIRCLED: Final = str.maketrans(
    {chr(0x2460 + i): str(i + 1) for i in range(20)}
    | {chr(0x24D0 + i): chr(ord("a") + i) for i in range(26)}
    | {chr(0x24B6 + i): chr(ord("A") + i) for i in range(26)}
)
_TEXTCIRCLED: Final = re.compile(r"\\textcircled\s*\{\s*([^{}]+?)\s*\}")
INLINE_MATH: Final = re.compile(r"\$(.*?)\$|\\\((.*?)\\\)")
_ESCAPED: Final = re.compile(r"\\([\\_&%^])")
_COMPLEX_INLINE: Final = (
    r"\begin{",
    r"\end{",
    r"\array",
    r"\matrix",
    r"\tabular",
    r"\cases",
    r"\align",
    "\\\\",
    "&",
)
_DELIMITERS: Final = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_FIRST_MATH: Final = re.compile(r"\\\[(.+?)(?<!\\)\\\]|\\\((.+?)(?<!\\)\\\)")
# In OmniDocBench's order, which matters: "\\mathbf" goes before "\\mathbfcal" is seen.
_FORMULA_NOISE: Final = (
    "\\mathbf",
    "\\mathrm",
    "\\mathnormal",
    "\\mathit",
    "\\mathbb",
    "\\mathcal",
    "\\mathscr",
    "\\mathfrak",
    "\\mathsf",
    "\\mathtt",
    "\\textbf",
    "\\text",
    "\\boldmath",
    "\\boldsymbol",
    "\\operatorname",
    "\\bm",
    "\\symbfit",
    "\\mathbfcal",
    "\\symbf",
    "\\scriptscriptstyle",
    "\\notag",
    "\\setlength",
    "\\coloneqq",
    "\\space",
    "\\thickspace",
    "\\thinspace",
    "\\medspace",
    "\\nobreakspace",
    "\\negmedspace",
    "\\quad",
    "\\qquad",
    "\\enspace",
    "\\substackw",
    " ",
    "$$",
    "\\left",
    "\\right",
    "\\displaystyle",
    "\\text",
)
_HSPACE: Final = re.compile(r"\\hspace\{.*?\}")
_BEGIN: Final = re.compile(r"\\begin\{.*?\}")
_END: Final = re.compile(r"\\end\{.*?\}")
_ARRAYCOLSEP: Final = re.compile(r"\\arraycolsep.*?\}")
_COLUMN_SPEC: Final = re.compile(r"\{[lcr| ]+\}")
_SIMPLE_GROUP: Final = re.compile(r"\{([A-Za-z0-9.+\-]+)\}")
_OPERATOR_GROUP: Final = re.compile(r"\{([^{}]{1,160})\}")
_OPERATOR_TOKENS: Final = ("=", "+", "-", "\\\\", "^", "_", "[", "]", "(", ")")
_NOT_WORD: Final = re.compile(r"[^\w\u4e00-\u9fff]")


def unwrap_circled(text: str) -> str:
    """``replace_textcircle``: ① -> 1, ⓐ -> a, Ⓐ -> A, ``\\textcircled{x}`` -> x."""
    text = _TEXTCIRCLED.sub(lambda m: m.group(1).strip(), text)
    return text.translate(_CIRCLED)


def _too_complex_inline(latex: str) -> bool:
    latex = latex.strip()
    if not latex:
        return False
    if len(latex) > 128 or any(token in latex for token in _COMPLEX_INLINE):
        return True
    return latex.count("{") != latex.count("}")


def textblock_to_unicode(text: str) -> str:
    """``textblock2unicode``: each simple inline formula holding ``\\``, ``^`` or ``_`` (once
    ``\\\\``, ``\\_``, ``\\&``, ``\\%``, ``\\^`` are dropped) replaced by its text."""
    text = unwrap_circled(text)
    replacements: list[tuple[int, int, str]] = []
    for match in INLINE_MATH.finditer(text):
        content = match.group(1) if match.group(1) is not None else match.group(2)
        clean = _ESCAPED.sub("", content)
        if not any(ch in clean for ch in "\\^_"):
            continue
        if clean.endswith("\\"):
            clean += " "
        if _too_complex_inline(clean):
            continue
        replacements.append((match.start(), match.end(), latex_to_text(clean, clean)))
    for start, end, unicode in sorted(replacements, reverse=True):
        text = text[:start] + unicode.strip() + text[end:]
    return text


def strip_formula_delimiters(text: str) -> str:
    """The text without its outer ``$$``, ``\\[..\\]``, ``\\(..\\)`` or ``$`` (repeatedly)."""
    text = text.strip().strip("\n")
    changed = True
    while text and changed:
        changed = False
        for left, right in _DELIMITERS:
            if (
                text.startswith(left)
                and text.endswith(right)
                and len(text) >= len(left) + len(right)
            ):
                text = text[len(left) : len(text) - len(right)].strip()
                changed = True
                break
    return text


def _skip_group(text: str, index: int) -> tuple[int, bool]:
    """From just inside a ``{``: the index after its ``}`` and whether it closed."""
    depth = 1
    while index < len(text) and depth > 0:
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
        index += 1
    return index, depth == 0


def _strip_phantoms(text: str) -> str:
    """``\\phantom{..}`` removed with its group; an unclosed one loses its name and ends it."""
    token = "\\phantom{"
    while (start := text.find(token)) >= 0:
        end, closed = _skip_group(text, start + len(token))
        if not closed:
            return text[:start] + text[start + len("\\phantom") :]
        text = text[:start] + text[end:]
    return text


def _strip_tags(text: str) -> str:
    """``\\tag{..}`` and ``\\tag*{..}`` removed with their group (``\\tagx`` is kept)."""
    command = "\\tag"
    search = 0
    while (start := text.find(command, search)) >= 0:
        index = start + len(command)
        if index < len(text) and text[index].isalpha():
            search = index
            continue
        while index < len(text) and text[index].isspace():
            index += 1
        if index < len(text) and text[index] == "*":
            index += 1
            while index < len(text) and text[index].isspace():
                index += 1
        if index >= len(text) or text[index] != "{":
            search = start + len(command)
            continue
        end, closed = _skip_group(text, index + 1)
        text = text[:start] + (text[end:] if closed else text[start + len(command) :])
        search = start
    return text


def strip_formula_tags(text: str) -> str:
    """Equation numbers out: ``\\tag{..}``, ``\\notag``, ``\\nonumber``."""
    if not text:
        return ""
    return _strip_tags(text).replace("\\notag", "").replace("\\nonumber", "")


def formula_to_text(text: str) -> str:
    """A formula as text (its delimiters and tags gone), or itself where it does not convert."""
    text = strip_formula_tags(strip_formula_delimiters(unwrap_circled(text)))
    return latex_to_text(text, text)


def _unbrace_operator_group(match: re.Match[str]) -> str:
    inner = match.group(1)
    return inner if any(token in inner for token in _OPERATOR_TOKENS) else match.group(0)


@lru_cache(maxsize=1 << 16)
def normalised_formula(text: str) -> str:
    """``normalized_formula``: the formula as OmniDocBench compares formulas (module doc)."""
    text = strip_formula_tags(strip_formula_delimiters(unwrap_circled(text)))
    first = _FIRST_MATH.search(text)
    if first:
        text = (first.group(1) or first.group(2) or "").strip()
    text = _strip_phantoms(text)
    text = re.sub(r"\\[!,;:]", "", text)
    text = re.sub(r"(?<!\\)&", "", text)
    text = text.replace("\\mid", "|").replace("\\vert", "|")
    text = text.replace(r"\{", "").replace(r"\}", "").replace("~", "")
    for pattern in (_HSPACE, _BEGIN, _END, _ARRAYCOLSEP, _COLUMN_SPEC):
        text = pattern.sub("", text)
    text = text.strip(".")
    for noise in _FORMULA_NOISE:
        text = text.replace(noise, "")
    previous = None
    while text != previous:
        previous = text
        text = _SIMPLE_GROUP.sub(r"\1", text).replace("{}", "")
        text = re.sub(r"\{\{+", "{", text)
        text = re.sub(r"}}+", "}", text)
        text = _OPERATOR_GROUP.sub(_unbrace_operator_group, text)
    return re.sub(r"\s+", "", text.lower())


def _clean(text: str) -> str:
    """``clean_string``: no escaped or real tabs and newlines, then word characters and CJK."""
    text = unwrap_circled(text)
    for noise in ("\\t", "\\n", "\t", "\n", "/t", "/n"):
        text = text.replace(noise, "")
    return _NOT_WORD.sub("", text)


@lru_cache(maxsize=1 << 16)
def normalised_text(text: str) -> str:
    """``normalized_text``: a text block as OmniDocBench compares text (module docstring)."""
    return _clean(textblock_to_unicode(text))


def textblock_with_normalised_formulas(text: str) -> str:
    """``textblock_with_norm_formula``: each inline formula replaced by its normalised form."""
    replacements = []
    for match in INLINE_MATH.finditer(text):
        content = match.group(1) if match.group(1) is not None else match.group(2)
        replacements.append((match.start(), match.end(), normalised_formula(content)))
    for start, end, norm in sorted(replacements, reverse=True):
        text = text[:start] + norm.strip() + text[end:]
    return text
