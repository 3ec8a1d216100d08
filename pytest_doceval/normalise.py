"""Named, versioned normalisation profiles applied to truth and output alike before scoring.

A profile is an ordered tuple of small steps. Its name carries its version (`fair-v1`), and that
name is written into every report and baseline, so numbers made under different rules are never
compared silently. Change a step's behaviour only by adding a new profile version.

Profiles:

* ``raw``      -- Unicode NFC only (the `cer_raw` metric): what a naive comparison would see.
* ``plain-v1`` -- seed 000 section 3.4: NFKC, markdown stripping, whitespace normalisation.
* ``fair-v1``  -- seed 002 section 4.7, its thirteen normalisation steps in that order, after NFKC.

Both sides of a comparison go through the same profile (seed 002, principle 3). Where the seed
leaves a gap, the step's docstring says how it is closed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

Step = Callable[[str], str]


def _sub(pattern: str, repl: str | Callable[[re.Match[str]], str], flags: int = 0) -> Step:
    compiled = re.compile(pattern, flags)

    def step(text: str) -> str:
        return compiled.sub(repl, text)

    return step


# --- Unicode ---


def unicode_nfc(text: str) -> str:
    """Canonical composition: an NFD copy of the same Hangul or accented text becomes identical."""
    return unicodedata.normalize("NFC", text)


def unicode_nfkc(text: str) -> str:
    """Compatibility composition (seed 000 section 3.4.3): full-width to half-width, ligatures
    such as U+FB01 to ``fi``; also unifies line endings first so later line-anchored steps work."""
    return unicodedata.normalize("NFKC", text.replace("\r\n", "\n").replace("\r", "\n"))


# --- seed 002 section 4.7, steps 1-11 ---

_PANDOC_FENCE = re.compile(r"^[ \t]*:{3,}.*$", re.MULTILINE)
_PANDOC_ATTRS = re.compile(r"\{[ \t]*(?:[#.]|[\w-]+=)[^{}\n]*\}")
_BRACKETED_SPAN = re.compile(r"\[([^\[\]\n]*)\]\{[^{}\n]*\}")
_CROSS_REFERENCE = re.compile(
    r"\[(\\\[[^\]\n]*\\\]|[^\[\]\n]*)\]\(#[^)\s]*\)\{[^{}\n]*reference-type=[^{}\n]*\}"
)


def _cross_reference_text(match: re.Match[str]) -> str:
    # pandoc could not number an equation reference and wrote its label, e.g. "\[eq:x\]": the
    # PDF shows "(1)" there, so the label is an artifact; a resolved "[1]" is shown text.
    text = match.group(1)
    return "" if text.startswith("\\[") else text


def remove_pandoc_divs(text: str) -> str:
    r"""Step 1: pandoc fenced-div lines (``::: thebibliography``, ``:::``) and attribute blocks
    (``{#sec:intro}``, ``{.smallcaps}``); the content inside a div or a span is kept. Pandoc's
    cross-references (the reference attributes of seed 002's step 1) become their shown text:
    ``[1](#tab:x){reference-type="ref" ...}`` is ``1`` (the PDF shows "Table 1"), and an
    unresolved equation label ``[\[eq:x\]](#eq:x){...}`` goes (the PDF shows a number)."""
    text = _PANDOC_FENCE.sub("", text)
    text = _CROSS_REFERENCE.sub(_cross_reference_text, text)
    text = _BRACKETED_SPAN.sub(r"\1", text)
    return _PANDOC_ATTRS.sub("", text)


remove_pandoc_citations: Step = _sub(
    r"\[[^\[\]\n]*@[\w:.#$%&\-+?<>~/]+[^\[\]\n]*\]|(?<![\w.@])@[\w:-]+\b", ""
)
remove_pandoc_citations.__doc__ = """Step 2: pandoc citations ``[@key]``, ``[see @a; @b, p. 3]`` and
in-text ``@key``. An e-mail address (a word character before the ``@``) is left alone."""

remove_numeric_citations: Step = _sub(r"\[\d+(?:\s*[,;\-\u2013]\s*\d+)*\]", "")
remove_numeric_citations.__doc__ = """Step 3 (FR-001): numeric citations ``[1]``, ``[1,2]``,
``[1-3]``, ``[12, 15-17]`` (en dash ranges too). ``[Table 1]`` is not all digits and stays."""

remove_footnote_references: Step = _sub(r"\[\^[^\]\s]+\](?!:)", "")
remove_footnote_references.__doc__ = """Step 4: footnote references ``[^1]`` in running text. The
definition marker ``[^1]:`` is left for step 5, which the seed's order requires."""

_FOOTNOTE_DEFINITION = re.compile(r"^\[\^[^\]\s]+\]:.*(?:\n(?:[ \t]{4}|\t).*)*", re.MULTILINE)


def remove_footnote_definitions(text: str) -> str:
    """Step 5 (FR-006): footnote definitions ``[^1]: text``. Gap closed: pandoc wraps a long or
    multi-paragraph footnote onto indented continuation lines, which belong to the definition
    and are removed with it."""
    return _FOOTNOTE_DEFINITION.sub("", text)


images_to_captions: Step = _sub(r"!\[([^\]]*)\]\([^)]*\)(?:\{[^{}]*\})?", r"\1")
images_to_captions.__doc__ = """Step 6: ``![caption](path){width=50%}`` keeps only the caption."""

_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.DOTALL)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)[^$\n]+?(?<![\s\\])\$(?!\d)")


def remove_math(text: str) -> str:
    """Step 7: display math ``$$...$$`` (may span lines) and inline math ``$...$``. An escaped
    ``\\$`` and a price like ``$5 and $6`` (space after the opening sign) are not math."""
    return _INLINE_MATH.sub("", _DISPLAY_MATH.sub("", text))


remove_page_markers: Step = _sub(r"\[Page\s+\d+\]", "", re.IGNORECASE)
remove_page_markers.__doc__ = """Step 8: ``[Page N]`` markers that page-wise extractors insert."""

remove_size_attributes: Step = _sub(r"\{[^{}\n]*\b(?:width|height)\s*=[^{}\n]*\}", "")
remove_size_attributes.__doc__ = """Step 9: ``{width="50%" height="2in"}`` attribute blocks."""

remove_horizontal_rules: Step = _sub(r"^[ \t]*(?:[-*_][ \t]*){3,}$", "", re.MULTILINE)
remove_horizontal_rules.__doc__ = """Step 10 (FR-002): ``---``, ``***``, ``___`` (and spaced forms)
alone on a line, e.g. page separators. Pipe-table separator rows contain ``|`` and are not rules."""

remove_parenthetical_citations: Step = _sub(
    r"\((?:[A-Z][\w'\-]+)(?:\s+(?:et\s+al\.?|(?:&|and)\s+[A-Z][\w'\-]+))?,?\s+\d{4}[a-z]?\)", ""
)
remove_parenthetical_citations.__doc__ = """Step 11 (FR-005): ``(Author, 2020)``, ``(Author et al.,
2020)``, ``(Author & Other, 2020b)``; ``and`` is accepted beside ``&``."""


# --- step 12: markdown syntax (seed 000 section 3.4.1) ---

_TABLE_SEPARATOR = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?$", re.M)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_SETEXT_UNDERLINE = re.compile(r"^[ \t]*(?:=+|-+)[ \t]*$", re.MULTILINE)
_BLOCKQUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_BULLET = re.compile(r"^[ \t]*(?:[-*+\u2022\u25e6\u25aa\u2023\u2043\u00b7])[ \t]+", re.MULTILINE)
_CODE_FENCE = re.compile(r"^[ \t]*(?:```|~~~).*$", re.MULTILINE)
_LINK = re.compile(r"\[([^\[\]\n]*)\]\([^)\n]*\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_EMPHASIS = (
    re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.DOTALL),
    re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", re.DOTALL),
    re.compile(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])", re.DOTALL),
    re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.DOTALL),
)
_INLINE_CODE = re.compile(r"`+([^`\n]*)`+")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!$%&|~^<>\"'@:=])")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")


def _strip_emphasis(text: str) -> str:
    strong, em_star, em_under, strike = _EMPHASIS
    text = strong.sub(r"\2", text)
    text = em_star.sub(r"\1", text)
    text = em_under.sub(r"\1", text)
    return strike.sub(r"\1", text)


def strip_markdown(text: str) -> str:
    """Step 12: markdown syntax goes, its text stays (seed 000 section 3.4.1).

    Headings lose their ``#``, emphasis its markers, links keep their text, bullet markers go
    (``-``, ``*``, ``+`` and the glyphs a PDF shows in their place, so a ``-`` in the truth and a
    ``\u2022`` in the extraction cost nothing). Ordered-list numbers stay: they are visible text
    on both sides, and the seed's own example keeps ``1. Introduction`` after stripping
    ``## 1. Introduction``. Tables keep cell contents and lose pipes and
    separator rows, code fences go and code stays, pandoc's backslash escapes are undone, and
    inline HTML tags go.
    """
    text = _CODE_FENCE.sub("", text)
    text = _TABLE_SEPARATOR.sub("", text)
    text = _HEADING.sub(r"\1", text)
    text = _SETEXT_UNDERLINE.sub("", text)
    text = _BLOCKQUOTE.sub("", text)
    text = _BULLET.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _strip_emphasis(text)
    text = _HTML_TAG.sub("", text)
    text = re.sub(r"(?<!\\)\|", " ", text)
    return _ESCAPE.sub(r"\1", text)


# --- step 13: whitespace (seed 000 section 3.4.2) ---

_ANY_WHITESPACE = re.compile(r"\s+")
_SPACES = re.compile(r"[^\S\n]+")


def collapse_whitespace(text: str) -> str:
    """Step 13 of fair-v1: every run of whitespace, line breaks included, becomes one space, and
    the ends are trimmed. Line breaks are layout, not content: pandoc wraps the truth at its own
    width and a PDF breaks lines where the page does, so keeping them would charge a parser for
    the typesetter's choices."""
    return _ANY_WHITESPACE.sub(" ", text).strip()


def collapse_spaces_keep_lines(text: str) -> str:
    """Seed 000 section 3.4.2 as written (plain-v1): runs of spaces and tabs become one space,
    line endings are LF (done by NFKC step), lines are trimmed, blank-line runs collapse to one
    line break, and the ends are trimmed."""
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


# --- profiles ---


@dataclass(frozen=True)
class Profile:
    """A named, versioned sequence of normalisation steps."""

    name: str
    steps: tuple[tuple[str, Step], ...]
    description: str

    def __call__(self, text: str) -> str:
        for _, step in self.steps:
            text = step(text)
        return text

    @property
    def step_names(self) -> list[str]:
        return [name for name, _ in self.steps]


RAW = Profile("raw", (("unicode_nfc", unicode_nfc),), "Unicode NFC only")

PLAIN_V1 = Profile(
    "plain-v1",
    (
        ("unicode_nfkc", unicode_nfkc),
        ("strip_markdown", strip_markdown),
        ("collapse_spaces_keep_lines", collapse_spaces_keep_lines),
    ),
    "seed 000 section 3.4: NFKC, markdown stripping, whitespace (line breaks kept)",
)

FAIR_V1 = Profile(
    "fair-v1",
    (
        ("unicode_nfkc", unicode_nfkc),
        ("remove_pandoc_divs", remove_pandoc_divs),
        ("remove_pandoc_citations", remove_pandoc_citations),
        ("remove_numeric_citations", remove_numeric_citations),
        ("remove_footnote_references", remove_footnote_references),
        ("remove_footnote_definitions", remove_footnote_definitions),
        ("images_to_captions", images_to_captions),
        ("remove_math", remove_math),
        ("remove_page_markers", remove_page_markers),
        ("remove_size_attributes", remove_size_attributes),
        ("remove_horizontal_rules", remove_horizontal_rules),
        ("remove_parenthetical_citations", remove_parenthetical_citations),
        ("strip_markdown", strip_markdown),
        ("collapse_whitespace", collapse_whitespace),
    ),
    "seed 002 section 4.7 processing order after NFKC; whitespace fully collapsed",
)

PROFILES: dict[str, Profile] = {p.name: p for p in (RAW, PLAIN_V1, FAIR_V1)}


def get_profile(name: str) -> Profile:
    """The profile called `name`; a clear error lists the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise KeyError(f"unknown normalization profile {name!r}; known profiles: {known}") from None
