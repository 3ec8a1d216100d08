"""format and footnote: hand-worked cases and properties (olmOCR-bench itself is the reference
in ``test_facts_olmocr_parity``; these hold without it)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from pytest_doceval.kinds.facts.checks import check
from pytest_doceval.kinds.facts.markup import formatted_spans, marker_spans
from pytest_doceval.kinds.facts.model import Fact, parse_fact


def make(type: str, **fields: Any) -> Fact:
    return parse_fact({"pdf": "doc.pdf", "page": 1, "id": "f", "type": type, **fields})


def verdict(fact: Fact, output: str) -> tuple[bool | None, float, str]:
    result = check(fact, output, latin_only=True)
    assert "\n" not in result.explanation
    return result.passed, result.score, result.explanation


PAGE = """# Buffering Tidal Power

Tidal streams are **predictable to the minute**, yet _their output_ arrives late.

<h2 class="sec">2 Model</h2>
We treat each cavern as an <em>ideal</em> reservoir<sup>1</sup> at <b>constant</b> temperature.
Losses are small[^2] in practice, and grow with depth³.

[^2]: Measured at Brannock Point.
"""


@pytest.mark.parametrize(
    ("fmt", "spans"),
    [
        ("heading", ["Buffering Tidal Power", "2 Model"]),
        ("bold", ["predictable to the minute", "constant"]),
        ("italic", ["their output", "ideal"]),
    ],
)
def test_spans_each_format_marks(fmt: str, spans: list[str]) -> None:
    assert formatted_spans(PAGE, fmt) == spans


@pytest.mark.parametrize(
    ("fields", "passed"),
    [
        ({"text": "Buffering Tidal Power", "format": "heading"}, True),
        ({"text": "Model", "format": "heading"}, True),  # a piece of the heading is enough
        ({"text": "predictable", "format": "bold"}, True),
        ({"text": "predictable", "format": "italic"}, False),
        ({"text": "Tidal streams", "format": "bold"}, False),  # plain text
        ({"text": "IDEAL", "format": "italic"}, False),
        ({"text": "IDEAL", "format": "italic", "case_sensitive": False}, True),
        ({"text": "constnt", "format": "bold"}, False),
        # "constnt" against its best 7-character window of "constant", "constan": 6 characters
        # in common, indel distance 2, ratio 1 - 2/14 = 6/7; with one allowed diff the
        # threshold is 1 - 1/7, reached exactly.
        ({"text": "constnt", "format": "bold", "max_diffs": 1}, True),
    ],
)
def test_format_verdicts(fields: dict[str, Any], passed: bool) -> None:
    assert verdict(make("format", **fields), PAGE)[0] is passed


def test_format_explanations_name_what_was_found() -> None:
    passed, score, explanation = verdict(make("format", text="constnt", format="bold"), PAGE)
    assert passed is False
    assert score == pytest.approx(6 / 7)
    assert score == pytest.approx(fuzz.partial_ratio("constnt", "constant") / 100)
    assert "closest 'constant'" in explanation and "2 found" in explanation
    passed, score, explanation = verdict(make("format", text="x", format="bold"), "plain")
    assert (passed, score, explanation) == (False, 0.0, "no bold text in the output")


@pytest.mark.parametrize(
    ("fields", "passed"),
    [
        ({"marker": "1"}, True),  # <sup>1</sup>
        ({"marker": "2"}, True),  # [^2] (its definition [^2]: does not count, the reference does)
        ({"marker": "3"}, True),  # Unicode superscript three
        ({"marker": "4"}, False),
        ({"marker": "1", "appears_before_marker": "reservoir"}, True),
        # Only <b> and <i> tags are normalised away: the "em" of "<em>ideal</em>" stays in the
        # letters compared ("idealemreservoir"), as in olmOCR-bench.
        ({"marker": "1", "appears_before_marker": "ideal reservoir"}, False),
        ({"marker": "1", "appears_after_marker": "at constant temperature"}, True),
        ({"marker": "1", "appears_after_marker": "Losses are small"}, False),
        ({"marker": "2", "appears_before_marker": "Losses are small"}, True),
        ({"marker": "3", "appears_before_marker": "grow with depth"}, True),
        ({"marker": "3", "appears_before_marker": "Tidal streams"}, False),  # too far back
    ],
)
def test_footnote_verdicts(fields: dict[str, Any], passed: bool) -> None:
    assert verdict(make("footnote", **fields), PAGE)[0] is passed


def test_footnote_definition_alone_is_not_a_marker() -> None:
    assert marker_spans("9", "[^9]: a definition only") == []
    passed, _, explanation = verdict(make("footnote", marker="9"), "[^9]: a definition only")
    assert passed is False
    assert "not found as [^9], <sup>9</sup> or superscript digits" in explanation


def test_footnote_context_failure_says_which_side() -> None:
    fact = make("footnote", marker="1", appears_after_marker="Losses are small")
    passed, _, explanation = verdict(fact, PAGE)
    assert passed is False
    assert explanation.startswith("'Losses are small' is not just after any of the 1 occurrences")


WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=12)


@given(WORD, WORD, st.sampled_from(["**{}**", "__{}__", "<b>{}</b>", "<STRONG>{}</strong>"]))
@settings(max_examples=200, deadline=None)
def test_bold_text_passes_its_bold_fact(before: str, text: str, wrap: str) -> None:
    page = f"{before} {wrap.format(text)} end"
    assert verdict(make("format", text=text, format="bold"), page)[0] is True


@given(WORD, st.sampled_from(["heading", "bold", "italic"]))
@settings(max_examples=100, deadline=None)
def test_plain_text_has_no_format(text: str, fmt: str) -> None:
    assert verdict(make("format", text=text, format=fmt), f"just {text} here")[0] is False


@given(
    WORD,
    WORD,
    st.from_regex(r"[1-9][0-9]?", fullmatch=True),
    st.sampled_from(["[^{}]", "<sup>{}</sup>", "super"]),
)
@settings(max_examples=200, deadline=None)
def test_a_marker_between_its_contexts_passes(
    before: str, after: str, marker: str, form: str
) -> None:
    shown = (
        marker.translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
        if form == "super"
        else form.format(marker)
    )
    page = f"{before}{shown} {after}"
    fact = make("footnote", marker=marker, appears_before_marker=before, appears_after_marker=after)
    assert verdict(fact, page)[0] is True
