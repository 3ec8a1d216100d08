"""Named, versioned normalisation profiles applied to truth and output alike before scoring.

A profile is an ordered tuple of small steps. Its name carries its version (`fair-v1`), and that
name is written into every report and baseline, so numbers made under different rules are never
compared silently. Change a step's behaviour only by adding a new profile version.

Every profile starts with `unify_line_endings`, the one function that turns every line break
(CRLF, lone CR, VT, FF, U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR) into ``\\n``. The
scope split (`scope.py`) and structure extraction (`metrics/structure.py`) call it first too, so
a truth checked out with ``autocrlf`` or an output written on Windows scores exactly like its LF
copy. Patterns that look at lines use `HSPACE` (any Unicode whitespace but ``\\n``) where an
unnormalised text reaches them, so a no-break space around a heading is still a space.

Profiles:

* ``raw``      -- line endings unified, Unicode NFC (the `cer_raw` metric): what a naive
  comparison would see, minus the line-ending convention of the file system.
* ``plain-v1`` -- seed 000 section 3.4: NFKC, markdown stripping, whitespace normalisation.
* ``fair-v1``  -- seed 002 section 4.7, its thirteen normalisation steps in that order, after NFKC
  and the removal of C1 control characters (`remove_c1_controls`).

Both sides of a comparison go through the same profile (seed 002, principle 3). Where the seed
leaves a gap, the step's docstring says how it is closed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from pytest_doceval.text import markdown as md

Step = Callable[[str], str]


def _sub(pattern: str, repl: str | Callable[[re.Match[str]], str], flags: int = 0) -> Step:
    compiled = re.compile(pattern, flags)

    def step(text: str) -> str:
        return compiled.sub(repl, text)

    return step


# --- line endings and Unicode ---

# Unicode's mandatory line breaks (UAX #14 classes BK, CR, LF) except NEL (U+0085): PyMuPDF
# emits C1 codes for glyphs it cannot map (bullets), so U+0085 in a PDF's text is not a break.
_LINE_BREAK = re.compile(r"\r\n|[\r\v\f\u2028\u2029]")


def unify_line_endings(text: str) -> str:
    """Every line break becomes ``\\n``; a CRLF pair is one break. The first step of every
    profile, of the scope split and of structure extraction: anything that looks at lines
    (``^``/``$`` patterns, ``split("\\n")``) may assume ``\\n`` only."""
    return _LINE_BREAK.sub("\n", text)


def unicode_nfc(text: str) -> str:
    """Canonical composition: an NFD copy of the same Hangul or accented text becomes identical."""
    return unicodedata.normalize("NFC", text)


def unicode_nfkc(text: str) -> str:
    """Compatibility composition (seed 000 section 3.4.3): full-width to half-width, ligatures
    such as U+FB01 to ``fi``, no-break spaces to spaces."""
    return unicodedata.normalize("NFKC", text)


remove_c1_controls: Step = _sub(r"[\x80-\x9f]", "")
remove_c1_controls.__doc__ = """fair-v1, after NFKC (the seed is silent): C1 control characters
U+0080-U+009F go. No text uses them; PyMuPDF emits them for glyphs whose font has no Unicode
mapping, typically list bullets (U+0088), so they are the extractor's noise, not content."""


# --- seed 002 section 4.7, steps 1-11 ---

_PANDOC_FENCE = md.PANDOC_DIV_FENCE_LINES
_PANDOC_ATTRS = md.PANDOC_ATTRIBUTE_BLOCK
_BRACKETED_SPAN = md.BRACKETED_SPAN
_CROSS_REFERENCE = re.compile(
    r"\[(\\\[[^\]\n]*\\\]|[^\[\]\n]*)\]\(#[^)\s]*\)\{[^{}\n]*reference-type=[^{}\n]*\}"
)


def _cross_reference_text(match: re.Match[str]) -> str:
    # pandoc could not number an equation reference and wrote its label, e.g. "\[eq:x\]": the
    # PDF shows "(1)" there, so the label is an artifact; a resolved "[1]" is shown text.
    text = match.group(1)
    return "" if text.startswith("\\[") else text


# Pandoc markup that is never shown text: fenced-div lines and attribute blocks (what
# `remove_pandoc_divs` drops, apart from the cross-references it rewrites).
PANDOC_MARKUP = (_PANDOC_FENCE, _PANDOC_ATTRS)


def remove_pandoc_divs(text: str) -> str:
    r"""Step 1: pandoc fenced-div lines (``::: thebibliography``, ``:::``) and attribute blocks
    (``{#sec:intro}``, ``{.smallcaps}``, ``{-}``); the content inside a div or a span is kept.
    Pandoc's cross-references (the reference attributes of seed 002's step 1) become their shown
    text: ``[1](#tab:x){reference-type="ref" ...}`` is ``1`` (the PDF shows "Table 1"), and an
    unresolved equation label ``[\[eq:x\]](#eq:x){...}`` goes (the PDF shows a number)."""
    text = _PANDOC_FENCE.sub("", text)
    text = _CROSS_REFERENCE.sub(_cross_reference_text, text)
    text = _BRACKETED_SPAN.sub(r"\1", text)
    return _PANDOC_ATTRS.sub("", text)


# A citation key (pandoc's rule): "@" that no word character, "." or "@" precedes (an e-mail
# address has a word character there), then a word character, then word characters with
# internal punctuation only, so the full stop after "@doe99." is not part of the key; no "@"
# right after it ("@ada@example.org" is an address, not a key).
_CITATION_KEY = r"(?<![\w.@])@\w(?:\w|[:.#$%&\-+?<>~/](?=\w))*(?![\w@])"
remove_pandoc_citations: Step = _sub(
    rf"\[[^\[\]\n]*{_CITATION_KEY}[^\[\]\n]*\](?![(\[])|{_CITATION_KEY}", ""
)
remove_pandoc_citations.__doc__ = """Step 2: pandoc citations ``[@key]``, ``[see @a; @b, p. 3]``,
``[-@key]`` and in-text ``@key``. An e-mail address (a word character before the ``@``) is not
a citation key, inside brackets or out, and a bracket followed by ``(`` or ``[`` is a link."""

remove_numeric_citations: Step = _sub(r"\[\d+(?:\s*[,;\-\u2013]\s*\d+)*\]", "")
remove_numeric_citations.__doc__ = """Step 3 (FR-001): numeric citations ``[1]``, ``[1,2]``,
``[1-3]``, ``[12, 15-17]`` (en dash ranges too). ``[Table 1]`` is not all digits and stays."""

remove_footnote_references: Step = _sub(r"\[\^[^\]\s]+\](?!:)", "")
remove_footnote_references.__doc__ = """Step 4: footnote references ``[^1]`` in running text. The
definition marker ``[^1]:`` is left for step 5, which the seed's order requires."""

# The definition line, then its continuation lines: indented ones, also after blank lines.
_FOOTNOTE_DEFINITION = re.compile(
    r"^\[\^[^\]\s]+\]:.*(?:\n(?:[ \t]*\n)*(?: {4}|[ ]{0,3}\t).*)*", re.MULTILINE
)


def remove_footnote_definitions(text: str) -> str:
    """Step 5 (FR-006): footnote definitions ``[^1]: text``. Gap closed: pandoc writes a long
    footnote onto indented continuation lines and a multi-paragraph one as further paragraphs
    indented by four spaces (or a tab) after blank lines; all of them belong to the definition
    and go with it. An unindented line after the definition is body text and stays."""
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

# A name: a capital, then letters with internal apostrophes or hyphens (O'Brien, Smith-Jones,
# Müller); no digits, so "(ABC1 2020)" is not a citation.
_NAME = r"[A-Z](?:[^\W\d_]|['\u2019\-](?=[^\W\d_]))+"
remove_parenthetical_citations: Step = _sub(
    rf"\({_NAME}(?:\s+(?:et\s+al\.?|(?:&|and)\s+{_NAME}))?,?\s*\d{{4}}[a-z]?\)", ""
)
remove_parenthetical_citations.__doc__ = """Step 11 (FR-005): ``(Author, 2020)``, ``(Author et
al., 2020)``, ``(Author & Other, 2020b)``, ``(Author,2020)``; the seed's ``,?\\s*`` before the
year, so a missing space after the comma (or a line break) still matches. Beside the seed: ``and``
for ``&``, non-ASCII letters, apostrophes and hyphens inside names, ``al`` without its dot."""


# --- step 12: markdown syntax (seed 000 section 3.4.1) ---

TABLE_SEPARATOR = md.TABLE_SEPARATOR
_HEADING = md.HEADING_LINES
_SETEXT_UNDERLINE = md.SETEXT_UNDERLINE_LINES
_BLOCKQUOTE = md.BLOCKQUOTE_MARKS
_BULLET = md.BULLET_MARKS
_CODE_FENCE = md.FENCE_LINES
_LINK = md.LINK
_AUTOLINK = md.AUTOLINK
_EMPHASIS = md.EMPHASIS_SPANS
_INLINE_CODE = md.INLINE_CODE
_ESCAPE = md.ESCAPE
# HTML elements a markdown writer emits (HTML5 plus a few legacy inline ones), lowercase as
# pandoc and VLMs write them: "<T>", "<MIME>" or "<B>" in running text are not tags.
_HTML_ELEMENTS = (
    "a abbr address article aside b bdi bdo big blockquote body br caption center cite code col "
    "colgroup dd del details dfn div dl dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 "
    "head header hr html i img ins kbd li main mark nav ol p pre q s samp section small span "
    "strike strong sub summary sup table tbody td tfoot th thead tr tt u ul var wbr"
).split()
_HTML_BREAK = re.compile(r"<br[ \t]*/?>")
_HTML_TAG = re.compile(rf"<!--.*?-->|</?(?:{'|'.join(_HTML_ELEMENTS)})(?=[\s/>])[^<>]*>", re.S)


def _strip_emphasis(text: str) -> str:
    strong, em_star, em_under, strike = _EMPHASIS
    text = strong.sub(r"\2", text)
    text = em_star.sub(r"\1", text)
    text = em_under.sub(r"\1", text)
    return strike.sub(r"\1", text)


def strip_markdown(text: str) -> str:
    """Step 12: markdown syntax goes, its text stays (seed 000 section 3.4.1).

    Headings lose their ``#``, emphasis its markers, links keep their text (e-mail text too),
    bullet markers go (``-``, ``*``, ``+`` and the glyphs a PDF shows in their place, so a ``-``
    in the truth and a ``\u2022`` in the extraction cost nothing). Ordered-list numbers stay: they
    are visible text on both sides, and the seed's own example keeps ``1. Introduction`` after
    stripping ``## 1. Introduction``. Tables keep cell contents and lose pipes and separator
    rows (`TABLE_SEPARATOR`), code fences go and code stays, pandoc's backslash escapes are
    undone. HTML comments (pandoc's ``<!-- -->`` between lists) and tags of real HTML elements go
    (``<br>`` becomes a space); other angle-bracketed words (``<T>``, ``<MIME>``) are text.
    """
    text = _CODE_FENCE.sub("", text)
    text = TABLE_SEPARATOR.sub("", text)
    # Containers before what they contain: "> # Title" and "- # Title" hold a heading.
    text = _BLOCKQUOTE.sub("", text)
    text = _BULLET.sub("", text)
    text = _HEADING.sub(r"\1", text)
    text = _SETEXT_UNDERLINE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _strip_emphasis(text)
    text = _HTML_TAG.sub("", _HTML_BREAK.sub(" ", text))
    text = md.UNESCAPED_PIPE.sub(" ", text)
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
    line endings are LF (`unify_line_endings`), lines are trimmed, blank-line runs collapse to
    one line break, and the ends are trimmed."""
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


# --- profiles ---


@dataclass(frozen=True)
class Profile:
    """A named, versioned sequence of normalisation steps; the first is `unify_line_endings`."""

    name: str
    steps: tuple[tuple[str, Step], ...]
    description: str

    def __post_init__(self) -> None:
        # Every later step may assume "\n" line breaks: a profile that forgot this would score
        # a CRLF file differently from its LF copy.
        if not self.steps or self.steps[0][1] is not unify_line_endings:
            raise ValueError(f"profile {self.name!r} must start with unify_line_endings")

    def __call__(self, text: str) -> str:
        for _, step in self.steps:
            text = step(text)
        return text

    @property
    def step_names(self) -> list[str]:
        return [name for name, _ in self.steps]


RAW = Profile(
    "raw",
    (("unify_line_endings", unify_line_endings), ("unicode_nfc", unicode_nfc)),
    "line endings unified, Unicode NFC",
)

PLAIN_V1 = Profile(
    "plain-v1",
    (
        ("unify_line_endings", unify_line_endings),
        ("unicode_nfkc", unicode_nfkc),
        ("strip_markdown", strip_markdown),
        ("collapse_spaces_keep_lines", collapse_spaces_keep_lines),
    ),
    "seed 000 section 3.4: NFKC, markdown stripping, whitespace (line breaks kept)",
)

FAIR_V1 = Profile(
    "fair-v1",
    (
        ("unify_line_endings", unify_line_endings),
        ("unicode_nfkc", unicode_nfkc),
        ("remove_c1_controls", remove_c1_controls),
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
    "seed 002 section 4.7 processing order after NFKC and C1 removal; whitespace collapsed",
)

PROFILES: dict[str, Profile] = {p.name: p for p in (RAW, PLAIN_V1, FAIR_V1)}


def get_profile(name: str) -> Profile:
    """The profile called `name`; a clear error lists the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise KeyError(f"unknown normalization profile {name!r}; known profiles: {known}") from None
