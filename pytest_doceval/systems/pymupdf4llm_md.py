"""`pymupdf4llm`: markdown (headings, lists, tables) from PyMuPDF's own layout analysis.

The strongest structured baseline without a VLM: a two-stage VLM pipeline has to beat it.
"""

from __future__ import annotations

from pathlib import Path

from pytest_doceval.systems.base import BuiltinParser
from pytest_doceval.systems.pdf import open_pdf


class PyMuPDF4LLM(BuiltinParser):
    name = "pymupdf4llm"
    revision = 1
    packages = ("pymupdf4llm",)

    def parse(self, pdf: Path) -> str:
        import pymupdf4llm

        with open_pdf(pdf) as doc:
            return str(pymupdf4llm.to_markdown(doc, show_progress=False)).strip()
