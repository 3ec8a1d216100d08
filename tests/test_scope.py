"""The References split (seed 002 sections 4.3 and 8): what starts a references section, what
does not, and that line endings never change the split."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_doceval.kinds.documents.scope import split_body_references
from pytest_doceval.text.normalise import unify_line_endings

BODY = "Body text.\nMore body."
ENTRY = "[1] A. Author. A paper. 2020."


@pytest.mark.parametrize(
    "marker",
    [
        # The seed's regex: the three spellings, up to three '#', spaces around.
        "References",
        "REFERENCES",
        "Bibliography",
        "## References",
        "###References",
        "  References  ",
        "# Bibliography\t",
        # Markdown renderings of the same heading line: pymupdf4llm's bold, pandoc's attributes.
        "## **References** ",
        "**References**",
        "__Bibliography__",
        "# References {#references .unnumbered}",
        "# References {-}",
        # Unicode spaces around the heading (a no-break space is still a space).
        "##\u00a0References\u00a0",
        "\u2003References",
        # pandoc's bibliography divs.
        "::: thebibliography",
        "::::: thebibliography :::::",
        "::: {.thebibliography}",
        "::: {#refs .references .csl-bib-body}",
        "::: {#refs}",
        "::: {.references #refs .hanging-indent}",
    ],
)
def test_split_recognises_reference_starts(marker: str) -> None:
    split = split_body_references(f"{BODY}\n{marker}\n{ENTRY}")
    assert split.body == BODY
    assert split.references.startswith(marker)
    assert split.has_references


@pytest.mark.parametrize(
    "line",
    [
        # Case: the seed's spellings are case-sensitive; a wrapped line can read so.
        "references",
        "bibliography",
        "BIBLIOGRAPHY",
        "ReFeReNcEs",
        # Other words and phrases the seed does not name.
        "Related literature",
        "Literature",
        "Works Cited",
        "Reference",
        "References and notes",
        "Further references",
        # Section numbers, four or more '#', unbalanced bold, other attributes.
        "7 References",
        "7. References",
        "# 7 References",
        "#### References",
        "**References",
        "**References__",
        "References {not attributes}",
        # The word inside running text or a list item.
        "see the References below",
        "References are discussed in passing here.",
        "- References",
        "> References",
        "| References |",
        # Divs that are not bibliographies.
        "::: {#refsx}",
        "::: {#tab:refs}",
        "::: {.references-note}",
        "::: note thebibliography",
        "text ::: thebibliography",
    ],
)
def test_split_ignores_other_lines(line: str) -> None:
    text = f"{BODY}\n{line}\nStill body."
    split = split_body_references(text)
    assert not split.has_references
    assert split.body == text


def test_no_references_keeps_everything() -> None:
    split = split_body_references("Body only.\nReferences are discussed in passing here.")
    assert not split.has_references
    assert split.body.endswith("passing here.")


def test_earliest_marker_wins() -> None:
    text = "Body\n::: thebibliography\nx\n:::\nAppendix\nReferences\n"
    assert split_body_references(text).body == "Body"


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\u2028", "\u2029", "\f"])
def test_split_is_the_same_for_every_line_ending(newline: str) -> None:
    # The review's case: with CRLF the heading's `$` never matched and Body CER kept the refs.
    lf = "Intro\n\n## References\n[1] Entry.\n"
    split = split_body_references(lf.replace("\n", newline))
    assert split == split_body_references(lf)
    assert split.body == "Intro" and split.references == "## References\n[1] Entry.\n"


# --- properties ---

_NO_BREAKS = st.text(alphabet=st.characters(exclude_characters="\r\n\v\f\u2028\u2029"), max_size=30)
_LINES = st.lists(
    st.one_of(
        _NO_BREAKS,
        st.sampled_from(["References", "## **References**", "::: {#refs}", "references", ""]),
    ),
    max_size=8,
)


@given(_LINES, st.sampled_from(["\r\n", "\r", "\u2028", "\u2029", "\v", "\f"]))
def test_line_ending_invariance(lines: list[str], newline: str) -> None:
    lf = "\n".join(lines)
    assert split_body_references(newline.join(lines)) == split_body_references(lf)


@given(_LINES)
def test_split_parts_rebuild_the_text_and_the_body_splits_no_further(lines: list[str]) -> None:
    text = "\n".join(lines)
    split = split_body_references(text)
    if split.has_references:
        assert text.startswith(split.body)
        assert text.endswith(split.references)
        assert text[len(split.body) : len(text) - len(split.references)].strip() == ""
    else:
        assert split.body == text
    # Idempotence: a body holds no references marker, so splitting it again changes nothing.
    again = split_body_references(split.body)
    assert again.body == split.body and not again.has_references


@given(st.text(max_size=200))
def test_arbitrary_unicode_never_crashes(text: str) -> None:
    split = split_body_references(text)
    unified = unify_line_endings(text)
    assert unified.startswith(split.body)
    assert re.fullmatch(r"\s*", unified[len(split.body) : len(unified) - len(split.references)])
