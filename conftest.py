"""Repo-level conftest: shows how a user registers their own parser.

`plain-pdf-words` is a deliberately simple parser: the PDF's words, one line per text line
(PyMuPDF's word list, regrouped), with no table handling. Add it to a suite's `systems` to score
it beside the built-ins; its fingerprint names its own version, so editing the parser and bumping
that version re-parses instead of reusing cached outputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest_doceval
from pytest_doceval import SystemEnv


@pytest_doceval.register_parser("plain-pdf-words")
class PlainPdfWords:
    name = "plain-pdf-words"
    version = "1"

    def __init__(self, settings: Mapping[str, Any], env: SystemEnv) -> None:
        self.settings = dict(settings)  # [systems.plain-pdf-words]; env: unused here

    def fingerprint(self) -> dict[str, Any]:
        return {"system": self.name, "version": self.version, **self.settings}

    def parse(self, pdf: Path) -> str:
        from pytest_doceval.systems.pdf import open_pdf

        lines: list[str] = []
        with open_pdf(pdf) as doc:
            for page in doc:
                current: tuple[int, int] | None = None
                for *_, word, block, line, _ in page.get_text("words"):
                    if (block, line) != current:
                        lines.append(word)
                        current = (block, line)
                    else:
                        lines[-1] += " " + word
        return "\n".join(lines)


@pytest_doceval.register_parser("pymupdf-no-tables")
def pymupdf_no_tables(settings: Mapping[str, Any], env: SystemEnv) -> Any:
    """The built-in `pymupdf` with table detection off, under its own name, so one suite can
    score it beside `pymupdf` (``[systems.pymupdf-no-tables]`` takes pymupdf's settings)."""
    from pytest_doceval.systems.pymupdf_text import PyMuPDFText

    return PyMuPDFText({"tables": False, **settings}, env)
