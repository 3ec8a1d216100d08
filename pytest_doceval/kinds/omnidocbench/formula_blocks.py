"""The formulas OmniDocBench v1.6 finds in a predicted page besides its ``$$``/``\\[`` blocks
(``src/core/preprocess/extract.py``): how a display formula becomes blocks, and which text,
image alt text and table cells it also offers the formula matcher ("rescue" candidates).

* A display formula with an equation number before it (``(3)``) or a caption after it
  (``\\quad \\text{for all x}``) loses them to text blocks (``equation_caption``); one made of
  several arithmetic statements separated by ``\\quad`` is split into one formula each.
* A paragraph, an image's alt text or a table cell that reads like a formula (operators and
  digits, few words: `formula_like`) is offered as a formula candidate, rewritten as LaTeX
  (``×`` -> ``\\times``, ...; `as_formula_candidate`).
* A short inline formula that is only a label (``$x_1$``-like names, ``$\\xrightarrow$``) is
  dropped (`is_label_formula`).
"""

from __future__ import annotations

import re
from typing import Final

from bs4 import BeautifulSoup

from pytest_doceval.kinds.omnidocbench.latex_text import latex_to_text
from pytest_doceval.kinds.omnidocbench.normalise import INLINE_MATH
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock

_FORMULA_TOKEN: Final = re.compile(
    r"(\\frac|\\sqrt|\\sum|\\int|\\prod|\\times|\\div|\\square|\\cdots|\\left|\\right|"
    r"\\approx|\\xrightarrow|\\rightarrow|\\longrightarrow|"
    r"=|<|>|≤|≥|≈|÷|×|±|∑|∫|√|→|\^|_|□|△|…|%|/|\+|-)"
)
_CJK: Final = re.compile(r"[\u4e00-\u9fff]")
_ALPHA_WORD: Final = re.compile(r"[A-Za-z]{4,}")
_DISPLAY_IN_TEXT: Final = re.compile(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]", re.DOTALL)
_WRAPPERS: Final = tuple(
    re.compile(p, re.DOTALL)
    for p in (r"\$\$(.*?)\$\$", r"\\\[(.*?)\\\]", r"\\\((.*?)\\\)", r"\$(.*?)\$")
)
_RESIDUAL_MATH: Final = re.compile(r"(\\[A-Za-z]+|[=<>≤≥÷×±∑∫√\^_□△…%/()+\-])")
_CANDIDATE_SYMBOLS: Final = (
    ("……", " \\cdots \\cdots "),
    ("…", " \\cdots "),
    ("×", " \\times "),
    ("÷", " \\div "),
    ("≤", " \\leq "),
    ("≥", " \\geq "),
    ("≠", " \\neq "),
    ("≈", " \\approx "),
    ("□", " \\square "),
    ("△", " \\triangle "),
    ("（", "("),
    ("）", ")"),
    ("［", "["),
    ("］", "]"),
    ("｛", "{"),
    ("｝", "}"),
)
_ARROW: Final = re.compile(r"(?P<lhs>.*?)\\xrightarrow\s*\{(?P<label>[^{}]+)\}(?P<rhs>.*)")
_REDOX: Final = "氧化还原反应"
_ENVELOPES: Final = (("\\[", "\\]"), ("\\(", "\\)"), ("$$", "$$"), ("$", "$"))
_SPACING: Final = r"(?:\\qquad|\\quad|\\enspace|\\,|\\;|\\:)"
_LEADING_NUMBER: Final = re.compile(
    r"^\s*(?P<prefix>(?:\\left\(\s*[0-9IVXivx]+\s*\\right\)|\(\s*[0-9IVXivx]+\s*\)))\s*"
    rf"(?:{_SPACING}\s*)*"
)
_TRAILING_CAPTIONS: Final = (
    re.compile(rf"(?P<sep>{_SPACING}\s*)(?P<caption>\\text\s*\{{[^{{}}]*\}}\.?)\s*$"),
    re.compile(rf"(?P<sep>{_SPACING}\s*)(?P<caption>\([^)]*[A-Za-z][^)]*\)\.?)\s*$"),
)
_TRAILING_SPACING: Final = re.compile(rf"(?:{_SPACING}\s*)+$")
_NOT_ARITHMETIC: Final = re.compile(
    r"\\(mathbf|left|right|cdot|lambda|Gamma|varGamma|text|matrix|pmatrix|bmatrix)"
)
_RELATIONS: Final = ("=", "\\approx", "≈", "\\neq", "≠", "\\leq", "≤", "\\geq", "≥")
_CELL_OPERATORS: Final = ("=", "+", "-", "×", "÷", "/", "≈", "\\times", "\\div", "\\approx")
_STRONG_MATH: Final = (
    "=",
    "<",
    ">",
    "≤",
    "≥",
    "≈",
    "≠",
    "^",
    "+",
    "-",
    "/",
    "\\cdot",
    "\\frac",
    "\\sqrt",
    "\\sum",
    "\\int",
    "\\times",
    "\\div",
    "\\approx",
    "\\neq",
    "\\leq",
    "\\geq",
    "\\xrightarrow",
    "\\longrightarrow",
)
_LABELS: Final = (
    re.compile(r"[A-Za-z0-9._,-]+"),
    re.compile(r"[A-Za-z][A-Za-z0-9_.,-]*"),
    re.compile(r"[A-Za-z0-9]+Oy"),
    re.compile(r"[ΓγλμνxyzuvwMNOabcABC0-9._,-]+"),
)


def _squash(text: str) -> str:
    return " ".join(text.split())


def unwrap_math(text: str) -> str:
    """``_strip_formula_wrappers_keep_content``: every math wrapper replaced by its content,
    with a space either side."""
    for wrapper in _WRAPPERS:
        text = wrapper.sub(lambda m: f" {m.group(1)} ", text)
    return text


def formula_like(text: str) -> bool:
    """``_formula_like_text``: a short text of operators and digits rather than words."""
    text = _squash(text)
    if not text or len(text) > 220:
        return False
    bare = unwrap_math(text)
    compact = re.sub(r"\s+", "", bare)
    if not compact:
        return False
    operators = len(_FORMULA_TOKEN.findall(bare))
    digits = len(re.findall(r"\d", bare))
    inline = len(list(INLINE_MATH.finditer(text))) + len(list(_DISPLAY_IN_TEXT.finditer(text)))
    cjk = len(_CJK.findall(bare))
    words = len(_ALPHA_WORD.findall(bare))
    residual = re.sub(r"\s+", "", re.sub(r"\d", " ", _RESIDUAL_MATH.sub(" ", bare)))
    if inline > 0 and len(residual) <= 18 and operators >= 1:
        return True
    if ("□" in bare or "\\square" in bare) and operators >= 1 and words <= 1 and len(compact) <= 80:
        return True
    arrow = "\\xrightarrow" in bare or "\\longrightarrow" in bare or "→" in bare
    if arrow and cjk <= 24 and len(compact) <= 120:
        return True
    if operators >= 2 and digits >= 1 and words <= 2 and cjk <= 12 and len(compact) <= 100:
        return True
    return operators >= 3 and words == 0 and cjk <= 18 and len(compact) <= 80


def as_formula_candidate(text: str) -> str:
    """``_sanitize_formula_candidate``: formula-like text as display LaTeX ('' if empty)."""
    text = _squash(text.replace("\u3000", " "))
    if not text:
        return ""
    text = unwrap_math(text)
    for symbol, latex in _CANDIDATE_SYMBOLS:
        text = text.replace(symbol, latex)
    arrow = _ARROW.search(text)
    if arrow:
        lhs, label, rhs = (arrow.group(g).strip() for g in ("lhs", "label", "rhs"))
        if label and "\\" not in label:
            label = f"\\text{{{label}}}"
        if rhs.endswith(_REDOX):
            main = rhs[: -len(_REDOX)].strip()
            text = f"{lhs} \\underset{{{_REDOX}}}{{\\xrightarrow{{{label}}}}} {main}".strip()
        else:
            text = f"{lhs} \\xrightarrow{{{label}}} {rhs}".strip()
    text = re.sub(r"(?<!\\)%", r"\\%", text)
    text = re.sub(r"(?<!\\)&", r"\\&", text)
    text = re.sub(r"\s+", " ", text).strip()
    if not text:
        return ""
    if text.startswith(("\\begin{", "$$", "\\[")):
        return text
    return "\\[ " + text + " \\]"


def rescue_candidate(text: str, start: int, end: int, fine: str) -> PredBlock | None:
    """``_append_formula_rescue_candidate``: `text` offered to the formula matcher, or None."""
    if not formula_like(text):
        return None
    content = as_formula_candidate(text)
    if not content:
        return None
    arrow = "\\xrightarrow" in content or "\\longrightarrow" in content
    return PredBlock("equation_isolated" if arrow else "formula_rescue", start, end, content, fine)


def _formula_cell(text: str) -> bool:
    compact = _squash(text)
    if not compact or len(compact) > 120 or not formula_like(compact):
        return False
    digits = len(re.findall(r"\d", compact))
    fraction = "\\frac" in compact or bool(re.search(r"\d+\s*/\s*\d+", compact))
    operators = sum(token in compact for token in _CELL_OPERATORS)
    if operators < 1:
        return False
    return digits >= 2 or fraction


def table_cell_candidates(html_table: str, table_start: int) -> list[PredBlock]:
    """``_build_html_table_formula_rescue_items``: the cells of a table that read as formulas,
    at made-up positions from the table's start on."""
    out: list[PredBlock] = []
    try:
        soup = BeautifulSoup(html_table, "html.parser")
    except Exception:  # its own guard: a table bs4 cannot read offers nothing
        return out
    cursor = max(table_start, 0)
    for cell in soup.find_all(["td", "th"]):
        text = _squash(cell.get_text(separator=" "))
        if not _formula_cell(text):
            continue
        content = as_formula_candidate(text)
        if not content:
            continue
        end = cursor + max(len(text), 1)
        out.append(PredBlock("equation_isolated", cursor, end, content, "table_formula_rescue"))
        cursor = end + 1
    return out


def _envelope(text: str) -> tuple[str, str, str]:
    text = _squash(text)
    for left, right in _ENVELOPES:
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
            return left, right, text[len(left) : len(text) - len(right)].strip()
    return "", "", text


def _wrap(inner: str, left: str, right: str) -> str:
    inner = inner.strip()
    if not inner:
        return ""
    return f"{left} {inner} {right}" if left and right else inner


def plain_fragment(text: str) -> str:
    """``_latex_fragment_to_plain_text``: a LaTeX fragment as one line of text."""
    text = text.strip()
    if not text:
        return ""
    plain = latex_to_text(text, text).replace("\xa0", " ")
    return re.sub(r"\s+", " ", plain).strip()


def _caption_like(text: str) -> bool:
    raw = text.strip()
    plain = plain_fragment(raw) if raw else ""
    if not plain:
        return False
    letters = len(re.findall(r"[A-Za-z]", plain))
    words = re.findall(r"[A-Za-z]{2,}", plain)
    math = len(re.findall(r"(\\[A-Za-z]+|[=<>≤≥÷×±∑∫√_^{}])", raw))
    digits = len(re.findall(r"\d", plain))
    core = plain[1:-1].strip() if plain.startswith("(") and plain.endswith(")") else plain
    if re.fullmatch(r"[0-9IVXivx]+", core.replace(" ", "")):
        return False
    if letters >= 10 and len(words) >= 2 and math <= 6:
        return True
    return letters >= 14 and digits == 0 and math <= 3


def _has_margin_text(formula: str) -> bool:
    _, _, inner = _envelope(formula)
    if not inner:
        return False
    if _LEADING_NUMBER.match(inner):
        return True
    for pattern in _TRAILING_CAPTIONS:
        match = pattern.search(inner)
        if match and _caption_like(match.group("caption")):
            return True
    return False


def _margin_item(text: str, start: int, end: int) -> PredBlock | None:
    plain = plain_fragment(text).strip()
    return PredBlock("text_all", start, end, plain, "equation_caption") if plain else None


def _split_margin_text(formula: str, start: int, end: int) -> tuple[str, list[PredBlock]]:
    compact = _squash(formula)
    left, right, working = _envelope(compact)
    if not working:
        return compact, []
    extra: list[PredBlock] = []
    lead = _LEADING_NUMBER.match(working)
    if lead:
        prefix = lead.group("prefix").strip()
        item = _margin_item(prefix, start, min(end, start + max(len(prefix), 1)))
        if item:
            extra.append(item)
        working = working[lead.end() :].strip()
    while working:
        for pattern in _TRAILING_CAPTIONS:
            match = pattern.search(working)
            if not match or not _caption_like(caption := match.group("caption").strip()):
                continue
            item = _margin_item(caption, max(start, end - max(len(caption), 1)), end)
            if item:
                extra.append(item)
            working = working[: match.start("sep")].rstrip()
            break
        else:
            break
    working = _TRAILING_SPACING.sub("", working).strip()
    if not working:
        return compact, []
    return _wrap(working, left, right), extra


def _arithmetic_statement(segment: str) -> bool:
    compact = _squash(segment)
    if not compact or len(compact) > 160 or "\\begin{" in compact or "\\end{" in compact:
        return False
    if _NOT_ARITHMETIC.search(compact):
        return False
    digits = len(re.findall(r"\d", compact))
    fraction = "\\frac" in compact or bool(re.search(r"\d+\s*/\s*\d+", compact))
    relations = sum(token in compact for token in _RELATIONS)
    if relations < 1:
        return False
    return digits >= 2 or fraction


def _split_statements(formula: str, start: int, end: int, fine: str | None) -> list[PredBlock]:
    left, right, inner = _envelope(_squash(formula))
    if not inner or ("\\quad" not in inner and "\\qquad" not in inner):
        return []
    segments = [s.strip() for s in re.split(r"\s*(?:\\qquad|\\quad)\s*", inner) if s.strip()]
    if len(segments) <= 1 or not all(_arithmetic_statement(s) for s in segments):
        return []
    span = max(end - start, len(segments)) // len(segments)
    per = max(span, 1)
    out = []
    for i, segment in enumerate(segments):
        seg_start = start + i * per
        seg_end = end if i == len(segments) - 1 else min(end, seg_start + per)
        out.append(
            PredBlock("equation_isolated", seg_start, seg_end, _wrap(segment, left, right), fine)
        )
    return out


def display_formula_blocks(
    formula: str, start: int, end: int, fine: str | None = None
) -> list[PredBlock]:
    """``_append_display_formula_item``: one display formula's blocks (module docstring)."""
    extra: list[PredBlock] = []
    if _has_margin_text(formula):
        formula, extra = _split_margin_text(formula, start, end)
    blocks = _split_statements(formula, start, end, fine)
    if not blocks:
        blocks = [PredBlock("equation_isolated", start, end, formula, fine)]
    return blocks + extra


def is_label_formula(block: PredBlock) -> bool:
    """``_should_drop_short_inline_formula_item``: an inline formula that only names a thing."""
    if block.category != "equation_isolated" or block.fine != "equation_inline":
        return False
    raw = block.content.strip()
    if not raw:
        return False
    core = unwrap_math(raw)
    compact = re.sub(r"\s+", "", core)
    if compact.startswith(("\\xrightarrow", "\\longrightarrow")):
        return True
    if not compact or len(compact) > 24 or any(token in core for token in _STRONG_MATH):
        return False
    return any(pattern.fullmatch(compact) for pattern in _LABELS)
