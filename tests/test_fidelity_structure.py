"""Regression tests for the review's structure classes: line endings, wrapped list items, heading
attributes, and blank pages; with properties over generated markdown."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_doceval.kinds.documents.structure import extract_elements, structure_score
from pytest_doceval.text.normalise import unify_line_endings

NEWLINES = ["\r\n", "\r", "\u2028", "\u2029", "\v", "\f"]

DOC = """# Storage model {#sec:model}

-   charge whenever turbine output exceeds the local demand
    forecast of the operator;
-   drain after sunset.

1.  compute the key from all of
    the inputs;
2.  ask the store.

| Site | Volume |
|------|-------:|
| Kelda | 42000 |

```
code
```
"""
EXPECTED = [
    ("heading", "storage model"),
    (
        "unordered_list",
        "charge whenever turbine output exceeds the local demand forecast of the operator;",
    ),
    ("unordered_list", "drain after sunset."),
    ("ordered_list", "compute the key from all of the inputs;"),
    ("ordered_list", "ask the store."),
    ("table_row", "site|volume"),
    ("table_row", "kelda|42000"),
    ("code_block", "code"),
]


def test_extract_elements_of_pandoc_markdown() -> None:
    assert extract_elements(DOC) == EXPECTED


@pytest.mark.parametrize("newline", NEWLINES)
def test_elements_do_not_depend_on_line_endings(newline: str) -> None:
    assert extract_elements(DOC.replace("\n", newline)) == EXPECTED
    assert structure_score(DOC, DOC.replace("\n", newline)).overall.f1 == 1.0


# --- wrapped list items ---


@pytest.mark.parametrize(
    ("wrapped", "one_line"),
    [
        ("-   a long item that\n    wraps once", "- a long item that wraps once"),
        ("* item over\n  three\n  lines", "* item over three lines"),
        ("+ tab\n\tcontinued", "+ tab continued"),
        ("1.  first step that\n    wraps", "1. first step that wraps"),
        ("10. tenth step\n    wraps too", "10. tenth step wraps too"),
        ("  - nested item\n    wraps", "  - nested item wraps"),
    ],
)
def test_a_wrapped_item_matches_the_same_item_on_one_line(wrapped: str, one_line: str) -> None:
    score = structure_score(wrapped, one_line)
    assert score.overall.to_dict() == {"tp": 1, "fp": 0, "fn": 0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A blank line ends the item's first paragraph; its later paragraphs are not joined.
        ("- item\n\n    second paragraph", [("unordered_list", "item")]),
        # A nested item is its own element, not a continuation.
        ("- a\n  - b", [("unordered_list", "a"), ("unordered_list", "b")]),
        # Unindented lines are not lazy continuations (PDF text has no indentation).
        ("1. step one\nThe next paragraph.", [("ordered_list", "step one")]),
        # Other elements and rules end the item.
        ("- a\n  # not a heading inside", [("unordered_list", "a")]),
        ("- a\n| x | y |", [("unordered_list", "a"), ("table_row", "x|y")]),
        ("- a\n   ---", [("unordered_list", "a")]),
        ("- a\n  ```\n  code", [("unordered_list", "a")]),
        ("- a\n## H", [("unordered_list", "a"), ("heading", "h")]),
    ],
)
def test_what_a_list_item_takes_with_it(text: str, expected: list[tuple[str, str]]) -> None:
    assert extract_elements(text) == expected


# --- headings ---


@pytest.mark.parametrize(
    "heading",
    [
        "# Method {#sec:method}",
        "# Method {#sec:method .unnumbered}",
        "# Method {.unnumbered}",
        "# Method {-}",
        "# Method {#sec:x key=value}",
        "## Method ##",
        "##\u00a0Method\u00a0",
        "### **Method**",
    ],
)
def test_heading_attributes_and_closing_hashes_are_syntax(heading: str) -> None:
    assert extract_elements(heading) == [("heading", "method")]


@pytest.mark.parametrize(
    ("heading", "text"),
    [("# C#", "c#"), ("# Sets {a, b}", "sets {a, b}"), ("# Why #1 matters", "why #1 matters")],
)
def test_heading_text_that_only_looks_like_syntax_stays(heading: str, text: str) -> None:
    assert extract_elements(heading) == [("heading", text)]


# --- blank pages ---


def test_blank_page_structure() -> None:
    empty = structure_score("", "")
    assert empty.metrics() == {
        "structure_precision": 1.0,
        "structure_recall": 1.0,
        "structure_f1": 1.0,
    }
    invented = structure_score("", "# A heading on a blank page")
    assert invented.overall.to_dict() == {"tp": 0, "fp": 1, "fn": 0}
    assert invented.overall.precision == 0.0 and invented.overall.f1 == 0.0
    missed = structure_score("# Title", "")
    assert missed.overall.to_dict() == {"tp": 0, "fp": 0, "fn": 1}
    assert missed.overall.recall == 0.0 and missed.overall.f1 == 0.0


# --- properties ---

_LINE = st.one_of(
    st.sampled_from(
        [
            "# A",
            "## B {#sec:b}",
            "- x",
            "-   long",
            "    wrapped",
            "  more",
            "1. z",
            "| p | q |",
            "|---|---| ",
            "```",
            "text",
            "",
            "\t\tdeep",
        ]
    ),
    st.text(alphabet=st.characters(exclude_characters="\r\n\v\f\u2028\u2029"), max_size=12),
)


@given(st.lists(_LINE, max_size=12), st.sampled_from(NEWLINES))
def test_line_ending_invariance(lines: list[str], newline: str) -> None:
    assert extract_elements(newline.join(lines)) == extract_elements("\n".join(lines))


@given(st.lists(_LINE, max_size=12))
def test_a_copy_scores_one_and_counts_add_up(lines: list[str]) -> None:
    text = "\n".join(lines)
    score = structure_score(text, text)
    assert score.overall.fp == score.overall.fn == 0
    assert score.overall.f1 == 1.0
    assert score.overall.tp == len(extract_elements(text))


@given(st.text(max_size=300))
def test_arbitrary_unicode_never_crashes(text: str) -> None:
    elements = extract_elements(text)
    assert elements == extract_elements(unify_line_endings(text))
    for value in structure_score(text, text[::-1]).metrics().values():
        assert 0.0 <= value <= 1.0
