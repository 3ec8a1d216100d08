"""olmOCR-bench's text normalisation, applied to page outputs and fact strings before matching.

`normalise_text` is one pass of olmOCR-bench's ``normalize_text`` (allenai/olmocr,
``olmocr/bench/tests.py`` at f7cfe4c), step for step, so that every verdict is olmOCR-bench's:

1. ``<br>`` and ``<br/>`` become a space;
2. bold markup is stripped: ``**x**``, ``__x__``, ``<b>``/``</b>`` and ``<i>``/``</i>`` tags;
3. paired markup is stripped again, bold (``**x**``, ``__x__``) then italic (``*x*``, ``_x_``),
   within one line (``.`` does not cross a newline, so a lone ``*`` bullet does not pair with one
   three paragraphs later);
4. every run of whitespace (Python's Unicode ``\\s``, so NBSP and the U+2000 spaces too) becomes
   one space;
5. Unicode NFC;
6. curly quotes to ASCII quotes, the dashes U+2011, U+2012, U+2013, U+2014 and U+2212 to ``-``,
   fullwidth low line to ``_``, micro sign U+00B5 to Greek mu U+03BC.

Invisible characters (zero-width space, soft hyphen, BOM: `INVISIBLE`) are kept, as olmOCR-bench
keeps them: ``exam\\u00adple`` is one edit away from ``example``. (Until scoring revision 2 they
were deleted first; that made some facts pass here that fail in olmOCR-bench.)

The pass runs once, as in olmOCR, and so is not idempotent: whitespace is collapsed after the
markup steps, so ``"* one\\n* two"`` keeps both bullets (``"* one * two"``), and normalising that
again pairs them. Repeating the pass to a fixed point would make it idempotent but would strip
every ``*`` bullet list and ``snake_case\\nnames`` pair, which olmOCR keeps, and so move scores
away from olmOCR-bench's; only the footnote check normalises twice, where olmOCR does. It is
idempotent on text without ``*``, ``_``, U+FF3F and ``<`` (tests check both statements).

`normalise_latex` is the math facts' own normaliser (olmOCR compares LaTeX without its text
normaliser, which would eat ``_`` subscripts): NFC, invisible characters deleted, whitespace
dropped except where it ends a control word before a letter (``\\alpha x``), and ``\\rightarrow``
spelled ``\\to`` (the two render identically).
"""

from __future__ import annotations

import re
import string
import unicodedata

__all__ = ["INVISIBLE", "normalise_latex", "normalise_text"]

# Zero-width and invisible format characters, deleted from LaTeX (`normalise_latex`): they never
# change how math renders. Python's `\s` does not match any of them (category Cf).
INVISIBLE = frozenset(
    {
        "\u00ad",  # soft hyphen: invisible unless at a line break, common in PDF text layers
        "\u180e",  # Mongolian vowel separator (a space before Unicode 6.3)
        "\u200b",  # zero-width space
        "\u200c",  # zero-width non-joiner
        "\u200d",  # zero-width joiner
        "\u2060",  # word joiner
        "\u2061",  # function application (invisible operator)
        "\u2062",  # invisible times
        "\u2063",  # invisible separator
        "\u2064",  # invisible plus
        "\ufeff",  # zero-width no-break space / byte order mark
    }
)
_DELETE_INVISIBLE = {ord(c): None for c in INVISIBLE}

_BR = re.compile(r"<br/?>")
_BOLD_STARS = re.compile(r"\*\*(.*?)\*\*")
_BOLD_UNDERSCORES = re.compile(r"__(.*?)__")
# Two passes, b then i, as in olmOCR: "<i<b>>" loses "<b>" and then the "<i>" it leaves.
_HTML_BOLD_TAG = re.compile(r"</?b>")
_HTML_ITALIC_TAG = re.compile(r"</?i>")
_BOLD_PAIR = re.compile(r"(\*\*|__)(.*?)\1")
_ITALIC_PAIR = re.compile(r"(\*|_)(.*?)\1")
_WHITESPACE = re.compile(r"\s+")

# olmOCR's replacement table, as a str.translate map (one C-level pass instead of 13 .replace).
_ASCII_FOLD = str.maketrans(
    {
        "\u2018": "'",  # left single quotation mark
        "\u2019": "'",  # right single quotation mark
        "\u201a": "'",  # single low-9 quotation mark
        "\u201c": '"',  # left double quotation mark
        "\u201d": '"',  # right double quotation mark
        "\u201e": '"',  # double low-9 quotation mark
        "\uff3f": "_",  # fullwidth low line
        "\u2013": "-",  # en dash
        "\u2014": "-",  # em dash
        "\u2011": "-",  # non-breaking hyphen
        "\u2012": "-",  # figure dash
        "\u2212": "-",  # minus sign
        "\u00b5": "\u03bc",  # micro sign -> Greek small mu
    }
)


def normalise_text(text: str) -> str:
    """olmOCR-bench's normalisation of `text`: one pass of the steps in the module docstring."""
    text = _BR.sub(" ", text)
    text = _BOLD_STARS.sub(r"\1", text)
    text = _BOLD_UNDERSCORES.sub(r"\1", text)
    text = _HTML_BOLD_TAG.sub("", text)
    text = _HTML_ITALIC_TAG.sub("", text)
    text = _BOLD_PAIR.sub(r"\2", text)
    text = _ITALIC_PAIR.sub(r"\2", text)
    text = _WHITESPACE.sub(" ", text)
    text = unicodedata.normalize("NFC", text)
    return text.translate(_ASCII_FOLD)


# A LaTeX token: a control word, a control symbol (backslash and any one character), a run of
# whitespace, or any other single character.
_LATEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.DOTALL)
_LATEX_SYNONYMS = {r"\rightarrow": r"\to"}
_ASCII_LETTERS = frozenset(string.ascii_letters)
_CONTROL_WORD = re.compile(r"\\[A-Za-z]+")


def normalise_latex(latex: str) -> str:
    """Canonical spelling of a LaTeX math string for equality comparison (module docstring).

    Whitespace never changes how math renders except after a control word, where it separates
    the word from a following letter (``\\alpha x`` is not ``\\alphax``); a single space is
    kept exactly there. A control space (backslash + whitespace) renders as a space and stays as
    ``\\ ``. The work is done on the decomposed form (NFD) and composed (NFC) at the end, so
    that accents that meet once a space is dropped compose the same way every time.
    """
    text = unicodedata.normalize("NFD", latex).translate(_DELETE_INVISIBLE)
    out: list[str] = []
    for token in _LATEX_TOKEN.findall(text):
        if token.isspace():
            continue
        if token[0] == "\\" and len(token) == 2 and token[1].isspace():
            token = "\\ "
        token = _LATEX_SYNONYMS.get(token, token)
        follows_control_word = bool(out) and _CONTROL_WORD.fullmatch(out[-1]) is not None
        if follows_control_word and token[0] in _ASCII_LETTERS:  # only TeX letters would merge
            out.append(" ")
        out.append(token)
    return unicodedata.normalize("NFC", "".join(out))
