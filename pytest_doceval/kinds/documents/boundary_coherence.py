"""Boundary Coherence: how many of the truth's semantic boundaries the output's chunks keep
(seed 000 section 3.3.3).

    BC = |B_pred ∩ B_gt| / |B_gt|

Both texts are first put through the ``raw`` profile (line endings unified, NFC), never through
a profile that strips markdown: the boundaries live in the markdown's blank lines and headings,
and the chunker sees the output as a retrieval pipeline would (seed 000 3.5.1). All offsets below
are character offsets into those two texts.

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

**B_pred**, the predicted boundaries: the start of every chunk of the *output* but the first,
chunked with the seed's splitter as every chunk metric chunks (`chunking.chunk_document`,
500/50; two chunks starting at one offset are one cut). These are the cuts the downstream
pipeline makes: a chunk's start is where the splitter cut, while its end falls at or inside
the next chunk (the overlap) and is not a second cut. They are mapped onto the truth's offsets
through the character alignment (`align`): an output position maps to the truth position of
the same aligned character; a position inside inserted text maps to where the insertion sits
in the truth; when truth characters were deleted just before it (markup such as ``# `` that a
plain-text parser drops), it maps to the start of that deletion -- the truth boundary sits
before the markup.

**Anchoring**: a predicted cut takes part only where the output around it *is* the truth's text
around the place it maps to. Where the two texts share little, the character alignment is arbitrary
(it still pairs up common letters), and a ±20-character window every ~450 characters would catch a
truth boundary by chance: an unrelated document scored about 0.25 and a page with its paragraphs
reversed scored its full ceiling. So both texts are read as their *word characters* (letters, digits
and ``_``, casefolded; whitespace, punctuation and markup such as ``#``, ``*``, ``|`` or pandoc's
``::: thebibliography`` div fences and ``{#sec:x}`` attributes dropped, so
a plain-text parser that loses the markdown still anchors), and a cut at output offset p mapped to
truth offset q is *anchored* when, on each side (before and after), the ``ANCHOR_CHARACTERS`` (16)
word characters next to the cut in one text are found, up to ``ANCHOR_EDITS`` (a quarter), among
the 32 next to it in the other, either way round (rapidfuzz's ``fuzz.partial_ratio`` >= 75). The
wide window forgives what only one side writes near a cut: a pandoc citation key or footnote
reference in the truth's markdown, a section number or a footnote mark in the output; an OCR slip
costs a few edits. Two unrelated stretches of text are far apart, and both sides matter: a sentence
repeated over and over starts its chunks with the truth's words, but what precedes each cut is the
sentence's own end, not the truth's text before it; a reversed page starts a chunk at a true
paragraph start preceded by the wrong paragraph. Known cost: where the output words a stretch
differently from the truth right at a cut ("References" for the truth's "Bibliography"), that cut
is lost. `BoundaryScore.anchored` counts anchored cuts.

**Matching** of anchored cuts is one-to-one within ``±tolerance`` characters (default 20): one
predicted boundary cannot satisfy two truth boundaries, nor one truth boundary two predictions. For
points on a line with a fixed window, matching each truth boundary in order to the earliest unused
prediction in its window gives a maximum matching (checked against scipy's bipartite matching in the
tests).

**Empty B_gt** (a truth of one block, or empty): BC = 1.0, whether or not the output was cut.
BC is a recall: with nothing to find, nothing was missed, and the chunker cuts any text longer
than a chunk regardless of the parser, so a cut there is no fault of the output's. (Structure
recall closes "nothing to find, something predicted" as 0.0 because a predicted element is the
parser's own invention; a chunk boundary is not.) An empty output with a non-empty B_gt gives 0.

**The ceiling is not 1**: chunks hold 500 characters, so paragraphs shorter than that share
chunks and their breaks cannot all be cut. BC of the truth against itself, kept as
`BoundaryScore.ceiling`, is what a perfect output scores on that truth (1.0 only when every
block starts a chunk of its own; 0.29-0.50 on the example papers, whose paragraphs are short,
0.78 on the benchmark's synthetic 50,000-character report); compare systems with each
other and with that ceiling, not with 1. (It is not a strict upper bound: another text can
happen to put more cuts on the truth's boundaries than the truth's own chunking does.)
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
from pytest_doceval.text.markdown import SETEXT_UNDERLINE, THEMATIC_BREAK
from pytest_doceval.text.normalise import PANDOC_MARKUP, RAW

DEFAULT_TOLERANCE = 20
ANCHOR_CHARACTERS = 16
ANCHOR_EDITS = 0.25

_SETEXT_UNDERLINE = SETEXT_UNDERLINE
_WORD_CHARACTER = re.compile(r"\w")
_THEMATIC_BREAK = THEMATIC_BREAK


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


def align(truth: str, output: str, positions: Sequence[int]) -> list[int]:
    """Each position (a gap between characters) of `output` mapped to the smallest truth
    position aligned with it by the Levenshtein alignment of the two texts.

    The alignment is rapidfuzz's ``Levenshtein.opcodes``, the very call jiwer makes for
    `metrics.text.character_alignment` (whose ops are elided and capped for display, so they
    cannot carry offsets); the tests check that both give the same alignment.
    """
    opcodes = Levenshtein.opcodes(truth, output)
    ends = [op.dest_end for op in opcodes]
    mapped: list[int] = []
    for position in positions:
        if not 0 <= position <= len(output):
            raise ValueError(f"position {position} is outside the output (0..{len(output)})")
        index = bisect.bisect_left(ends, position)
        if index == len(opcodes):  # only when both texts are empty
            mapped.append(0)
            continue
        op = opcodes[index]
        if op.tag in ("equal", "replace"):
            mapped.append(op.src_start + min(position - op.dest_start, op.src_end - op.src_start))
        else:  # inside an insertion, or right after an equal run that a deletion follows
            mapped.append(op.src_start)
    return mapped


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


def boundary_coherence(
    truth: str,
    output: str,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    size: int = CHUNK_SIZE,
    overlap: int = CHUNK_OVERLAP,
) -> BoundaryScore:
    """BC of `output` (its chunks' cuts) against the semantic boundaries of the `truth`
    markdown; both texts are raw-profiled first."""
    truth, output = RAW(truth), RAW(output)
    gold = truth_boundaries(truth)
    cuts = chunk_boundaries(split_text(output, size, overlap))
    predicted = align(truth, output, cuts)
    truth_words, output_words = WordCharacters.of(truth), WordCharacters.of(output)
    anchored = [
        mapped
        for cut, mapped in zip(cuts, predicted, strict=True)
        if is_anchored(truth_words, output_words, cut, mapped)
    ]
    matched = match_boundaries(gold, anchored, tolerance)
    if not gold:
        return BoundaryScore(1.0, 0, 0, len(cuts), 1.0, (), tuple(predicted), len(anchored))
    # The truth chunked by the same splitter: its own cuts need no alignment.
    best = match_boundaries(gold, chunk_boundaries(split_text(truth, size, overlap)), tolerance)
    return BoundaryScore(
        matched / len(gold),
        matched,
        len(gold),
        len(cuts),
        best / len(gold),
        tuple(gold),
        tuple(predicted),
        len(anchored),
    )
