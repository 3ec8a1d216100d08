"""Properties of the normalisation steps and profiles: idempotence where the seeds imply it,
line-ending invariance, and no crash on arbitrary Unicode."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.kinds.documents.scope import split_body_references
from pytest_doceval.kinds.documents.structure import extract_elements
from pytest_doceval.text import normalise as n

BREAKS = "\r\n\v\f\u2028\u2029"
NEWLINES = ["\r\n", "\r", "\u2028", "\u2029", "\v", "\f"]

# Markup-heavy text: the pieces the steps look for, mixed with letters, digits and spaces.
_PIECES = [
    *"ab1 \t[]()^:@#-*_|+=$<>!{}.,&\\",
    "\n",
    "\n\n",
    "    ",
    "[^1]: ",
    "[^n]",
    "(Smith, 2020)",
    "(Smith,2020)",
    " et al.",
    "[@k]",
    "@key",
    "ada@x.org",
    "[1, 2]",
    "[Page 3]",
    "<br>",
    "<!--",
    "-->",
    "<b>",
    "<T>",
    "::: ",
    "{#id}",
    "```",
    "---",
    "|---|",
    "+--+",
    "\x88",
    "\u00a0",
    "\ufb01",
]
MARKUP = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)
NO_BREAK_TEXT = st.text(alphabet=st.characters(exclude_characters=BREAKS), max_size=60)

# Steps whose removal can never make a new instance of what they remove: line-anchored steps and
# character-class deletions. Seed 000 section 3.4 (NFKC, whitespace) and seed 002's line-based
# steps imply a fixed point; a single-pass regex over nestable brackets ("[[1]2]") does not.
IDEMPOTENT_STEPS = [
    n.unify_line_endings,
    n.unicode_nfc,
    n.unicode_nfkc,
    n.remove_c1_controls,
    n.remove_pandoc_citations,
    n.remove_footnote_definitions,
    n.remove_horizontal_rules,
    n.collapse_whitespace,
    n.collapse_spaces_keep_lines,
]


@pytest.mark.parametrize("step", IDEMPOTENT_STEPS, ids=lambda s: s.__name__)
@settings(max_examples=300, deadline=None)
@given(st.one_of(MARKUP, st.text(max_size=60)))
def test_steps_are_idempotent(step: n.Step, text: str) -> None:
    text = n.unify_line_endings(text)  # what every step sees inside a profile
    once = step(text)
    assert step(once) == once


@pytest.mark.parametrize(
    ("step", "text", "once"),
    [
        (n.remove_numeric_citations, "[[1]2]", "[2]"),
        (n.remove_parenthetical_citations, "((Smith, 2020)Smith, 2020)", "(Smith, 2020)"),
        (n.remove_pandoc_divs, "{{#a}#b}", "{#b}"),
        (n.strip_markdown, r"\*word\*", "*word*"),
    ],
    ids=["numeric", "author-year", "attributes", "escapes"],
)
def test_single_pass_steps_are_not_idempotent_by_design(step: n.Step, text: str, once: str) -> None:
    # The seed's steps are single regex passes: removing a nested inner match can leave an outer
    # one, and an undone escape is literal text that looks like syntax. Not a property here.
    assert step(text) == once
    assert step(once) != once


@settings(max_examples=300, deadline=None)
@given(st.one_of(MARKUP, st.text(max_size=60)))
def test_table_separator_removal_is_idempotent(text: str) -> None:
    once = n.TABLE_SEPARATOR.sub("", text)
    assert n.TABLE_SEPARATOR.sub("", once) == once


@pytest.mark.parametrize("profile", list(n.PROFILES.values()), ids=list(n.PROFILES))
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(MARKUP, NO_BREAK_TEXT), max_size=6), st.sampled_from(NEWLINES))
def test_profiles_are_line_ending_invariant(
    profile: n.Profile, chunks: list[str], newline: str
) -> None:
    lf = n.unify_line_endings("".join(chunks))  # only "\n" breaks left to swap
    other = lf.replace("\n", newline)
    assert profile(other) == profile(lf)
    assert split_body_references(other) == split_body_references(lf)
    assert extract_elements(other) == extract_elements(lf)


@pytest.mark.parametrize("profile", list(n.PROFILES.values()), ids=list(n.PROFILES))
@settings(max_examples=200, deadline=None)
@given(st.text())
def test_profiles_take_any_unicode(profile: n.Profile, text: str) -> None:
    out = profile(text)
    assert not set(out) & set("\r\v\f\u2028\u2029")
    if profile is n.FAIR_V1:
        assert not re.search(r"[\x80-\x9f]", out)
        assert out == n.collapse_whitespace(out)  # one line, single spaces, trimmed
    if profile is n.PLAIN_V1:
        assert out == n.collapse_spaces_keep_lines(out)


@settings(max_examples=200, deadline=None)
@given(MARKUP)
def test_fair_v1_output_keeps_no_c1_controls_or_breaks(text: str) -> None:
    out = n.FAIR_V1(text)
    assert "\n" not in out and "\x88" not in out


@given(st.text(alphabet=st.characters(categories=["Lu", "Nd", "Zs"]), max_size=40))
def test_angle_bracketed_words_that_name_no_element_survive(text: str) -> None:
    # "<T>", "<MIME>", "<A B>": only lowercase names of HTML elements are tags.
    bracketed = f"x <{text}> y"
    assert n.FAIR_V1(bracketed) == n.collapse_whitespace(n.unicode_nfkc(bracketed))
