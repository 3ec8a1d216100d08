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

Matching (the seed leaves it open; this is the definition used here): an element is its type
plus its normalised text -- the line without its marker, NFKC, emphasis, links and escapes
removed, whitespace collapsed, case folded. For a table row the text is its cells joined by
``|``; pipe-table separator rows (``|---|:--:|``) are syntax, not content, and are not elements.
For a code block the text is its contents. Heading levels are not compared (a ``##`` for a
``###`` still preserves the heading). Predicted and truth elements are multisets: a true
positive is a (type, text) pair present in both, counted min(pred, truth) times.

Undefined ratios are closed so that "produced nothing" scores 0 and "nothing to find, nothing
found" scores 1: precision = TP/(TP+FP), or 1.0 when nothing was predicted and nothing is
missing, else 0.0; recall likewise with FN; F1 = 0 when P + R = 0. A plain-text parser therefore
gets recall 0 and F1 0 on any document with structure, as the seed says.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

ELEMENT_TYPES = ("heading", "unordered_list", "ordered_list", "table_row", "code_block")
# Per-element-type metrics are these prefixes plus a type; summaries show the overall ones.
PER_TYPE_PREFIXES = ("structure_precision_", "structure_recall_", "structure_f1_")

_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_UNORDERED = re.compile(r"^\s*[-*+]\s+(.*)$")
_ORDERED = re.compile(r"^\s*\d+\.\s+(.*)$")
_TABLE_ROW = re.compile(r"^\|.+\|$")
_TABLE_SEPARATOR = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+$")
_FENCE = re.compile(r"^```")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~|`)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_ESCAPE = re.compile(r"\\(.)")
_SPACE = re.compile(r"\s+")

Element = tuple[str, str]


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub("", text)
    text = _ESCAPE.sub(r"\1", text)
    return _SPACE.sub(" ", text).strip().casefold()


def extract_elements(markdown: str) -> list[Element]:
    """Structure elements of `markdown` in document order, as (type, normalised text)."""
    elements: list[Element] = []
    code: list[str] | None = None
    for raw in unicodedata.normalize("NFC", markdown).replace("\r\n", "\n").split("\n"):
        line = raw.rstrip()
        if code is not None:
            if _FENCE.match(line.strip()):
                elements.append(("code_block", _normalise("\n".join(code))))
                code = None
            else:
                code.append(line)
            continue
        if _FENCE.match(line):
            code = []
        elif match := _HEADING.match(line):
            elements.append(("heading", _normalise(match.group(1))))
        elif _TABLE_ROW.match(line.strip()):
            row = line.strip()
            if not _TABLE_SEPARATOR.match(row):
                cells = [_normalise(cell) for cell in row[1:-1].split("|")]
                elements.append(("table_row", "|".join(cells)))
        elif match := _UNORDERED.match(line):
            elements.append(("unordered_list", _normalise(match.group(1))))
        elif match := _ORDERED.match(line):
            elements.append(("ordered_list", _normalise(match.group(1))))
    if code is not None:  # an unclosed fence still opened a code block
        elements.append(("code_block", _normalise("\n".join(code))))
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
