"""The fact checks: present, absent, order, baseline and math (table is in `tables`, format and
footnote in `markup`), and `check`.

Each follows olmOCR-bench's ``run`` method of the same test class (``olmocr/bench/tests.py``),
with the same thresholds and comparisons, and returns a `FactResult` whose explanation a reviewer
can read in one line: what was expected, the best similarity against the threshold, and what the
output has instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fuzzysearch import find_near_matches
from rapidfuzz import fuzz

from pytest_doceval.kinds.facts.markup import check_footnote, check_format
from pytest_doceval.kinds.facts.model import (
    BaselineFact,
    Fact,
    FootnoteFact,
    FormatFact,
    MathFact,
    OrderFact,
    TableFact,
    TextFact,
)
from pytest_doceval.kinds.facts.normalise import normalise_latex, normalise_text
from pytest_doceval.kinds.facts.result import FactResult, PageOutput, as_output, quote, quote_pair
from pytest_doceval.kinds.facts.tables import check_table
from pytest_doceval.text.markdown import IMAGE

__all__ = [
    "DISALLOWED_CHARACTERS",
    "SHORTER_OUTPUT",
    "RenderEqual",
    "check",
    "check_baseline",
    "check_math",
    "check_order",
    "check_text",
    "trailing_repeats",
]

# (reference LaTeX, candidate LaTeX) -> whether they render the same. olmOCR renders both with
# KaTeX in a browser and compares the images; no such renderer ships here.
RenderEqual = Callable[[str, str], bool]


def _closest_window(needle: str, haystack: str) -> tuple[float, str]:
    """rapidfuzz's best partial alignment of `needle` in `haystack`: (similarity, window)."""
    alignment = fuzz.partial_ratio_alignment(needle, haystack)
    if alignment is None:  # only with a score_cutoff, which is not given; kept for the type
        return 0.0, ""
    return alignment.score / 100.0, haystack[alignment.dest_start : alignment.dest_end]


# The flag on a `present` pass whose output (or first_n/last_n slice) is shorter than the text:
# rapidfuzz's partial_ratio aligns the shorter string inside the longer, so it measured the
# output inside the text, not the text inside the output -- a page that is only a newline
# "holds" every text with a space (olmOCR-bench issue #461). One fixed reason, counted per system.
SHORTER_OUTPUT = "present passed on an output shorter than its text (olmOCR-bench's verdict)"


def check_text(fact: TextFact, output: PageOutput, *, fail_shorter: bool = False) -> FactResult:
    """present / absent: best partial-alignment similarity against 1 - max_diffs / len(text).

    A `present` pass on an output shorter than the text is olmOCR-bench's verdict, kept with a
    `caveat` (`SHORTER_OUTPUT`); `fail_shorter` (the suite's ``profile = "strict"``) fails it.
    """
    reference = normalise_text(fact.text)
    content = output.normalised
    if not fact.case_sensitive:
        reference, content = reference.lower(), output.normalised_lower
    scope = ""
    if fact.first_n and fact.last_n:
        content = content[: fact.first_n] + content[-fact.last_n :]
        scope = f" (first {fact.first_n} + last {fact.last_n} characters)"
    elif fact.first_n:
        content, scope = content[: fact.first_n], f" (first {fact.first_n} characters)"
    elif fact.last_n:
        content, scope = content[-fact.last_n :], f" (last {fact.last_n} characters)"
    present = fact.type == "present"
    # No length guard, as in olmOCR-bench: an output (or first_n/last_n slice) shorter than the
    # text passes "present" when it is a piece of the text ("phrase" holds "a phrase").
    shorter = len(content) < len(reference)
    inside = " (the output is shorter than the text: found inside it, as olmOCR-bench does)"
    how = inside if shorter else ""
    threshold = 1.0 - fact.max_diffs / len(reference)
    score, window = _closest_window(reference, content)
    if present and score >= threshold:
        if not shorter:
            return FactResult(True, score, f"found {quote(window)} (similarity {score:.3f})")
        what = "blank" if not content.strip() else f"{len(content)} characters, {quote(content)}"
        caveat = (
            f"the output{scope} ({what}) is shorter than the text ({len(reference)} characters): "
            f"it was found inside the text, not the text inside it (similarity {score:.3f})"
        )
        if fail_shorter:
            return FactResult(False, score, f"{caveat}; the strict profile fails it")
        found = f"found {quote(window)} (similarity {score:.3f}){how}"
        return FactResult(True, score, found, caveat=f"{SHORTER_OUTPUT}: {caveat}")
    if present:
        shown, closest = quote_pair(reference, window)
        return FactResult(
            False,
            score,
            f"{shown} not found{scope}: best similarity {score:.3f} < threshold "
            f"{threshold:.3f}; closest is {closest}",
        )
    if score < threshold:
        return FactResult(True, score, f"absent{scope}: best similarity {score:.3f}")
    return FactResult(
        False,
        score,
        f"{quote(reference)} should be absent{scope} but {quote(window)} matches "
        f"(similarity {score:.3f} >= threshold {threshold:.3f}){how}",
    )


def check_order(fact: OrderFact, output: PageOutput) -> FactResult:
    """order: a match of `before` (within max_diffs edits) starts before a match of `after`.

    The matches are ``fuzzysearch.find_near_matches``'s, as in olmOCR-bench: one best match per
    cluster of overlapping ones, so a string that overlaps itself in the output ("alpha" as
    both texts of "alpha") has one start, and is not before itself.
    """
    before, after = normalise_text(fact.before), normalise_text(fact.after)
    content = output.normalised
    before_starts = [m.start for m in find_near_matches(before, content, max_l_dist=fact.max_diffs)]
    after_starts = [m.start for m in find_near_matches(after, content, max_l_dist=fact.max_diffs)]
    first_before = min(before_starts, default=None)
    last_after = max(after_starts, default=None)
    for name, text, at in (("before", before, first_before), ("after", after, last_after)):
        if at is None:
            similarity, window = _closest_window(text, content)
            shown, closest = quote_pair(text, window)
            return FactResult(
                False,
                0.0,
                f"{name!r} text {shown} not found within {fact.max_diffs} edits; closest "
                f"is {closest} (similarity {similarity:.3f})",
            )
    assert first_before is not None and last_after is not None
    if first_before < last_after:
        return FactResult(
            True,
            1.0,
            f"{quote(before, 40)} at {first_before} precedes {quote(after, 40)} at {last_after}",
        )
    return FactResult(
        False,
        0.0,
        f"{quote(before, 40)} first appears at character {first_before}, not before the last "
        f"{quote(after, 40)} (at {last_after})",
    )


def trailing_repeats(text: str, max_ngram: int = 5) -> list[int]:
    """olmOCR's ``RepeatDetector.ngram_repeats``: for each n in 1..`max_ngram`, how many times
    the last n characters repeat back to back at the end of `text` (whitespace runs count as one
    space). Entry n-1 is 0 when the text is shorter than n."""
    text = re.sub(r"\s+", " ", text)
    counts = []
    for size in range(1, max_ngram + 1):
        if len(text) < size:
            counts.append(0)
            continue
        target, count, at = text[-size:], 0, len(text) - size
        while at >= 0 and text[at : at + size] == target:
            count += 1
            at -= size
        counts.append(count)
    return counts


# olmOCR-bench's disallowed characters for Latin-script pages: CJK ideographs, kana and emoji.
DISALLOWED_CHARACTERS = re.compile(
    "["
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\U0001f600-\U0001f64f"  # Emoticons
    "\U0001f300-\U0001f5ff"  # Miscellaneous Symbols and Pictographs
    "\U0001f680-\U0001f6ff"  # Transport and Map Symbols
    "\U0001f1e0-\U0001f1ff"  # Regional Indicator Symbols (flags)
    "]"
)
_ALNUM = re.compile(r"[^\W_]")  # exactly str.isalnum, found in C
_IMAGE_TAG = IMAGE


def check_baseline(fact: BaselineFact, output: PageOutput, *, latin_only: bool) -> FactResult:
    """baseline: not blank (or blank enough), no runaway repeated n-grams, no CJK/emoji when
    `latin_only` (olmOCR-bench always checks the latter; here the suite's language decides)."""
    content = output.text
    if fact.max_length is not None:
        counted = _IMAGE_TAG.sub("", content) if fact.max_length_skips_image_alt_tags else content
        length = len(_ALNUM.findall(counted))
        if length > fact.max_length:
            return FactResult(
                False,
                0.0,
                f"page should be blank (at most {fact.max_length} alphanumeric characters) but "
                f"the output has {length}: {quote(output.normalised, 50)}",
            )
        return FactResult(True, 1.0, f"blank page: {length} alphanumeric characters")
    if not _ALNUM.search(content):
        return FactResult(False, 0.0, "the output has no alphanumeric character")
    for n, count in enumerate(trailing_repeats(content), start=1):
        if count > fact.max_repeats:
            gram = re.sub(r"\s+", " ", content)[-n:]
            return FactResult(
                False,
                0.0,
                f"the output ends with {quote(gram)} repeated {count} times "
                f"(more than {fact.max_repeats})",
            )
    if latin_only and fact.check_disallowed_characters:
        found = DISALLOWED_CHARACTERS.findall(content)
        if found:
            shown = "".join(dict.fromkeys(found))[:10]
            return FactResult(
                False,
                0.0,
                f"{len(found)} CJK or emoji characters in a Latin-script page: {quote(shown)}",
            )
    return FactResult(True, 1.0, "not blank, no runaway repetition, no out-of-script characters")


def check_math(
    fact: MathFact, output: PageOutput, *, render_equal: RenderEqual | None = None
) -> FactResult:
    """math: an equation of the output equals the fact's LaTeX after `normalise_latex`.

    Without `render_equal`, a page whose equations all differ as text is skipped rather than
    failed: olmOCR compares rendered images, and ``x^2`` and ``x^{2}`` render the same.
    """
    equations = output.equations(include_dollar=not fact.ignore_dollar_delimited)
    target = normalise_latex(fact.math)
    if not equations:
        delimiters = r"\(..\), \[..\]" + ("" if fact.ignore_dollar_delimited else ", $$..$$, $..$")
        return FactResult(False, 0.0, f"no equation in the output (looked for {delimiters})")
    normalised = [normalise_latex(e) for e in equations]
    if target in normalised:
        return FactResult(True, 1.0, f"equation {quote(target)} found")
    ranked = sorted(
        ((fuzz.ratio(target, n) / 100.0, e) for n, e in zip(normalised, equations, strict=True)),
        key=lambda pair: -pair[0],
    )
    best, closest = ranked[0]
    if render_equal is not None:
        for similarity, equation in ranked:
            if render_equal(fact.math, equation):
                return FactResult(True, similarity, f"{quote(equation)} renders as the fact")
        return FactResult(
            False,
            best,
            f"no equation renders as {quote(target)}; closest text {quote(closest)} "
            f"(similarity {best:.3f})",
        )
    return FactResult(
        None,
        best,
        f"no equation equals {quote(target)} as LaTeX text (closest {quote(closest)}, similarity "
        f"{best:.3f}) and rendering comparison is not available",
    )


def check(
    fact: Fact,
    output: str | PageOutput,
    *,
    latin_only: bool,
    render_equal: RenderEqual | None = None,
    fail_shorter: bool = False,
) -> FactResult:
    """Check one fact against one page output (a string, or a `PageOutput` shared by facts);
    `fail_shorter` as in `check_text`."""
    page = as_output(output)
    if isinstance(fact, TextFact):
        return check_text(fact, page, fail_shorter=fail_shorter)
    if isinstance(fact, OrderFact):
        return check_order(fact, page)
    if isinstance(fact, TableFact):
        return check_table(fact, page)
    if isinstance(fact, BaselineFact):
        return check_baseline(fact, page, latin_only=latin_only)
    if isinstance(fact, FormatFact):
        return check_format(fact, page)
    if isinstance(fact, FootnoteFact):
        return check_footnote(fact, page)
    return check_math(fact, page, render_equal=render_equal)
