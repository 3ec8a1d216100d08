"""Each fair-v1 step on the seed's own examples, then the profiles as wholes."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_doceval.text import normalise as n


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("::: thebibliography\nBody\n:::", "\nBody\n"),
        ("# Intro {#sec:intro}", "# Intro "),
        ("[Small Caps]{.smallcaps} text", "Small Caps text"),
        ('Table [1](#tab:s){reference-type="ref" reference="tab:s"} lists', "Table 1 lists"),
        (r'eq. ([\[eq:e\]](#eq:e){reference-type="ref" reference="eq:e"})', "eq. ()"),
        ('x{width="50%"}', "x"),
    ],
)
def test_remove_pandoc_divs(text: str, expected: str) -> None:
    assert n.remove_pandoc_divs(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("as shown [@hochreiter1997].", "as shown ."),
        ("see [@a; @b, p. 3] here", "see  here"),
        ("@vaswani2017 showed", " showed"),
        ("mail me at ada@example.org", "mail me at ada@example.org"),
    ],
)
def test_remove_pandoc_citations(text: str, expected: str) -> None:
    assert n.remove_pandoc_citations(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("LSTMs [1] and", "LSTMs  and"),
        ("prior work [1,2]", "prior work "),
        ("prior work [1, 2, 3]", "prior work "),
        ("range [1-3] x", "range  x"),
        ("mixed [12, 15-17].", "mixed ."),
        ("en dash [4\u20136]", "en dash "),
        ("see [Table 1] and [Page 1]", "see [Table 1] and [Page 1]"),
    ],
)
def test_remove_numeric_citations(text: str, expected: str) -> None:
    assert n.remove_numeric_citations(text) == expected


def test_footnote_references_leave_definitions_for_step_5() -> None:
    text = "Body text[^1] more.\n\n[^1]: The note."
    assert n.remove_footnote_references(text) == "Body text more.\n\n[^1]: The note."


def test_footnote_definitions_with_continuation_lines() -> None:
    text = "Para.\n\n[^1]: First line of note\n    continues here.\n\nNext para."
    assert n.remove_footnote_definitions(text) == "Para.\n\n\n\nNext para."


def test_images_keep_captions() -> None:
    assert n.images_to_captions("![A plot](fig.png){width=50%}") == "A plot"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("energy $E=mc^2$ holds", "energy  holds"),
        ("display\n$$\na + b\n$$\nafter", "display\n\nafter"),
        ("costs $5 and $6 each", "costs $5 and $6 each"),
        (r"a \$ sign", r"a \$ sign"),
    ],
)
def test_remove_math(text: str, expected: str) -> None:
    assert n.remove_math(text) == expected


def test_page_markers_and_size_attributes() -> None:
    assert n.remove_page_markers("[Page 3]\ntext") == "\ntext"
    assert n.remove_size_attributes('x{width="50%" height="2in"}') == "x"


@pytest.mark.parametrize("rule", ["---", "***", "___", " - - - ", "-----"])
def test_horizontal_rules(rule: str) -> None:
    assert n.remove_horizontal_rules(f"a\n{rule}\nb") == "a\n\nb"


def test_horizontal_rule_keeps_table_separator() -> None:
    assert n.remove_horizontal_rules("|---|---|") == "|---|---|"


@pytest.mark.parametrize(
    "citation", ["(Smith, 2020)", "(Smith et al., 2020)", "(Smith & Jones, 2019b)", "(Smith 2020)"]
)
def test_parenthetical_citations(citation: str) -> None:
    assert n.remove_parenthetical_citations(f"as shown {citation}.") == "as shown ."


def test_parenthetical_citations_leave_other_parentheses() -> None:
    assert n.remove_parenthetical_citations("(see Table 2)") == "(see Table 2)"


def test_strip_markdown_seed_000_example() -> None:
    # seed 000 section 3.2.6: "## 1. Introduction" normalises to "1. Introduction".
    out = n.strip_markdown(
        "## 1. Introduction\n\nRecurrent neural networks, long short-term memory"
    )
    assert out == "1. Introduction\n\nRecurrent neural networks, long short-term memory"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("**bold** and *it* and _u_", "bold and it and u"),
        ("[text](http://x.y)", "text"),
        ("- item\n* item\n+ item\n\u2022 item", "item\nitem\nitem\nitem"),
        ("1. first\n2) second", "1. first\n2) second"),
        ("| a | b |\n|---|:-:|\n| 1 | 2 |", "  a   b  \n\n  1   2  "),
        ("```python\nx = 1\n```", "\nx = 1\n"),
        (r"a \* b \[c\] 5\%", "a * b [c] 5%"),
        ("> quoted", "quoted"),
        ("snake_case_name stays", "snake_case_name stays"),
    ],
)
def test_strip_markdown(text: str, expected: str) -> None:
    assert n.strip_markdown(text) == expected


def test_collapse_whitespace() -> None:
    assert n.collapse_whitespace("  a\n\n b\t\tc  \r\n") == "a b c"


def test_plain_v1_keeps_lines() -> None:
    assert n.PLAIN_V1("# Title\r\n\r\n\r\nsome   text\n") == "Title\nsome text"


def test_fair_v1_order_is_the_seeds() -> None:
    # Line endings first (every profile), NFKC (seed 000), C1 controls, then seed 002's 13 steps.
    assert n.FAIR_V1.step_names == [
        "unify_line_endings",
        "unicode_nfkc",
        "remove_c1_controls",
        "remove_pandoc_divs",
        "remove_pandoc_citations",
        "remove_numeric_citations",
        "remove_footnote_references",
        "remove_footnote_definitions",
        "images_to_captions",
        "remove_math",
        "remove_page_markers",
        "remove_size_attributes",
        "remove_horizontal_rules",
        "remove_parenthetical_citations",
        "strip_markdown",
        "collapse_whitespace",
    ]


def test_fair_v1_makes_pandoc_truth_and_pdf_text_agree() -> None:
    truth = (
        "## 2. Method {#sec:method}\n\nWe follow [@lee2020] and use $x^2$ terms.[^1]\n\n"
        "| Site | Flow |\n|------|------|\n| A | 3 |\n\n[^1]: A footnote.\n"
    )
    pdf_text = "2. Method\nWe follow [3] and use terms.\n---\nSite Flow\nA 3\n"
    assert (
        n.FAIR_V1(truth)
        == n.FAIR_V1(pdf_text)
        == "2. Method We follow and use terms. Site Flow A 3"
    )


def test_nfkc_expands_ligatures_and_full_width() -> None:
    assert n.FAIR_V1("\ufb01nal \uff21\uff22") == "final AB"


def test_get_profile_unknown() -> None:
    with pytest.raises(KeyError, match="known profiles"):
        n.get_profile("fair-v9")


@given(st.text())
def test_profiles_are_idempotent_on_their_own_output(text: str) -> None:
    once = n.FAIR_V1(text)
    assert n.collapse_whitespace(once) == once
    assert n.RAW(n.RAW(text)) == n.RAW(text)


@given(st.text(alphabet=st.characters(categories=["Lo", "Ll", "Lu", "Mn"]), max_size=40))
def test_nfd_and_nfc_copies_normalise_equal(text: str) -> None:
    nfd = unicodedata.normalize("NFD", text)
    assert n.FAIR_V1(nfd) == n.FAIR_V1(text)
    assert n.RAW(nfd) == n.RAW(text)


@given(st.text(alphabet=st.characters(categories=["L", "N", "Zs"]), max_size=60))
def test_plain_words_survive_fair_v1(text: str) -> None:
    # Letters, digits and spaces carry no markup: fair-v1 only folds Unicode and whitespace.
    expected = " ".join(unicodedata.normalize("NFKC", text).split())
    assert n.FAIR_V1(text) == expected
