"""Scope alignment for Body CER (seed 002, FR-003): split a text into body and references.

The split runs on the text *before* normalisation, because the markers it looks for (a
References heading, pandoc's bibliography div) are exactly what normalisation removes. It
unifies line endings first (`normalise.unify_line_endings`), so CRLF, CR, U+2028 and U+2029
texts split exactly like their LF copies.

Seed 002 section 4.3 matches ``^(?:#{0,3}\\s*)?(?:References|Bibliography|REFERENCES)\\s*$``
and section 8 relies on that match being precise: the word alone on its line. Recognised here,
on either side of the comparison, and nothing else:

* a **heading line**: optional leading spaces, optionally one to three ``#``, then exactly
  ``References``, ``REFERENCES`` or ``Bibliography`` (the seed's spellings, case-sensitive), and
  nothing after it on the line but spaces. Beside the seed's regex, the word may be wrapped in
  ``**``/``__`` (pymupdf4llm writes ``## **References**``) and followed by a pandoc attribute
  block (``# References {#references .unnumbered}``): both are markdown renderings of the same
  heading line. Spaces are any Unicode horizontal whitespace (a no-break space included);
* a **pandoc bibliography div**: a fence line ``::: thebibliography`` (``\\begin{thebibliography}``
  converted), or a fence whose attributes hold the id ``#refs`` or the class
  ``.thebibliography`` (``::: {#refs .references .csl-bib-body}``, citeproc's output, which
  carries no heading).

Not recognised, on purpose: other cases (``references``, ``Bibliography`` in capitals), other
words (``Works Cited``, ``Literature``, ``Related literature``), section numbers (``7
References``), four or more ``#``, and the word inside a sentence or a wrapped line with other
words. The earliest match wins, as with the seed's ``re.search``; with none, the whole text is
body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_doceval.text.markdown import HSPACE, PANDOC_ATTRIBUTES
from pytest_doceval.text.normalise import unify_line_endings

_REFERENCES_HEADING = re.compile(
    rf"^{HSPACE}*(?:#{{1,3}}{HSPACE}*)?"
    r"(?P<bold>\*\*|__)?(?:References|REFERENCES|Bibliography)(?(bold)(?P=bold))"
    rf"{HSPACE}*(?:{PANDOC_ATTRIBUTES}{HSPACE}*)?$",
    re.MULTILINE,
)
_BIBLIOGRAPHY_DIV = re.compile(
    rf"^{HSPACE}*:{{3,}}{HSPACE}*"
    r"(?:thebibliography|\{[^{}\n]*(?<![\w.#-])(?:#refs|\.thebibliography)(?![\w-])[^{}\n]*\})"
    rf"{HSPACE}*:*{HSPACE}*$",
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
    """Split `text` (line endings unified) at the first references heading or bibliography div
    (see the module docstring). The body loses its trailing whitespace, as in the seed."""
    text = unify_line_endings(text)
    starts = [
        m.start() for m in (_REFERENCES_HEADING.search(text), _BIBLIOGRAPHY_DIV.search(text)) if m
    ]
    if not starts:
        return ScopeSplit(text, "")
    cut = min(starts)
    return ScopeSplit(text[:cut].rstrip(), text[cut:])
