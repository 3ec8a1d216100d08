"""Scope alignment for Body CER (seed 002, FR-003): split a text into body and references.

The split runs on the text *before* normalisation, because the markers it looks for (a
References heading, pandoc's bibliography div) are exactly what normalisation removes. It
unifies line endings first (`normalise.unify_line_endings`), so CRLF, CR, U+2028 and U+2029
texts split exactly like their LF copies.

Seed 002 section 4.3 matches ``^(?:#{0,3}\\s*)?(?:References|Bibliography|REFERENCES)\\s*$``
and section 8 relies on that match being precise: the heading alone on its line. Its own check
(Body CER < Full CER) needs the headings real papers print, which the sketch misses: numbered
and capitalised ones (ACM, IEEE: ``7 REFERENCES``, ``VII. References``), deeper markdown
headings, other words (``Works Cited``, ``참고문헌``). Recognised here, on either side of the
comparison, and nothing else:

* a **heading line**: optional leading spaces; optionally ``#`` (any depth, one to six); then
  the heading text, optionally wrapped in ``**``/``__`` (pymupdf4llm writes ``## **References**``),
  optionally after a section number (``7``, ``7.``, ``VII``, ``VII.``, before or inside the
  bold); and nothing after it on the line but spaces and a pandoc attribute block
  (``# References {#references .unnumbered}``). The heading text is one of ``References``,
  ``Bibliography``, ``Works Cited``, ``Literature Cited``, ``References and Notes`` in upper,
  lower, title or sentence case (``REFERENCES``, ``references``, ``Works cited``), or
  ``참고문헌`` (its syllables may be spaced). A lower-case line without ``#`` or bold
  (``references``, ``12 references``) counts only as a paragraph of its own (after a blank
  line, or first in the text): a wrapped sentence can leave those words alone on a line.
  Spaces are any Unicode horizontal whitespace;
* a **pandoc bibliography div**: a fence line ``::: thebibliography`` (``\\begin{thebibliography}``
  converted), or a fence whose attributes hold the id ``#refs`` or the class
  ``.thebibliography`` (``::: {#refs .references .csl-bib-body}``, citeproc's output, which
  carries no heading).

Not recognised, on purpose: mixed case (``ReFeReNcEs``), other words (``Reference``,
``Literature``, ``Related literature``, ``Further references``), unbalanced bold, a list item,
quote or table cell, and the word inside a sentence (``see the references below``). The
earliest match wins, as with the seed's ``re.search``; with none, the whole text is body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_doceval.text.markdown import HSPACE, PANDOC_ATTRIBUTES
from pytest_doceval.text.normalise import unify_line_endings

# The heading texts, each in the cases papers print it: as listed, upper, lower, title, sentence.
_HEADING_WORDS = (
    "References",
    "Bibliography",
    "Works Cited",
    "Literature Cited",
    "References and Notes",
)
_KOREAN_HEADING = rf"참{HSPACE}*고{HSPACE}*문{HSPACE}*헌"
_SECTION_NUMBER = rf"(?:\d{{1,2}}|[IVXLC]{{1,7}}|[ivxlc]{{1,7}})\.?{HSPACE}+"


def _spellings(phrase: str) -> str:
    cases = dict.fromkeys(
        (phrase, phrase.upper(), phrase.lower(), phrase.title(), phrase.capitalize())
    )
    return "|".join(re.escape(c).replace(r"\ ", f"{HSPACE}+") for c in cases)


_REFERENCES_HEADING = re.compile(
    rf"^{HSPACE}*(?P<hashes>#{{1,6}}{HSPACE}*)?(?P<outer>{_SECTION_NUMBER})?"
    rf"(?P<bold>\*\*|__)?(?P<inner>{_SECTION_NUMBER})?"
    rf"(?P<words>{'|'.join(_spellings(p) for p in _HEADING_WORDS)}|{_KOREAN_HEADING})"
    rf"(?(bold)(?P=bold)){HSPACE}*(?:{PANDOC_ATTRIBUTES}{HSPACE}*)?$",
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
    heading = next((m for m in _REFERENCES_HEADING.finditer(text) if _is_heading(m, text)), None)
    starts = [m.start() for m in (heading, _BIBLIOGRAPHY_DIV.search(text)) if m]
    if not starts:
        return ScopeSplit(text, "")
    cut = min(starts)
    return ScopeSplit(text[:cut].rstrip(), text[cut:])


def _is_heading(match: re.Match[str], text: str) -> bool:
    """A lower-case line without ``#`` or bold is a heading only as a paragraph of its own."""
    marked = bool(match.group("hashes") or match.group("bold"))
    start = match.start()
    if marked or not match.group("words").islower() or start == 0:
        return True
    previous_line = text[text.rfind("\n", 0, start - 1) + 1 : start - 1]
    return not previous_line.strip()
