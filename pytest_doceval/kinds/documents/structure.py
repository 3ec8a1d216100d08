"""Structure precision, recall and F1 over markdown elements (seed 000 section 3.3.2).

Elements are found line by line with the seed's patterns:

==================  ======================  ==========================
type                pattern                 example
==================  ======================  ==========================
``heading``         ``^#{1,6}\\s+``          ``## Method``
``unordered_list``  ``^\\s*[-*+]\\s+``        ``- item``
``ordered_list``    ``^\\s*\\d+\\.\\s+``        ``1. first``
``table_row``       ``^\\|.+\\|$``            ``| a | b |``
``code_block``      a fence ``^```\\ ``      one element per fenced block
==================  ======================  ==========================

Lines are read after `normalise.unify_line_endings`, so CRLF, CR, U+2028 and U+2029 texts give
the same elements as their LF copies.

Matching (the seed leaves it open; this is the definition used here): an element is its type
plus its normalised text -- the item without its marker, NFKC, emphasis, links and escapes
removed, whitespace collapsed, case folded. A heading's text drops a trailing pandoc attribute
block (``# Method {#sec:method .unnumbered}`` is ``method``) and an ATX closing sequence (``##``
after a space; ``C#`` keeps its ``#``). A list item's text is its first paragraph: the marker
line plus the continuation lines pandoc indents under it when it wraps a long item (indented by
two columns or more, up to a blank line or the next element), so a wrapped item and the same item
on one line match. Unindented lines are not joined: PDF text has no indentation, and lazy
continuation would glue the next paragraph to a list's last item. For a table row the text is
its cells joined by ``|``; table separator rows (``|---|:--:|``, `markdown.TABLE_SEPARATOR`) are
syntax, not content, and are not elements. For a code block the text is its contents. Heading
levels are not compared (a ``##`` for a ``###`` still preserves the heading). Predicted and truth
elements are multisets: a true positive is a (type, text) pair present in both, counted
min(pred, truth) times.

The patterns are the seed's, so plain text can hold elements too: a line such as ``1. Introduction``
or ``2. compute the key`` in a PDF's text layer is an ordered-list item, ``- note`` an unordered
one. A plain-text parser therefore scores recall 0 on headings, tables and code blocks (it emits
no ``#``, ``|`` or fences), but matches any numbered or dashed list line that a PDF prints
with its marker and that the truth has as a list item with the same text.

Undefined ratios are closed so that "produced nothing" scores 0 and "nothing to find, nothing
found" scores 1: precision = TP/(TP+FP), or 1.0 when nothing was predicted and nothing is
missing, else 0.0; recall = TP/(TP+FN), or 1.0 when there was nothing to find and nothing was
predicted, else 0.0; F1 = 0 when P + R = 0.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from pytest_doceval.text import markdown as md
from pytest_doceval.text.markdown import TABLE_SEPARATOR
from pytest_doceval.text.normalise import unify_line_endings

ELEMENT_TYPES = ("heading", "unordered_list", "ordered_list", "table_row", "code_block")
# Per-element-type metrics are these prefixes plus a type; summaries show the overall ones.
PER_TYPE_PREFIXES = ("structure_precision_", "structure_recall_", "structure_f1_")

_HEADING = md.HEADING
_UNORDERED = md.UNORDERED_ITEM
_ORDERED = md.ORDERED_ITEM
_TABLE_ROW = md.TABLE_ROW
_FENCE = md.FENCE
_BLOCK_BREAK = md.BLOCK_BREAK
_EMPHASIS = md.EMPHASIS_MARKS
_LINK = md.LINK_IN_ELEMENT
_ESCAPE = md.ANY_ESCAPE
_SPACE = re.compile(r"\s+")
# A list item's continuation: indented by at least the narrowest content column ("- x").
_CONTINUATION_INDENT = 2

Element = tuple[str, str]


def element_text(text: str) -> str:
    """An element's text as matched (module docstring): NFKC, links and emphasis removed,
    escapes resolved, whitespace collapsed, case folded."""
    text = unicodedata.normalize("NFKC", text)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub("", text)
    text = _ESCAPE.sub(r"\1", text)
    return _SPACE.sub(" ", text).strip().casefold()


def _list_item(line: str) -> Element | None:
    if match := _UNORDERED.match(line):
        return ("unordered_list", match.group(1))
    if match := _ORDERED.match(line):
        return ("ordered_list", match.group(1))
    return None


def _is_continuation(line: str) -> bool:
    if not line.strip() or _BLOCK_BREAK.match(line) or _list_item(line):
        return False
    if _HEADING.match(line.lstrip()) or _TABLE_ROW.match(line.strip()):
        return False
    indent = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())
    return indent >= _CONTINUATION_INDENT


def extract_elements(markdown: str) -> list[Element]:
    """Structure elements of `markdown` in document order, as (type, normalised text)."""
    elements: list[Element] = []
    lines = unify_line_endings(unicodedata.normalize("NFC", markdown)).split("\n")
    code: list[str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index].rstrip()
        index += 1
        if code is not None:
            if _FENCE.match(line.strip()):
                elements.append(("code_block", element_text("\n".join(code))))
                code = None
            else:
                code.append(line)
            continue
        if _FENCE.match(line):
            code = []
        elif match := _HEADING.match(line):
            elements.append(("heading", element_text(match.group(1))))
        elif _TABLE_ROW.match(line.strip()):
            row = line.strip()
            if not TABLE_SEPARATOR.match(row):
                # Seed 000's row splits on every "|" (an escaped one too), between outer pipes.
                cells = [element_text(c) for c in md.split_pipe_row(row, escaped_pipes=False)]
                elements.append(("table_row", "|".join(cells)))
        elif item := _list_item(line):
            parts = [item[1]]
            while index < len(lines) and _is_continuation(lines[index]):
                parts.append(lines[index])
                index += 1
            elements.append((item[0], element_text(" ".join(parts))))
    if code is not None:  # an unclosed fence still opened a code block
        elements.append(("code_block", element_text("\n".join(code))))
    return elements


@dataclass(frozen=True)
class StructureCounts:
    """True positives, false positives and false negatives of one element type (or all)."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        if self.tp + self.fp == 0:
            return 1.0 if self.fn == 0 else 0.0
        return self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float:
        if self.tp + self.fn == 0:
            return 1.0 if self.fp == 0 else 0.0
        return self.tp / (self.tp + self.fn)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    def to_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn}


@dataclass(frozen=True)
class StructureScore:
    overall: StructureCounts
    by_type: dict[str, StructureCounts]

    def metrics(self) -> dict[str, float]:
        """``structure_precision/recall/f1`` overall, and ``structure_f1_<type>`` (with P and
        R) for each type present in the truth or the prediction."""
        out = {
            "structure_precision": self.overall.precision,
            "structure_recall": self.overall.recall,
            "structure_f1": self.overall.f1,
        }
        for kind, counts in self.by_type.items():
            precision, recall, f1 = PER_TYPE_PREFIXES
            out[precision + kind] = counts.precision
            out[recall + kind] = counts.recall
            out[f1 + kind] = counts.f1
        return out


def _match(predicted: Counter[Element], truth: Counter[Element]) -> StructureCounts:
    tp = sum((predicted & truth).values())
    return StructureCounts(tp, sum(predicted.values()) - tp, sum(truth.values()) - tp)


def structure_score(truth_markdown: str, predicted_markdown: str) -> StructureScore:
    truth = Counter(extract_elements(truth_markdown))
    predicted = Counter(extract_elements(predicted_markdown))
    by_type = {}
    for kind in ELEMENT_TYPES:
        t = Counter({e: n for e, n in truth.items() if e[0] == kind})
        p = Counter({e: n for e, n in predicted.items() if e[0] == kind})
        if t or p:
            by_type[kind] = _match(p, t)
    return StructureScore(_match(predicted, truth), by_type)
