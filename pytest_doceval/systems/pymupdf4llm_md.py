"""`pymupdf4llm`: markdown (headings, lists, tables) from PyMuPDF's own layout analysis.

The strongest structured baseline without a VLM: a two-stage VLM pipeline has to beat it.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pytest_doceval.systems.pdf import open_pdf


class PyMuPDF4LLM:
    name = "pymupdf4llm"
    revision = 1  # bump when this module's code changes the output (keys the cache)

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        if settings:
            raise ValueError(f"unknown pymupdf4llm settings: {', '.join(sorted(settings))}")

    def fingerprint(self) -> dict[str, Any]:
        return {
            "system": self.name,
            "revision": self.revision,
            "pymupdf4llm": version("pymupdf4llm"),
        }

    def parse(self, pdf: Path) -> str:
        import pymupdf4llm

        with open_pdf(pdf) as doc:
            return str(pymupdf4llm.to_markdown(doc, show_progress=False)).strip()
