"""Regression tests for the review's defect classes in the normalisation profiles, each with
several inputs of its class: line endings, table separators, and fair-v1's steps measured
against their own docstrings and seed 002."""

from __future__ import annotations

import pytest

from pytest_doceval.kinds.documents.scope import split_body_references
from pytest_doceval.metrics import character_errors
from pytest_doceval.text import normalise as n

NEWLINES = ["\r\n", "\r", "\u2028", "\u2029", "\v", "\f"]

# --- class 1: line endings ---

PAPER = """# Storage model {#sec:model}

Caverns store energy [@harwick2019] at $p$ bar.[^1]

-   charge whenever output exceeds the forecast;
-   drain after sunset.

| Site | Volume |
|------|-------:|
| Kelda | 42000 |

[^1]: Adiabatic designs
    recover heat.

## References

[1] R. Harwick. Pairing tidal arrays. 2019.
"""


@pytest.mark.parametrize("newline", NEWLINES)
@pytest.mark.parametrize("profile", list(n.PROFILES.values()), ids=list(n.PROFILES))
def test_every_profile_ignores_the_line_ending_convention(profile: n.Profile, newline: str) -> None:
    assert profile(PAPER.replace("\n", newline)) == profile(PAPER)


@pytest.mark.parametrize("newline", NEWLINES)
def test_body_cer_of_a_windows_output_equals_its_lf_copy(newline: str) -> None:
    # The review's symptom: an output identical to the truth but for CRLF had Body CER 2.3
    # (the heading's `$` never matched before "\r") while its CER was 0.
    truth, output = PAPER, PAPER.replace("\n", newline)
    truth_body = n.FAIR_V1(split_body_references(truth).body)
    output_body = n.FAIR_V1(split_body_references(output).body)
    assert character_errors(truth_body, output_body).rate == 0.0
    assert character_errors(n.FAIR_V1(truth), n.FAIR_V1(output)).rate == 0.0
    assert "Harwick" not in output_body


def test_unify_line_endings_maps_each_break_to_one_newline() -> None:
    assert n.unify_line_endings("a\r\nb\rc\u2028d\u2029e\vf\fg\nh") == "a\nb\nc\nd\ne\nf\ng\nh"
    assert n.unify_line_endings("a\r\r\nb") == "a\n\nb"  # a lone CR, then a CRLF pair
    # NEL is not a break here: PyMuPDF emits C1 codes for unmapped glyphs (fair-v1 drops them).
    assert n.unify_line_endings("a\x85b") == "a\x85b"


def test_a_profile_must_start_with_unify_line_endings() -> None:
    with pytest.raises(ValueError, match="must start with unify_line_endings"):
        n.Profile("broken", (("unicode_nfc", n.unicode_nfc),), "forgot line endings")


# --- class 3: table separator rows ---


@pytest.mark.parametrize(
    "separator",
    [
        "|---|---|  ",
        "|---|---|\t",
        "| --- | --- |   \t",
        "|:--|--:|",
        "  |:---:|----| ",
        "---|---",
        "---|---  ",
        ":--|:--:|--:",
        "+------+-------+",
        "+======+=======+ ",
        "+:=====+======:+",
    ],
)
def test_table_separator_rows_never_survive_as_text(separator: str) -> None:
    table = f"| Site | Volume |\n{separator}\n| Kelda | 42000 |"
    assert n.FAIR_V1(table) == "Site Volume Kelda 42000"
    assert n.PLAIN_V1(table) == "Site Volume\nKelda 42000"


@pytest.mark.parametrize(
    "line", ["| a - b |", "1 + 1 = 2", "a - b | c", "x = y - z", "C++ | Rust", "| -5 | 3 |"]
)
def test_rows_with_text_are_not_separators(line: str) -> None:
    assert n.TABLE_SEPARATOR.search(line) is None


# --- class 5: fair-v1 steps against their docstrings and the seed ---


@pytest.mark.parametrize(
    "definition",
    [
        "[^1]: First paragraph.\n\n    Second paragraph.",
        "[^1]: First paragraph.\n\n    Second paragraph.\n\n    Third, after two.",
        "[^note]: Wrapped first\n    line.\n\n\n    A later paragraph\n    also wrapped.",
        "[^1]: Tab-indented.\n\n\tSecond paragraph.",
        "[^1]: Then a list.\n\n    -   an item inside the note",
    ],
)
def test_multi_paragraph_footnote_definitions_go_whole(definition: str) -> None:
    text = f"Body before.\n\n{definition}\n\nBody after."
    assert n.FAIR_V1(text) == "Body before. Body after."


def test_unindented_text_after_a_footnote_is_body() -> None:
    text = "[^1]: The note.\n\nBody paragraph.\n\n    indented code of the body"
    # Only an indented block directly in the note's run belongs to it.
    assert n.remove_footnote_definitions("[^1]: Note.\n\nBody.") == "\n\nBody."
    assert "Body paragraph." in n.FAIR_V1(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Write to [ada@example.org](mailto:ada@example.org).", "Write to ada@example.org."),
        ("Write to [a.b-c@x.co.uk](mailto:a.b-c@x.co.uk) now", "Write to a.b-c@x.co.uk now"),
        ("Write to [ada@example.org] now", "Write to [ada@example.org] now"),
        ("Write to <ada@example.org> now", "Write to ada@example.org now"),
        (
            "Contact: [the team, team@lab.org](mailto:team@lab.org)",
            "Contact: the team, team@lab.org",
        ),
        ("Mail ada@example.org or [see @key]", "Mail ada@example.org or"),
        ("as @doe99. Next", "as . Next"),
        ("[-@doe99] said", "said"),
    ],
)
def test_e_mail_addresses_keep_their_text(text: str, expected: str) -> None:
    assert n.FAIR_V1(text) == expected


@pytest.mark.parametrize(
    "citation",
    [
        "(Smith,2020)",
        "(Smith, 2020)",
        "(Smith 2020)",
        "(Smith2020)",
        "(Smith et al.,2020)",
        "(Smith & Jones,2019b)",
        "(Smith,\n2020)",
        "(O'Brien and Müller, 2021)",
        "(Smith-Jones, 2018)",
    ],
)
def test_author_year_citations_with_the_seeds_optional_space(citation: str) -> None:
    assert n.FAIR_V1(f"as shown {citation}.") == "as shown ."


@pytest.mark.parametrize("text", ["(see Table 2)", "(ABC1, 2020)", "(smith, 2020)", "(x2020)"])
def test_other_parentheses_stay(text: str) -> None:
    assert n.remove_parenthetical_citations(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a type <T> and <MIME> types", "a type <T> and <MIME> types"),
        ("List<A> or <B>", "List<A> or <B>"),
        ("x < y and y > z", "x < y and y > z"),
        ("<placeholder> stays", "<placeholder> stays"),
        ("E=mc<sup>2</sup>", "E=mc2"),
        ('<span class="smallcaps">Kelda</span> site', "Kelda site"),
        ("a<br>b<br/>c<br />d", "a b c d"),
        ("- one\n\n<!-- -->\n\n- two", "one two"),
        ("<!-- a\nmulti-line comment --> kept", "kept"),
        ('<img src="x.png" alt="plot"> after', "after"),
        ("<div>\nblock\n</div>", "block"),
    ],
)
def test_only_real_html_tags_and_comments_go(text: str, expected: str) -> None:
    assert n.FAIR_V1(text) == expected


@pytest.mark.parametrize("control", [chr(c) for c in (0x80, 0x85, 0x88, 0x95, 0x9F)])
def test_c1_controls_go_in_fair_v1(control: str) -> None:
    # PyMuPDF writes a bullet glyph without a Unicode mapping as a C1 code (U+0088 seen).
    pdf = f"Items:\n{control} first point\n{control} second point"
    assert n.FAIR_V1(pdf) == n.FAIR_V1("Items:\n- first point\n- second point")
    assert n.FAIR_V1(f"word{control}word") == "wordword"


def test_plain_v1_and_raw_keep_c1_controls() -> None:
    # Seed 000's profile and the raw view say nothing about them: they are left alone there.
    assert "\x88" in n.PLAIN_V1("\x88 item")
    assert "\x88" in n.RAW("\x88 item")


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("# Intro {-}", "Intro"),
        ("# Intro {#sec:intro .unnumbered}", "Intro"),
        ("- # Title in a list", "Title in a list"),
        ("> ## Quoted heading", "Quoted heading"),
    ],
)
def test_heading_syntax_never_survives(heading: str, expected: str) -> None:
    assert n.FAIR_V1(heading) == expected


def test_links_with_parentheses_in_the_destination_keep_only_their_text() -> None:
    text = "see [the article](https://en.wikipedia.org/wiki/Tide_(disambiguation)) here"
    assert n.FAIR_V1(text) == "see the article here"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\*word\*", "*word*"),
        (r"\_word\_", "_word_"),
        (r"\*\*not strong\*\*", "**not strong**"),
        (r"\~~kept\~~", "~~kept~~"),
        (r"\[x\](y)", "[x](y)"),
        (r"*real* and \*escaped\*", "real and *escaped*"),
    ],
)
def test_escaped_delimiters_are_literal_text(text: str, expected: str) -> None:
    # strip_markdown's docstring: pandoc's backslash escapes are undone, i.e. the character is
    # text; an escaped "*" must neither open nor close emphasis, nor "\[" a link.
    assert n.strip_markdown(text) == expected
