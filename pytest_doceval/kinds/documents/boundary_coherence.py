"""Boundary Coherence: how many of the truth's semantic boundaries the output's chunks keep
(seed 000 section 3.3.3).

    BC = |B_pred ∩ B_gt| / |B_gt|

Both texts are first put through the ``raw`` profile (line endings unified, NFC), never through
a profile that strips markdown: the boundaries live in the markdown's line breaks and headings,
and the chunker sees the output's text as a retrieval pipeline would (seed 000 3.5.1), read as
described under B_pred. `BoundaryScore` reports offsets into the raw-profiled truth.

**B_gt**, the truth's semantic boundaries (the seed: "points where semantic context shifts",
found from "headers, blank lines, section breaks"). The truth markdown is read as blocks:

* a block is a run of lines up to a blank line (a line of whitespace only);
* an ATX heading line (``#`` to ``######``, structure.py's pattern) is a block of its own, also
  where it interrupts a paragraph, and so is a setext heading (a line underlined with ``===`` or
  ``---``);
* a fenced code block (from a ```` ``` ```` line to the next, structure.py's fence) is one
  block, blank lines and all: a blank line inside code shifts no context;
* a thematic break (a line of three or more ``-``, ``*`` or ``_``; ``---`` right under a
  paragraph line is that paragraph's setext underline instead, as in CommonMark) separates
  blocks like a blank line does.

A boundary is the first non-whitespace character of every block except (a) the first block
(the document's start is no boundary a chunker could miss) and (b) a block that directly follows
a heading and is not itself a heading: a heading belongs with the text it introduces, and
cutting between them would split a section from its title. So a section change counts once, at
its heading, and every paragraph break inside a section counts once.

**B_pred**, the predicted boundaries: the start of every chunk but the first (two chunks
starting at one offset are one cut) of the output's *projection*, chunked with the seed's
splitter (`chunking.split_text`, 500/50). These are the cuts the downstream pipeline makes: a
chunk's start is where the splitter cut, while its end falls at or inside the next chunk (the
overlap) and is not a second cut. The projection (`project`) is what the splitter reads, in two
steps, each for a measured fault of chunking the output as it stands:

1. **Line breaks** (`canonical_breaks`): in both texts every run of line breaks -- one newline, a
   blank line or several, with the spacing that ends the lines -- reads as one paragraph break: one
   character (``PARAGRAPH_BREAK``, U+2029) to the alignment, a blank line (``LINE_BREAK``) to the
   splitter. A line break is a boundary candidate exactly as a blank line is: one newline is how
   most plain-text extractors end a paragraph, and the splitter, which tries ``"\n\n"`` before
   ``"\n"``, would otherwise pack the same paragraphs differently for a one-character difference
   (the same words with single newlines scored 0.00 against a ceiling of 0.33). So the same words
   with paragraphs separated by one newline, a blank line or two score exactly alike. The
   exceptions keep what markdown holds together as one piece of text, as the splitter sees it in
   the markdown: a single newline stays a newline between two table lines (pipe rows, separator
   rows, grid borders, HTML lines such as ``<tr>``), between a pandoc div's fence (a ``:::`` line)
   and the div's inside, and inside a fenced code block or ``$$`` display math. The cost: lines an
   output breaks inside a paragraph (a PDF's visual lines) are as much a candidate as a paragraph
   break -- which is what the seed's plain-text pipeline gets from such a text anyway, its splitter
   falling back to ``"\n"`` -- and so are the items of a tight list.
2. **Text the truth does not have**: the two texts so read are aligned character by character
   (rapidfuzz's ``Levenshtein.opcodes``, the alignment CER counts on, with a paragraph break one
   character), and the output's characters inserted by that alignment are left out; what remains is
   the output's own characters that stand for truth characters (equal or substituted), in order.
   Extra text -- a paragraph written twice, a running header, a hallucinated line -- is scored by
   CER/NED and structure precision, not here: chunked as it stands, it only changes how much truth
   text a chunk holds, and a parser that wrote every paragraph twice got one chunk per paragraph
   and a BC above the truth's own (0.47 against a ceiling of 0.33). A truth break is earned once,
   by the text that stands for it. When the output only *adds* to the truth (its canonical text is
   a supersequence of the truth's, as any repetition of the truth's text, whole or per paragraph,
   is), every optimal alignment inserts the additions and keeps the rest, so the projection *is*
   the truth and BC equals the ceiling exactly; it never exceeds it. A paragraph break is kept or
   left out whole: the output's break where the truth has a space (a PDF's visual line) stays the
   output's break, not a newline the truth's spacing chose -- had the two newlines of a blank line
   been aligned apart, a plain-text extraction's line breaks would be split into paragraph breaks
   where the truth has them and newlines elsewhere, and it would score what a markdown output
   scores.

A cut at projection offset k (a paragraph break counting one) maps onto the truth right after
the truth character aligned with the projection's character k-1: when truth characters were
deleted just before the cut (markup such as ``# `` that a plain-text parser drops), it maps to
the start of that deletion -- the truth boundary sits before the markup.

**Anchoring**: a predicted cut takes part only where the output around it *is* the truth's text
around the place it maps to. Where the two texts share little, the character alignment is arbitrary
(it still pairs up common letters), and a ±20-character window every ~450 characters would catch a
truth boundary by chance: an unrelated document scored about 0.25 and a page with its paragraphs
reversed scored its full ceiling. So the truth and the projection (the text that was chunked) are
read as their *word characters* (letters, digits and ``_``, casefolded; whitespace, punctuation and
markup such as ``#``, ``*``, ``|`` or pandoc's ``::: thebibliography`` div fences and ``{#sec:x}``
attributes dropped, so a plain-text parser that loses the markdown still anchors), and a cut at
projection offset p mapped to truth offset q is *anchored* when, on each side (before and after),
the ``ANCHOR_CHARACTERS`` (16) word characters next to the cut in one text are found, up to
``ANCHOR_EDITS`` (a quarter), among the 32 next to it in the other, either way round (rapidfuzz's
``fuzz.partial_ratio`` >= 75). The wide window forgives what only one side writes near a cut: a
pandoc citation key or footnote reference in the truth's markdown, a section number or a footnote
mark in the output; an OCR slip costs a few edits. Two unrelated stretches of text are far apart,
and both sides matter: a sentence repeated over and over starts its chunks with the truth's words,
but what precedes each cut is the sentence's own end, not the truth's text before it; a reversed
page starts a chunk at a true paragraph start preceded by the wrong paragraph. Known cost: where
the output words a stretch differently from the truth right at a cut ("References" for the truth's
"Bibliography"), that cut is lost. `BoundaryScore.anchored` counts anchored cuts.

**Matching** of anchored cuts is one-to-one within ``±tolerance`` characters of the truth as read
in step 1 (default 20): one predicted boundary cannot satisfy two truth boundaries, nor one truth
boundary two predictions. For points on a line with a fixed window, matching each truth boundary
in order to the earliest unused prediction in its window gives a maximum matching (checked
against scipy's bipartite matching in the tests).

**Empty B_gt** (a truth of one block, or empty): BC = 1.0, whether or not the output was cut.
BC is a recall: with nothing to find, nothing was missed, and the chunker cuts any text longer
than a chunk regardless of the parser, so a cut there is no fault of the output's. (Structure
recall closes "nothing to find, something predicted" as 0.0 because a predicted element is the
parser's own invention; a chunk boundary is not.) An empty output with a non-empty B_gt gives 0.

**The ceiling is not 1**: chunks hold 500 characters, so paragraphs shorter than that share
chunks and their breaks cannot all be cut. BC of the truth against itself, kept as
`BoundaryScore.ceiling`, is what a perfect output scores on that truth (1.0 only when every
block starts a chunk of its own; 0.29-0.50 on the example papers, whose paragraphs are short,
0.73 on the benchmark's synthetic 50,000-character report); compare systems with each
other and with that ceiling, not with 1. (Repetition cannot pass it, see B_pred; it is still
not a strict upper bound for every output: one that drops or rewords text can happen to put
more cuts on the truth's boundaries than the truth's own chunking does.)
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from pytest_doceval.kinds.documents.chunking import CHUNK_OVERLAP, CHUNK_SIZE, Chunk, split_text
from pytest_doceval.kinds.documents.structure import _FENCE, _HEADING
from pytest_doceval.text.markdown import (
    GRID_BORDER,
    PANDOC_DIV_FENCE_LINES,
    SETEXT_UNDERLINE,
    THEMATIC_BREAK,
    is_pipe_row,
    is_separator_row,
)
from pytest_doceval.text.normalise import PANDOC_MARKUP, RAW

DEFAULT_TOLERANCE = 20
ANCHOR_CHARACTERS = 16
ANCHOR_EDITS = 0.25
# A run of line breaks as the alignment reads it: one character (RAW turns a U+2029 in any text
# into a newline, so none is left to be confused with it) ...
PARAGRAPH_BREAK = "\u2029"
# ... and as the splitter reads it: a blank line (see the module docstring).
LINE_BREAK = "\n\n"

_SETEXT_UNDERLINE = SETEXT_UNDERLINE
_WORD_CHARACTER = re.compile(r"\w")
_THEMATIC_BREAK = THEMATIC_BREAK
# A run of line breaks with the spacing that ends its lines (the next line's indentation stays).
_LINE_BREAKS = re.compile(r"[^\S\n]*\n(?:[^\S\n]*\n)*")


@dataclass(frozen=True)
class BoundaryScore:
    """BC with its counts. `ceiling` is BC of the truth against itself, the best score any
    output can reach on this truth; `truth` and `predicted` are offsets into the (raw-profiled)
    truth."""

    value: float
    matched: int
    n_truth: int
    n_pred: int
    ceiling: float = 1.0
    truth: tuple[int, ...] = ()
    predicted: tuple[int, ...] = ()
    anchored: int = 0

    def to_dict(self) -> dict[str, int | float]:
        return {
            "matched": self.matched,
            "n_truth": self.n_truth,
            "n_pred": self.n_pred,
            "anchored": self.anchored,
            "ceiling": self.ceiling,
        }


@dataclass
class _Block:
    start: int  # offset of its first non-whitespace character
    heading: bool


def _blocks(markdown: str) -> list[_Block]:
    blocks: list[_Block] = []
    open_block: _Block | None = None  # the paragraph that the next line would continue
    in_code = False
    offset = 0
    for line in markdown.split("\n"):
        here = offset + len(line) - len(line.lstrip())
        offset += len(line) + 1
        text = line.strip()
        if in_code:
            in_code = not _FENCE.match(text)
            continue
        if not text:
            open_block = None
            continue
        if _FENCE.match(line):
            blocks.append(_Block(here, heading=False))
            open_block, in_code = None, True
        elif _HEADING.match(line):
            blocks.append(_Block(here, heading=True))
            open_block = None
        elif open_block is not None and _SETEXT_UNDERLINE.match(line):
            open_block.heading = True  # the paragraph above was a heading's text
            open_block = None
        elif _THEMATIC_BREAK.match(line):
            open_block = None  # a section break: the next block starts a new section
        elif open_block is None:
            open_block = _Block(here, heading=False)
            blocks.append(open_block)
    return blocks


def truth_boundaries(markdown: str) -> list[int]:
    """B_gt: offsets into `markdown` where a block starts (see the module docstring)."""
    boundaries: list[int] = []
    blocks = _blocks(markdown)
    for previous, block in itertools.pairwise(blocks):
        if block.heading or not previous.heading:
            boundaries.append(block.start)
    return boundaries


def chunk_boundaries(chunks: Sequence[Chunk]) -> list[int]:
    """B_pred in the chunked text's own offsets: each chunk's start but the first's (a start
    shared by two chunks is one cut)."""
    if not chunks:
        return []
    return sorted({chunk.start for chunk in chunks[1:]} - {chunks[0].start})


@dataclass(frozen=True)
class Reading:
    """A text as BC reads it, and for each of its gaps (0..len) the raw text's offset there."""

    text: str
    source: tuple[int, ...]

    def at(self, offset: int) -> int:
        """The reading's gap at a raw offset (the first one at or after it)."""
        return bisect.bisect_left(self.source, offset)


def _held_line(line: str) -> bool:
    """A line that markdown holds together with its neighbours: a pipe or grid table's, or an
    HTML block's (pandoc writes a table with merged cells as HTML, a tag to a line)."""
    return (
        is_pipe_row(line)
        or is_separator_row(line)
        or GRID_BORDER.match(line) is not None
        or line.lstrip().startswith("<")
    )


def _div_fence(line: str, *, opening: bool) -> bool:
    """A pandoc div's opening fence (``::: {#tab:x}``, ``::: thebibliography``) or its closing
    one (``:::``); either belongs with the div's inside."""
    if PANDOC_DIV_FENCE_LINES.match(line) is None:
        return False
    return bool(line.strip().strip(":")) == opening


def canonical_breaks(text: str) -> Reading:
    """`text` with its runs of line breaks read as step 1 of B_pred says: each as one
    ``PARAGRAPH_BREAK``, but a single newline stays one between two table lines, between a pandoc
    div's fence and its inside, or inside a fenced code block or ``$$`` display math (which a
    blank line ends). A ``PARAGRAPH_BREAK`` stands at the start of the run it replaces."""
    parts: list[str] = []
    source: list[int] = []
    last = 0  # where the line before the next run starts
    in_code = in_math = False
    for run in _LINE_BREAKS.finditer(text):
        before = text[last : run.start()]
        line_end = text.find("\n", run.end())
        after = text[run.end() : len(text) if line_end == -1 else line_end]
        in_code ^= _FENCE.match(before.strip()) is not None
        in_math ^= before.count("$$") % 2 == 1
        held = (
            in_code
            or in_math
            or (_held_line(before) and _held_line(after))
            or _div_fence(before, opening=True)
            or _div_fence(after, opening=False)
        )
        single = run.group().count("\n") == 1
        kept = held and single
        in_math = in_math and single  # display math is inside a paragraph: a blank line ends it
        parts += (before, "\n" if kept else PARAGRAPH_BREAK)
        source += (*range(last, run.start()), run.start())
        last = run.end()
    parts.append(text[last:])
    source += (*range(last, len(text)), len(text))
    return Reading("".join(parts), tuple(source))


@dataclass(frozen=True)
class Projection:
    """The output's characters that the alignment pairs with truth characters, in order
    (step 2 of B_pred), and for each gap k of `text` the truth gap it maps to: right after
    the truth character aligned with ``text[k-1]`` (0 for k = 0)."""

    text: str
    truth_gap: tuple[int, ...]


def project(truth: str, output: str) -> Projection:
    """`output` without the characters that the Levenshtein alignment with `truth` inserts
    (rapidfuzz's ``Levenshtein.opcodes``, the very alignment jiwer makes for
    `metrics.text.character_alignment`; the tests check both give the same path)."""
    kept: list[str] = []
    gaps = [0]
    for op in Levenshtein.opcodes(truth, output):
        if op.tag in ("equal", "replace"):
            # a replace block pairs its characters in order (its two sides have one length)
            pairs = zip(
                range(op.src_start, op.src_end), range(op.dest_start, op.dest_end), strict=True
            )
            for truth_index, output_index in pairs:
                kept.append(output[output_index])
                gaps.append(truth_index + 1)
    return Projection("".join(kept), tuple(gaps))


@dataclass(frozen=True)
class WordCharacters:
    """A text's word characters (casefolded) and the offset of each in the text."""

    characters: str
    offsets: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> WordCharacters:
        # pandoc's div fences and attribute blocks (``::: thebibliography``) are markup too
        hidden = {
            i for markup in PANDOC_MARKUP for m in markup.finditer(text) for i in range(*m.span())
        }
        found = [
            (m.group().casefold(), m.start())
            for m in _WORD_CHARACTER.finditer(text)
            if m.start() not in hidden
        ]
        # casefold can lengthen a character (ß -> ss): keep one offset per resulting character
        characters = "".join(c for c, _ in found)
        offsets = tuple(offset for c, offset in found for _ in c)
        return cls(characters, offsets)

    def around(self, position: int, width: int) -> tuple[str, str]:
        """The `width` word characters before `position` and the `width` from it on."""
        index = bisect.bisect_left(self.offsets, position)
        return self.characters[max(0, index - width) : index], self.characters[
            index : index + width
        ]


def _found_near(short: str, wide: str) -> bool:
    """Whether `short` is, up to `ANCHOR_EDITS`, a stretch of `wide` (rapidfuzz's
    partial_ratio: the best-aligned window's Indel similarity; a quarter of the characters
    substituted is a similarity of 75)."""
    if not short:
        return not wide
    return fuzz.partial_ratio(short, wide) >= 100 * (1 - ANCHOR_EDITS)


def is_anchored(truth: WordCharacters, output: WordCharacters, cut: int, mapped: int) -> bool:
    """Whether the output's word characters on both sides of `cut` are the truth's on both
    sides of `mapped` (see the module docstring): on each side, the near window of one text is
    found in the wide window of the other, either way round."""
    near, wide = ANCHOR_CHARACTERS, 2 * ANCHOR_CHARACTERS
    (before, after), (wide_before, wide_after) = output.around(cut, near), output.around(cut, wide)
    (t_before, t_after), (t_wide_before, t_wide_after) = (
        truth.around(mapped, near),
        truth.around(mapped, wide),
    )
    return (_found_near(before, t_wide_before) or _found_near(t_before, wide_before)) and (
        _found_near(after, t_wide_after) or _found_near(t_after, wide_after)
    )


def match_boundaries(truth: Sequence[int], predicted: Sequence[int], tolerance: int) -> int:
    """The size of a maximum one-to-one matching of truth to predicted offsets that differ by
    at most `tolerance`."""
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    remaining = sorted(predicted)
    matched = 0
    index = 0
    for boundary in sorted(truth):
        while index < len(remaining) and remaining[index] < boundary - tolerance:
            index += 1
        if index < len(remaining) and remaining[index] <= boundary + tolerance:
            matched += 1
            index += 1
    return matched


def _written(text: str) -> tuple[str, list[int]]:
    """`text` as the splitter reads it, each ``PARAGRAPH_BREAK`` a ``LINE_BREAK``, and for
    each of its positions (and the end) the position in `text`."""
    back: list[int] = []
    for index, character in enumerate(text):
        back += [index] * (len(LINE_BREAK) if character == PARAGRAPH_BREAK else 1)
    back.append(len(text))
    return text.replace(PARAGRAPH_BREAK, LINE_BREAK), back


def _cuts_and_words(text: str, size: int, overlap: int) -> tuple[list[int], WordCharacters]:
    """The splitter's cuts of `text` written out, and its word characters (pandoc's div fences
    are found line by line), both in `text`'s offsets (a cut starts a chunk: never inside a
    ``LINE_BREAK``)."""
    written, back = _written(text)
    words = WordCharacters.of(written)
    cuts = chunk_boundaries(split_text(written, size, overlap))
    return [back[cut] for cut in cuts], WordCharacters(
        words.characters, tuple(back[offset] for offset in words.offsets)
    )


def boundary_coherence(
    truth: str,
    output: str,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    size: int = CHUNK_SIZE,
    overlap: int = CHUNK_OVERLAP,
) -> BoundaryScore:
    """BC of `output` (the cuts of its projection's chunks) against the semantic boundaries of
    the `truth` markdown; both texts are raw-profiled first."""
    truth = RAW(truth)
    reading = canonical_breaks(truth)
    gold = [reading.at(boundary) for boundary in truth_boundaries(truth)]
    projection = project(reading.text, canonical_breaks(RAW(output)).text)
    cuts, output_words = _cuts_and_words(projection.text, size, overlap)
    truth_cuts, truth_words = _cuts_and_words(reading.text, size, overlap)
    predicted = [projection.truth_gap[cut] for cut in cuts]
    anchored = [
        mapped
        for cut, mapped in zip(cuts, predicted, strict=True)
        if is_anchored(truth_words, output_words, cut, mapped)
    ]
    in_truth = tuple(reading.source[gap] for gap in predicted)
    if not gold:
        return BoundaryScore(1.0, 0, 0, len(cuts), 1.0, (), in_truth, len(anchored))
    matched = match_boundaries(gold, anchored, tolerance)
    # The truth is its own projection: its cuts map onto themselves and anchor.
    best = match_boundaries(gold, truth_cuts, tolerance)
    return BoundaryScore(
        matched / len(gold),
        matched,
        len(gold),
        len(cuts),
        best / len(gold),
        tuple(truth_boundaries(truth)),
        in_truth,
        len(anchored),
    )
