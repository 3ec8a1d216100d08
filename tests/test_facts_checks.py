"""present, absent, order, baseline and math: hand-worked cases and rapidfuzz cross-checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from pytest_doceval.kinds.facts.checks import SHORTER_OUTPUT, check, trailing_repeats
from pytest_doceval.kinds.facts.model import Fact, parse_fact
from pytest_doceval.kinds.facts.normalise import normalise_text
from pytest_doceval.kinds.facts.result import PageOutput


def make(type: str, **fields: Any) -> Fact:
    return parse_fact({"pdf": "doc.pdf", "page": 1, "id": "f", "type": type, **fields})


def run(fact: Fact, output: str, *, latin_only: bool = True) -> tuple[bool | None, float, str]:
    result = check(fact, output, latin_only=latin_only)
    assert "\n" not in result.explanation
    return result.passed, result.score, result.explanation


# --- present / absent ---


def test_present_passes_through_markup_and_typography() -> None:
    fact = make("present", text="The “quick” brown fox — 5 µm")
    passed, score, _ = run(fact, 'Intro\n\nThe **"quick"** brown\nfox - 5 μm jumps')
    assert (passed, score) == (True, 1.0)


def test_present_with_max_diffs_hand_worked() -> None:
    # "The quick brown fox" (19 chars) vs window "The quikc brown fox": one transposition is two
    # indel operations, so the indel similarity is 1 - 2/38 = 18/19; threshold 1 - 1/19 = 18/19.
    # Exactly on the threshold: olmOCR's own float arithmetic (rapidfuzz's percentage / 100
    # against 1.0 - 1/19) decides, and gives a pass.
    fact = make("present", text="The quick brown fox", max_diffs=1)
    passed, score, explanation = run(fact, "Intro. The quikc brown fox jumps.")
    assert score == pytest.approx(18 / 19)
    assert fuzz.partial_ratio("The quick brown fox", "The quikc brown fox") / 100 >= 1 - 1 / 19
    assert passed is True
    strict = make("present", text="The quick brown fox")
    passed, _, explanation = run(strict, "Intro. The quikc brown fox jumps.")
    assert passed is False
    assert "best similarity 0.947 < threshold 1.000" in explanation
    assert "closest is 'The quikc brown fox'" in explanation


def test_present_failure_shows_the_best_window() -> None:
    passed, score, explanation = run(
        make("present", text="total revenue"), "Net total reveneu was up; costs fell."
    )
    assert passed is False
    assert explanation.startswith("'total revenue' not found: best similarity")
    window = explanation.split("closest is ")[1].strip("'")
    assert fuzz.ratio("total revenue", window) / 100 == pytest.approx(score)


def test_case_sensitivity() -> None:
    assert run(make("present", text="ABSTRACT"), "Abstract")[0] is False
    assert run(make("present", text="ABSTRACT", case_sensitive=False), "Abstract")[0] is True


def test_first_n_and_last_n_restrict_the_output() -> None:
    body = "Header line. " + "filler " * 20 + "Footer line."
    assert run(make("present", text="Header", first_n=20), body)[0] is True
    assert run(make("present", text="Footer", first_n=20), body)[0] is False
    assert run(make("present", text="Footer", last_n=20), body)[0] is True
    both = make("present", text="line. Footer", first_n=12, last_n=12)
    # first 12 "Header line." + last 12 "Footer line." joined: "Header line.Footer line."
    assert run(both, body)[0] is False
    assert run(make("present", text="line.Footer", first_n=12, last_n=12), body)[0] is True


def test_absent_passes_below_threshold_and_fails_at_it() -> None:
    fact = make("absent", text="Page 3 of 10")
    assert run(fact, "Body text only.")[0] is True
    passed, score, explanation = run(fact, "Body text. Page 3 of 10")
    assert (passed, score) == (False, 1.0)
    assert "should be absent but 'Page 3 of 10' matches" in explanation


def test_outputs_shorter_than_the_text_are_aligned_inside_it_as_olmocr_does() -> None:
    # rapidfuzz aligns the shorter string inside the longer: " " is "found" in any phrase with a
    # space. olmOCR-bench has no guard against this, and neither has this check (its verdicts
    # are olmOCR-bench's); the explanation says what happened.
    assert fuzz.partial_ratio("a long phrase", " ") == 100
    present, absent = make("present", text="a long phrase"), make("absent", text="a long phrase")
    passed, score, explanation = run(present, "\n")
    assert (passed, score) == (True, 1.0)
    assert "shorter than the text" in explanation
    passed, score, explanation = run(absent, "\n")
    assert (passed, score) == (False, 1.0)
    assert "found inside it, as olmOCR-bench does" in explanation
    assert run(present, "")[:2] == (False, 0.0)  # nothing aligns with an empty output
    assert run(make("present", text="hello world", max_diffs=1), "hello worl")[0] is True


def test_a_present_pass_on_a_shorter_output_carries_a_caveat_and_strict_fails_it() -> None:
    present = make("present", text="a long phrase")
    blank = check(present, "\n", latin_only=True)
    assert blank.passed is True and blank.caveat.startswith(SHORTER_OUTPUT)
    assert "(blank) is shorter than the text (13 characters)" in blank.caveat
    strict = check(present, "\n", latin_only=True, fail_shorter=True)
    assert (strict.passed, strict.score, strict.caveat) == (False, 1.0, "")
    assert "the strict profile fails it" in strict.explanation
    piece = check(present, "long", latin_only=True)
    assert piece.passed is True and "(4 characters, 'long')" in piece.caveat
    # a slice shorter than the text is the same case; a long enough output is not
    sliced = check(
        make("present", text="a long phrase", first_n=4), "a long phrase", latin_only=True
    )
    assert sliced.passed is True and "output (first 4 characters)" in sliced.caveat
    whole = check(present, "here is a long phrase", latin_only=True, fail_shorter=True)
    assert (whole.passed, whole.caveat) == (True, "")
    # only passes of present facts: a failure or an absent fact has no caveat to carry
    assert check(present, "xyz", latin_only=True).caveat == ""
    absent = check(make("absent", text="a long phrase"), "\n", latin_only=True, fail_shorter=True)
    assert (absent.passed, absent.caveat) == (False, "")


@given(
    st.text(alphabet="abc xyz", min_size=1, max_size=12),
    st.text(alphabet="abc xyz\n*", max_size=60),
    st.integers(0, 3),
)
@settings(max_examples=300)
def test_present_and_absent_agree_with_rapidfuzz_called_directly(
    text: str, output: str, max_diffs: int
) -> None:
    reference, content = normalise_text(text), normalise_text(output)
    if not reference.strip():
        return
    present = make("present", text=text, max_diffs=max_diffs)
    absent = make("absent", text=text, max_diffs=max_diffs)
    got_present, got_absent = (
        check(present, output, latin_only=True),
        check(absent, output, latin_only=True),
    )
    expected = fuzz.partial_ratio(reference, content) / 100.0
    threshold = 1.0 - max_diffs / len(reference)
    assert got_present.score == expected == got_absent.score
    assert got_present.passed is (expected >= threshold)
    assert got_absent.passed is (expected < threshold)


# --- order ---


def test_order_hand_worked() -> None:
    fact = make("order", before="Introduction", after="Conclusion")
    assert run(fact, "# Introduction\nbody\n# Conclusion")[:2] == (True, 1.0)
    passed, _, explanation = run(fact, "# Conclusion\nbody\n# Introduction")
    assert passed is False
    assert "'Introduction' first appears at character 20, not before the last" in explanation


def test_order_some_before_occurrence_precedes_some_after_occurrence() -> None:
    fact = make("order", before="alpha", after="omega")
    assert run(fact, "omega alpha omega")[0] is True  # the second omega follows alpha
    assert run(fact, "alpha omega alpha")[0] is True
    assert run(fact, "omega omega alpha")[0] is False


def test_order_with_max_diffs_and_missing_text() -> None:
    fact = make("order", before="Introduction", after="Conclusion", max_diffs=2)
    assert run(fact, "Intrdouction ... Concluson")[0] is True
    passed, _, explanation = run(fact, "Preface ... Conclusion")
    assert passed is False
    assert explanation.startswith("'before' text 'Introduction' not found within 2 edits")


# --- baseline ---


@pytest.mark.parametrize(
    ("text", "size", "expected"),
    [  # olmOCR's own RepeatDetector unit tests (olmocr/repeatdetect.py)
        ("a", 3, [1, 0, 0]),
        ("abab", 3, [1, 2, 1]),
        ("aabaabaa", 3, [2, 1, 2]),
        ("abc", 5, [1, 1, 1, 0, 0]),
        ("a" * 10000, 5, [10000, 5000, 3333, 2500, 2000]),
        ("abcabcabcabc", 5, [1, 1, 4, 1, 1]),
        ("abcdabcabcdabc", 4, [1, 1, 1, 1]),
        ("abcabcxyz", 3, [1, 1, 1]),
        ("αβγαβγ", 3, [1, 1, 2]),
        ("@@##@@##", 4, [2, 1, 1, 2]),
        ("ababababab", 4, [1, 5, 1, 2]),
        ("", 3, [0, 0, 0]),
        ("ab \n ab\tab", 3, [1, 1, 2]),  # as "ab ab ab": whitespace runs are one space
    ],
)
def test_trailing_repeats_matches_olmocr(text: str, size: int, expected: list[int]) -> None:
    assert trailing_repeats(text, size) == expected


def test_baseline_blank_and_repeats() -> None:
    fact = make("baseline")
    assert run(fact, "A normal page of text.")[:2] == (True, 1.0)
    assert run(fact, "  \n --- \n")[0] is False
    passed, _, explanation = run(fact, "Results: " + "the " * 40)
    assert passed is False
    assert "repeated" in explanation and "(more than 30)" in explanation
    assert run(fact, "Results: " + "the " * 30)[0] is True  # 30 repeats is not more than 30
    assert run(make("baseline", max_repeats=50), "Results: " + "the " * 40)[0] is True


def test_baseline_blank_page_with_max_length() -> None:
    fact = make("baseline", max_length=5)
    assert run(fact, "  12 ")[0] is True
    assert run(fact, "abc def")[0] is False  # 6 alphanumerics
    alt = make("baseline", max_length=0, max_length_skips_image_alt_tags=True)
    assert run(alt, "![a figure of a cat](img.png)")[0] is True
    assert run(make("baseline", max_length=0), "![a figure of a cat](img.png)")[0] is False


def test_baseline_out_of_script_characters_only_for_latin_pages() -> None:
    fact = make("baseline")
    for text in ("Summary 概要", "ひらがな text", "カタカナ text", "Great 😀", "Flag 🇫🇷"):
        passed, _, explanation = run(fact, text, latin_only=True)
        assert passed is False and "CJK or emoji" in explanation
        assert run(fact, text, latin_only=False)[0] is True
    assert run(fact, "한국어 텍스트", latin_only=True)[0] is True  # Hangul is not in olmOCR's set
    off = make("baseline", check_disallowed_characters=False)
    assert run(off, "Summary 概要", latin_only=True)[0] is True


# --- math ---


def test_math_equal_after_latex_normalisation() -> None:
    fact = make("math", math=r"\lim_{x \rightarrow \infty} f(x) = 0")
    for output in (
        r"We have $\lim_{x\to\infty} f(x)=0$ here.",
        r"We have \[ \lim_{x \to \infty} f(x) = 0 \] here.",
        r"We have \(\lim_{x\rightarrow\infty}f(x)=0\).",
        "We have $$\n\\lim_{x\\to\\infty} f(x) = 0\n$$",
    ):
        assert run(fact, output)[:2] == (True, 1.0), output


def test_math_without_a_textual_match_is_skipped_with_the_reason() -> None:
    fact = make("math", math=r"x^{2}")
    passed, score, explanation = run(fact, r"so $x^2$ holds")
    assert passed is None
    assert score == pytest.approx(fuzz.ratio("x^{2}", "x^2") / 100)
    assert "rendering comparison is not available" in explanation
    assert check(fact, r"so $x^2$ holds", latin_only=True).skipped


def test_math_fails_when_the_output_has_no_equation() -> None:
    passed, _, explanation = run(make("math", math="x"), "plain text, no maths")
    assert passed is False and explanation.startswith("no equation in the output")
    ignore = make("math", math="x", ignore_dollar_delimited=True)
    assert run(ignore, "only $x$ here")[0] is False


def test_math_uses_a_renderer_when_given_one() -> None:
    fact = make("math", math=r"x^{2}")
    calls: list[tuple[str, str]] = []

    def braces_optional(reference: str, candidate: str) -> bool:
        calls.append((reference, candidate))
        return reference.replace("{", "").replace("}", "") == candidate

    result = check(fact, r"$y$ and $x^2$", latin_only=True, render_equal=braces_optional)
    assert result.passed is True
    assert calls[0] == (r"x^{2}", "x^2")  # most similar candidate first
    never = check(fact, r"$y$", latin_only=True, render_equal=lambda a, b: False)
    assert never.passed is False


def test_page_output_is_shared_between_checks() -> None:
    page = PageOutput("| a | b |\n|---|---|\n| 1 | 2 |\n\nHello $x$")
    facts = [
        make("present", text="Hello"),
        make("table", cell="1", right="2"),
        make("math", math="x"),
        make("baseline"),
    ]
    assert all(check(f, page, latin_only=True).passed for f in facts)
    assert page.markdown_tables is page.markdown_tables  # parsed once


def test_long_texts_are_quoted_around_their_first_difference() -> None:
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron"
    fact = make("present", text=words)
    _, _, explanation = run(fact, "Intro. " + words.replace("omicron", "omikron") + " end")
    assert explanation.startswith("'…")
    assert "omicron'" in explanation.split(" not found")[0]
    assert "closest is '…" in explanation and "omikron'" in explanation
