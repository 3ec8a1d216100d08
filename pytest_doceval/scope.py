"""Scope alignment for Body CER (seed 002, FR-003): split a text into body and references.

The split runs on the text *before* normalisation, because the markers it looks for (a
References heading, pandoc's bibliography div) are exactly what normalisation removes.

Recognised starts of the references section, on either side of the comparison:

* a line that is only ``References``, ``Bibliography``, ``Works Cited`` or ``Literature`` (any
  case), optionally after up to six ``#`` and an optional section number (``7 References``,
  ``## 7. References``) and optionally in ``**bold**`` -- what PyMuPDF and markdown parsers emit;
* pandoc's ``::: thebibliography`` div (``\\begin{thebibliography}`` converted), and
  ``::: {#refs .references}`` (citeproc output), which pandoc emits without a heading.

The earliest match wins; with none, the whole text is body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_REFERENCES_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?(?:\d+(?:\.\d+)*\.?[ \t]+)?"
    r"(?:references|bibliography|works[ \t]+cited|literature)"
    r"(?:\*\*)?[ \t]*(?:\{[^}\n]*\})?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_BIBLIOGRAPHY_DIV = re.compile(
    r"^[ \t]*:{3,}[ \t]*(?:thebibliography\b|\{[^}\n]*(?:#refs\b|\.references\b)[^}\n]*\})",
    re.MULTILINE,
)


@dataclass(frozen=True)
class ScopeSplit:
    """A text cut where its references section starts (`references` is "" when none)."""

    body: str
    references: str

    @property
    def has_references(self) -> bool:
        return bool(self.references)


def split_body_references(text: str) -> ScopeSplit:
    """Split `text` at the first references heading or bibliography div (see module doc)."""
    starts = [
        m.start() for m in (_REFERENCES_HEADING.search(text), _BIBLIOGRAPHY_DIV.search(text)) if m
    ]
    if not starts:
        return ScopeSplit(text, "")
    cut = min(starts)
    return ScopeSplit(text[:cut].rstrip(), text[cut:])
