from __future__ import annotations

import pytest

from pytest_doceval.scope import split_body_references


@pytest.mark.parametrize(
    "marker",
    [
        "References",
        "REFERENCES",
        "## References",
        "# 7 References",
        "7. References",
        "**References**",
        "Bibliography",
        "::: thebibliography",
        "::: {#refs .references .csl-bib-body}",
        "# References {#references .unnumbered}",
    ],
)
def test_split_recognises_reference_starts(marker: str) -> None:
    text = f"Body text.\nMore body.\n{marker}\n[1] A. Author. A paper. 2020."
    split = split_body_references(text)
    assert split.body == "Body text.\nMore body."
    assert split.references.startswith(marker.strip())


def test_no_references_keeps_everything() -> None:
    split = split_body_references("Body only.\nReferences are discussed in passing here.")
    assert not split.has_references
    assert split.body.endswith("passing here.")


def test_earliest_marker_wins() -> None:
    text = "Body\n::: thebibliography\nx\n:::\nAppendix\nReferences\n"
    assert split_body_references(text).body == "Body"
