"""The ``format`` and ``footnote`` checks: text that markup marks as a heading, bold, italic or a
footnote marker.

Both follow olmOCR-bench's ``FormatTest.run`` and ``FootnoteTest.run`` (``olmocr/bench/tests.py``
at f7cfe4c) to the verdict, quirks included, because a pass rate is only comparable when every
verdict is the same (``tests/test_facts_olmocr_parity.py`` holds this against the reference):

* format: every span of the raw output that the format's patterns capture (markdown ``#``
  headings and ``<h1>``..``<h6>``; ``**x**``, ``__x__``, ``<b>``, ``<strong>``; ``*x*``, ``_x_``,
  ``<i>``, ``<em>``) is normalised, and the fact passes when rapidfuzz's ``partial_ratio`` of the
  fact's text against one span reaches ``1 - max_diffs / len(text)``. olmOCR's tag patterns
  are ``<b[^>]*>`` and ``<i[^>]*>``, so ``<br>``..``</b>`` and ``<img>``..``</i>`` count too;
  kept as there.
* footnote: the marker must occur as ``[^m]`` (not a definition ``[^m]:``), ``<sup>m</sup>`` or,
  for a marker of ASCII digits, Unicode superscript digits. Each context text is compared, as
  letters and digits only, lower-cased, with the end of the 200 characters before an occurrence
  (``appears_before_marker``) or the start of the 200 after one (``appears_after_marker``): the
  window is twice the text's cleaned length, and the threshold divides ``max_diffs`` by the
  text's normalised length (not its cleaned one), as there. The two texts may be found at
  different occurrences of the marker, as there.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from pytest_doceval.kinds.facts.model import FootnoteFact, FormatFact
from pytest_doceval.kinds.facts.normalise import normalise_text
from pytest_doceval.kinds.facts.result import FactResult, PageOutput, quote

__all__ = ["check_footnote", "check_format", "formatted_spans"]

_HTML = re.IGNORECASE | re.DOTALL
# Per format, olmOCR's patterns in its order; each captures the formatted text.
_FORMAT_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "heading": (
        re.compile(r"^#{1,6}\s+(.+?)$", re.MULTILINE),
        re.compile(r"<h[1-6][^>]*>(.*?)</h[1-6]>", _HTML),
    ),
    "bold": (
        re.compile(r"\*\*(.*?)\*\*", re.DOTALL),
        re.compile(r"__(.*?)__", re.DOTALL),
        re.compile(r"<b[^>]*>(.*?)</b>", _HTML),
        re.compile(r"<strong[^>]*>(.*?)</strong>", _HTML),
    ),
    "italic": (
        re.compile(r"(?<!\*)\*(?!\*)(.*?)(?<!\*)\*(?!\*)", re.DOTALL),
        re.compile(r"(?<!_)_(?!_)(.*?)(?<!_)_(?!_)", re.DOTALL),
        re.compile(r"<i[^>]*>(.*?)</i>", _HTML),
        re.compile(r"<em[^>]*>(.*?)</em>", _HTML),
    ),
}


def formatted_spans(text: str, fmt: str) -> list[str]:
    """Every span of `text` that format `fmt` marks, as written (olmOCR's extraction)."""
    return [span for pattern in _FORMAT_PATTERNS[fmt] for span in pattern.findall(text)]


def _threshold(text: str, max_diffs: int) -> float:
    return 1.0 - max_diffs / (len(text) or 1)


def check_format(fact: FormatFact, output: PageOutput) -> FactResult:
    """format: the fact's text within one span the format marks (module docstring)."""
    target = normalise_text(fact.text)
    spans = [normalise_text(span) for span in formatted_spans(output.text, fact.format)]
    if not fact.case_sensitive:
        target, spans = target.lower(), [span.lower() for span in spans]
    threshold = _threshold(target, fact.max_diffs)
    best, best_span = 0.0, ""
    for span in spans:
        similarity = fuzz.partial_ratio(target, span) / 100.0
        if similarity >= threshold:
            return FactResult(
                True, similarity, f"{fact.format} {quote(span)} has {quote(target, 40)}"
            )
        if similarity > best:
            best, best_span = similarity, span
    if not spans:
        return FactResult(False, 0.0, f"no {fact.format} text in the output")
    return FactResult(
        False,
        best,
        f"{quote(target, 40)} is in no {fact.format} text of the {len(spans)} found: closest "
        f"{quote(best_span, 40)} (similarity {best:.3f} < threshold {threshold:.3f})",
    )


_SUPERSCRIPT_DIGITS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_CONTEXT = 200  # characters looked at on each side of a marker, as olmOCR


def marker_spans(marker: str, text: str) -> list[tuple[int, int]]:
    """(start, end) of every occurrence of footnote `marker` in `text` (olmOCR's three forms)."""
    escaped = re.escape(marker)
    patterns = [
        re.compile(rf"\[\^{escaped}\](?!:)"),
        re.compile(rf"<sup[^>]*>{escaped}</sup>", re.IGNORECASE),
    ]
    if all("0" <= ch <= "9" for ch in marker):
        patterns.append(re.compile(re.escape(marker.translate(_SUPERSCRIPT_DIGITS))))
    return [m.span() for pattern in patterns for m in pattern.finditer(text)]


def _letters_and_digits(text: str) -> str:
    """olmOCR's ``clean_for_comparison``: normalised, only alphanumerics, lower-cased."""
    return "".join(ch for ch in normalise_text(text) if ch.isalnum()).lower()


def _context_similarity(
    context: str, text: str, spans: list[tuple[int, int]], *, before: bool, max_diffs: int
) -> tuple[bool, float]:
    """Whether `context` (normalised) ends just before (`before`) or starts just after some
    marker occurrence, and the best similarity found."""
    # olmOCR normalises the stored (already normalised) text again inside clean_for_comparison.
    target = _letters_and_digits(context)
    threshold = _threshold(context, max_diffs)
    best = 0.0
    for start, end in spans:
        window = text[max(0, start - _CONTEXT) : start] if before else text[end : end + _CONTEXT]
        cleaned = _letters_and_digits(window)
        if not cleaned:
            continue
        length = min(len(cleaned), 2 * len(target))
        if length > 0:
            cleaned = cleaned[-length:] if before else cleaned[:length]
        similarity = fuzz.partial_ratio(target, cleaned) / 100.0
        best = max(best, similarity)
        if similarity >= threshold:
            return True, similarity
    return False, best


def check_footnote(fact: FootnoteFact, output: PageOutput) -> FactResult:
    """footnote: the marker occurs, with the context texts around it (module docstring)."""
    text, marker = output.text, fact.marker
    spans = marker_spans(marker, text)
    if not spans:
        return FactResult(
            False,
            0.0,
            f"footnote marker {quote(marker)} not found as [^{marker}], <sup>{marker}</sup> or "
            "superscript digits",
        )
    failures: list[str] = []
    weakest = 1.0
    sides = (("before", fact.appears_before_marker), ("after", fact.appears_after_marker))
    for side, raw in sides:
        if not raw:
            continue
        context = normalise_text(raw)
        found, similarity = _context_similarity(
            context, text, spans, before=side == "before", max_diffs=fact.max_diffs
        )
        weakest = min(weakest, similarity)
        if not found:
            failures.append(
                f"{quote(context, 40)} is not just {side} any of the {len(spans)} occurrences "
                f"of marker {quote(marker)} (best similarity {similarity:.3f} < threshold "
                f"{_threshold(context, fact.max_diffs):.3f})"
            )
    if failures:
        return FactResult(False, weakest, "; ".join(failures))
    return FactResult(True, weakest, f"footnote marker {quote(marker)} found with its context")
