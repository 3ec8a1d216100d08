"""The LaTeX OmniDocBench v1.6 hands to CDM for one matched formula (its
``src/core/preprocess/formula_cdm.py``, ``_attach_formula_cdm_surrogates`` and
``_process_single_cdm_sample``).

* Matrices: where either side holds a matrix (``bmatrix``, an ``array`` in ``\\left[``, ...),
  the prediction is also tried sanitised (style macros unwrapped, cells without outer braces,
  ``\\dfrac`` as ``\\frac``, an ``aligned`` around one matrix dropped, a one-column array of
  matrices laid side by side), and the truth replaced by its sanitised form where its array has
  an empty column spec.
* Chinese arithmetic typed as text and matched to a formula: the text is scored as a formula
  (``pred_cdm``), also rewritten as LaTeX (``×`` -> ``\\times``, ...).
* Both sides lose their math delimiters and tags; the prediction its ```` ```latex ```` fence.

`cdm_inputs` gives the truth and the one or two predictions to render; the score is the
better of the two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pytest_doceval.kinds.omnidocbench.formula_blocks import as_formula_candidate
from pytest_doceval.kinds.omnidocbench.formula_lines import split_rows
from pytest_doceval.kinds.omnidocbench.normalise import strip_formula_delimiters, strip_formula_tags
from pytest_doceval.kinds.omnidocbench.pairs import Pair

_MATRICES: Final = ("matrix", "bmatrix", "pmatrix", "vmatrix", "Vmatrix", "smallmatrix")
_MATRIX_GROUP: Final = "|".join(_MATRICES)
_STYLE: Final = re.compile(
    r"\\(?:boldsymbol|mathbf|mathrm|mathit|mathsf|mathtt|textbf)\s*\{([^{}]+)\}"
)
_DET: Final = re.compile(r"\\operatorname\s*\{\s*det\s*\}")
_EMPTY_SPEC: Final = re.compile(r"\\begin\{array\}\s*\{\s*\}")
_ONE_COLUMN_ARRAY: Final = re.compile(
    r"^\s*\\begin\{array\}\s*\{\s*l\s*\}(?P<body>.*)\\end\{array\}\s*$", re.S
)
_ALIGNED_MATRIX: Final = re.compile(
    r"^\s*\\begin\{aligned\*?\}\s*&?\s*"
    rf"(?P<body>\\begin\{{(?:{_MATRIX_GROUP})\}}.*?\\end\{{(?:{_MATRIX_GROUP})\}})"
    r"\s*(?:\\\\\s*)?\\end\{aligned\*?\}\s*$",
    re.S,
)
_ARRAY: Final = re.compile(
    r"\\begin\{array\}\s*\{(?P<spec>[^}]*)\}(?P<body>.*?)\\end\{array\}", re.S
)
_MATRIX: Final = re.compile(
    rf"\\begin\{{(?P<env>{_MATRIX_GROUP})\}}(?P<body>.*?)\\end\{{(?P=env)\}}", re.S
)
_CJK: Final = re.compile(r"[一-鿿]")
_SURROGATE_HINTS: Final = (
    "=", "≈", "≠", "≤", "≥", "÷", "×", "+", "-", "/", "%", "^", "_",
    r"\frac", r"\div", r"\times", r"\sum", r"\int", r"\(", r"\)", r"\[", r"\]", "$",
)  # fmt: skip


def _bare(text: str) -> str:
    return strip_formula_tags(strip_formula_delimiters(text).strip())


def _has_matrix(text: str) -> bool:
    """``_contains_matrix_hint``."""
    if not text:
        return False
    if any(f"\\begin{{{env}}}" in text for env in _MATRICES):
        return True
    return "\\begin{array}" in text and ("\\left[" in text or "\\right]" in text or "&" in text)


def _braced(text: str) -> bool:
    if not text or text[0] != "{" or text[-1] != "}":
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "{") - (ch == "}")
        if ch == "}" and depth == 0 and i != len(text) - 1:
            return False
    return depth == 0


def _unbraced(text: str) -> str:
    """``_strip_outer_braces``: outer ``{..}`` pairs removed while something is left."""
    text = text.strip()
    while _braced(text) and (inner := text[1:-1].strip()):
        text = inner
    return text


def _cells(text: str, separator: str) -> list[str]:
    """``_split_top_level_cells``: `text` split at top-level `separator` (no escapes)."""
    parts: list[str] = []
    current: list[str] = []
    braces = envs = 0
    i = 0
    while i < len(text):
        for token, step in (("\\begin{", 1), ("\\end{", -1)):
            if text.startswith(token, i) and (close := text.find("}", i + len(token))) != -1:
                current.append(text[i : close + 1])
                envs = max(0, envs + step)
                i = close + 1
                break
        else:
            at_top = braces == 0 and envs == 0
            if at_top and text.startswith(separator, i):
                parts.append("".join(current).strip())
                current = []
                i += len(separator)
                continue
            current.append(text[i])
            braces = (
                braces + 1 if text[i] == "{" else max(0, braces - 1) if text[i] == "}" else braces
            )
            i += 1
    if tail := "".join(current).strip():
        parts.append(tail)
    return parts


def _clean_body(body: str) -> str:
    rows = ["&".join(_unbraced(c) for c in _cells(row, "&")) for row in _cells(body, "\\\\")]
    return r"\\".join(rows)


def _cells_unbraced(text: str) -> str:
    """``_normalize_matrix_env_cells``."""
    text = _ARRAY.sub(
        lambda m: (
            f"\\begin{{array}}{{{m.group('spec')}}}{_clean_body(m.group('body'))}\\end{{array}}"
        ),
        text,
    )
    return _MATRIX.sub(
        lambda m: (
            f"\\begin{{{m.group('env')}}}{_clean_body(m.group('body'))}\\end{{{m.group('env')}}}"
        ),
        text,
    )


def _styles_unwrapped(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _STYLE.sub(r"\1", text)
    return _DET.sub(r"\\det", text)


def _sanitised_fragment(text: str) -> str:
    """``_sanitize_matrix_fragment``."""
    text = _EMPTY_SPEC.sub(r"\\begin{array}{l}", _unbraced(text)).replace(r"\dfrac", r"\frac")
    text = re.sub(r"_\{_\{([^{}]+)\}\}", r"_{\1}", text)
    text = re.sub(r"x_\{_\{([^{}]+)\}\}", r"x_{\1}", text)
    text = _cells_unbraced(_styles_unwrapped(text))
    text = re.sub(rf"(\\begin\{{(?:{_MATRIX_GROUP})\}})\s*\\\\", r"\1 ", text)
    text = re.sub(rf"\\\\\s*(\\end\{{(?:{_MATRIX_GROUP})\}})", r" \1", text)
    aligned = _ALIGNED_MATRIX.match(text)
    if aligned:
        text = aligned.group("body").strip()
    return text.strip()


def sanitised(text: str, truth: str = "") -> str:
    """``sanitize_formula_for_cdm``: a formula's bare LaTeX, matrices sanitised."""
    formula = _bare(text)
    if not formula:
        return ""
    if not (_has_matrix(formula) or _has_matrix(strip_formula_tags(truth))):
        return formula.strip()
    formula = _sanitised_fragment(formula)
    one_column = _ONE_COLUMN_ARRAY.match(formula)
    if one_column:
        rows = [
            _sanitised_fragment(row)
            for row in split_rows(one_column.group("body"), escapes=False)
            if row.strip()
        ]
        if rows and any(_has_matrix(row) for row in rows):
            formula = r" \qquad ".join(rows)
    return _sanitised_fragment(formula).strip()


def matrix_variants(gt: str, pred: str) -> tuple[str, str]:
    """``build_matrix_cdm_variants``: the truth for CDM, and a sanitised prediction ('' if
    none differs)."""
    raw_gt, raw_pred = _bare(gt), _bare(pred)
    if not raw_gt and not raw_pred:
        return "", ""
    if not (_has_matrix(raw_gt) or _has_matrix(raw_pred)):
        return raw_gt, ""
    clean_gt = sanitised(raw_gt, raw_gt)
    gt_cdm = clean_gt if _EMPTY_SPEC.search(_bare(raw_gt)) else raw_gt
    pred_cdm = sanitised(raw_pred, clean_gt or raw_gt)
    return gt_cdm or raw_gt, pred_cdm if pred_cdm and pred_cdm != raw_pred else ""


def _text_as_formula(pair: Pair) -> bool:
    """``_should_attach_formula_cdm_surrogate``: short Chinese arithmetic typed as text."""
    if pair.pred_kind in ("equation_inline", "equation_isolated", ""):
        return False
    pred = " ".join(pair.pred.split())
    if not pred or len(pred) > 240:
        return False
    if not (_CJK.search(pair.gt) or _CJK.search(pred)):
        return False
    if pair.edit > 0.35:
        return False
    if any(token in pred for token in _SURROGATE_HINTS):
        return True
    return pair.edit <= 0.28 and len(pred) <= 80


@dataclass(frozen=True)
class CdmInputs:
    """One matched formula's LaTeX for CDM: the truth, the prediction, another prediction
    to try ('' if none), and whether text was taken as a formula (``pred_cdm``)."""

    gt: str
    pred: str
    pred_alt: str
    text_as_formula: bool


def _cdm_bare(text: str) -> str:
    """``_strip_cdm_math_wrappers``: outer ``$`` stripped (twice, as OmniDocBench strips them),
    one ``\\[..\\]`` or ``\\(..\\)`` unwrapped, tags out."""
    for _ in range(2):
        text = text.strip().lstrip("$").rstrip("$").strip()
    if text.startswith("\\[") and text.endswith("\\]"):
        text = text[2:-2].strip()
    if text.startswith("\\(") and text.endswith("\\)"):
        text = text[2:-2].strip()
    return strip_formula_tags(text).strip()


def _unfenced(text: str) -> str:
    return text.split("```latex")[-1].split("```")[0]


def cdm_inputs(pair: Pair) -> CdmInputs:
    """The LaTeX CDM renders for a matched truth formula (module docstring)."""
    gt_cdm, alt = matrix_variants(pair.gt, pair.pred)
    pred_cdm: str | None = None
    surrogate = _text_as_formula(pair)
    if surrogate:
        raw = pair.pred.strip()
        rewritten = as_formula_candidate(pair.pred)
        if raw:
            pred_cdm = raw
            if rewritten and rewritten != raw and not alt:
                alt = rewritten
            gt_cdm = gt_cdm or pair.gt
    gt = _cdm_bare(gt_cdm or pair.gt)
    pred = _cdm_bare(_unfenced(pair.pred if pred_cdm is None else pred_cdm))
    return CdmInputs(gt, pred, _cdm_bare(_unfenced(alt)) if alt else "", pred_cdm is not None)
