"""olmOCR-bench's text normalisation and the math facts' LaTeX normalisation."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.facts.normalise import normalise_latex, normalise_text


def olmocr_normalize_text(md: str) -> str:
    """olmOCR-bench's ``normalize_text`` as published (allenai/olmocr, olmocr/bench/tests.py),
    retyped here as an independent reference (``test_facts_olmocr_parity`` also calls the real
    one when ``../shared/peers`` is there): one pass, no invisible-character step."""
    md = re.sub(r"<br/?>", " ", md)
    md = re.sub(r"\*\*(.*?)\*\*", r"\1", md)
    md = re.sub(r"__(.*?)__", r"\1", md)
    md = re.sub(r"</?b>", "", md)
    md = re.sub(r"</?i>", "", md)
    md = re.sub(r"(\*\*|__)(.*?)\1", r"\2", md)
    md = re.sub(r"(\*|_)(.*?)\1", r"\2", md)
    md = re.sub(r"\s+", " ", md)
    md = unicodedata.normalize("NFC", md)
    replacements = {
        "‘": "'",
        "’": "'",
        "‚": "'",
        "“": '"',
        "”": '"',
        "„": '"',
        "＿": "_",
        "–": "-",
        "—": "-",
        "‑": "-",
        "‒": "-",
        "−": "-",
        "\u00b5": "\u03bc",
    }
    for fancy, plain in replacements.items():
        md = md.replace(fancy, plain)
    return md


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a<br>b<br/>c", "a b c"),
        ("**bold** and __also__", "bold and also"),
        ("<b>bold</b> <i>it</i>", "bold it"),
        ("*italic* and _it_", "italic and it"),
        ("a \n\t  b\u00a0\u2003c", "a b c"),  # NBSP and em space are whitespace
        ("e\u0301", "\u00e9"),  # NFC
        ("\u2018a\u2019 \u201cb\u201d \u201ec\u201d", '\'a\' "b" "c"'),
        ("1\u20132 \u2014 x\u2212y a\u2011b f\u2012g", "1-2 - x-y a-b f-g"),
        ("5 \u00b5m", "5 \u03bcm"),
        ("A\u200bB\u200cC\u200dD\u2060E\ufeffF", "A\u200bB\u200cC\u200dD\u2060E\ufeffF"),
        ("hy\u00adphen", "hy\u00adphen"),  # invisible characters stay, as in olmOCR-bench
        ("**\u200bword**", "\u200bword"),
        ("snake_case_name", "snakecasename"),  # olmOCR's italic rule pairs underscores
        ("*_a_*", "_a_"),  # one pass: the outer pair goes, the inner stays
        ("\uff3fa\uff3f", "_a_"),  # fullwidth low line becomes "_" after the italic step
    ],
)
def test_examples(text: str, expected: str) -> None:
    assert normalise_text(text) == expected


def test_bullets_pair_within_a_line_only_so_one_pass_is_not_idempotent() -> None:
    # "." does not cross a newline in olmOCR's italic regex, and whitespace is collapsed after
    # it: bullets on separate lines survive one pass, and pair on a second. olmOCR normalises
    # once; so does every check here.
    once = normalise_text("* one\n* two")
    assert once == "* one * two"
    assert normalise_text(once) == " one two"


def test_matches_olmocr_where_one_pass_is_already_a_fixed_point() -> None:
    text = "The <b>**Results**</b> were\u2014as _expected_\u2014within 5\u00b5m.<br>Next  line"
    assert olmocr_normalize_text(olmocr_normalize_text(text)) == olmocr_normalize_text(text)
    assert normalise_text(text) == olmocr_normalize_text(text)
    assert normalise_text(text) == "The Results were-as expected-within 5μm. Next line"


MARKUP_PIECES = [*"ab *_<>/ri\n\t", "<br>", "<b>", "</i>", "\u2019", "\u2014", "\u00b5"]
MARKUP = st.lists(
    st.sampled_from([*MARKUP_PIECES, "\uff3f", "\u200b", "e\u0301", "\u00a0"]),
    max_size=40,
).map("".join)


@given(MARKUP)
@settings(max_examples=300)
def test_equals_olmocr(text: str) -> None:
    assert normalise_text(text) == olmocr_normalize_text(text)


@given(st.text())
@settings(max_examples=300)
def test_any_unicode_does_not_crash_and_lands_in_the_normal_form(text: str) -> None:
    once = normalise_text(text)
    assert unicodedata.is_normalized("NFC", once)
    assert not set("\u2018\u2019\u201c\u201d\u2013\u2014\u2212\u00b5").intersection(once)


@given(st.text().filter(lambda t: not set("*_<\uff3f").intersection(t)))
@settings(max_examples=300)
def test_idempotent_without_markup_characters(text: str) -> None:
    once = normalise_text(text)
    assert normalise_text(once) == once
    assert not re.search(r"\s\s", once)


@given(MARKUP)
@settings(max_examples=300)
def test_idempotent_wherever_olmocr_itself_is(text: str) -> None:
    reference = olmocr_normalize_text(text)
    assume(olmocr_normalize_text(reference) == reference)
    once = normalise_text(text)
    assert normalise_text(once) == once


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (r"x \rightarrow \infty", r"x\to\infty"),
        (r"\frac{a}{b} + c", r"\frac{a}{b}+c"),
        ("x^{2}\n+ y", "x^{2}+y"),
        ("a\u200b+b", "a+b"),
        (r"\alpha  x", r"\alpha x"),
    ],
)
def test_latex_spellings_that_render_alike_are_equal(a: str, b: str) -> None:
    assert normalise_latex(a) == normalise_latex(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (r"\alpha x", r"\alphax"),  # the space ends the control word
        (r"\rightarrowtail", r"\totail"),  # only the whole control word is a synonym
        (r"x_{1}", r"x_{2}"),
        (r"a\ b", r"ab"),  # a control space renders as a space
    ],
)
def test_latex_spellings_that_differ_stay_different(a: str, b: str) -> None:
    assert normalise_latex(a) != normalise_latex(b)


def test_latex_keeps_underscores_and_stars() -> None:
    # The text normaliser would read x_1 ... _2 as italics; math never goes through it.
    assert normalise_latex(r"x_1 * y_2") == r"x_1*y_2"


@given(st.lists(st.sampled_from([*"\\ab x{}^_ \n", r"\to", r"\rightarrow"])).map("".join))
@settings(max_examples=400)
def test_latex_normaliser_is_idempotent(latex: str) -> None:
    once = normalise_latex(latex)
    assert normalise_latex(once) == once
    assert r"\rightarrow" not in re.findall(r"\\[A-Za-z]+|\\.", once)


LATEX_UNICODE = st.lists(
    st.one_of(
        st.sampled_from(["\\", "\\alpha", " ", "a", "x", "\u0301", "\u0334"]), st.text(max_size=3)
    )
).map("".join)


@given(LATEX_UNICODE)
@settings(max_examples=500)
def test_latex_normaliser_takes_any_unicode(latex: str) -> None:
    once = normalise_latex(latex)
    assert normalise_latex(once) == once
