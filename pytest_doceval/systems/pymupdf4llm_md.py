"""`pymupdf4llm`: markdown (headings, lists, tables) from PyMuPDF's own layout analysis.

The strongest structured baseline without a VLM: a two-stage VLM pipeline has to beat it.

OCR. pymupdf4llm's layout engine runs OCR on pages without a text layer unless told not to,
and prints while it does: a text-layer parser that quietly OCRs a scan measures another system.
Here it is a setting, ``ocr`` (off by default): ``[systems.pymupdf4llm] ocr = true`` turns it
on, and the fingerprint says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pytest_doceval.systems.base import BuiltinParser
from pytest_doceval.systems.pdf import open_pdf


class PyMuPDF4LLM(BuiltinParser):
    name = "pymupdf4llm"
    revision = 2  # 2: OCR of textless pages off unless asked for
    defaults: ClassVar[dict[str, Any]] = {"ocr": False}
    packages = ("pymupdf4llm",)

    def parse(self, pdf: Path) -> str:
        import pymupdf4llm

        options: dict[str, Any] = {"show_progress": False}
        if getattr(pymupdf4llm, "_use_layout", False):
            # Only the layout engine can OCR (and takes the option); the legacy one never does.
            options["use_ocr"] = bool(self.settings["ocr"])
        with open_pdf(pdf) as doc:
            return str(pymupdf4llm.to_markdown(doc, **options)).strip()
