"""`rapidocr`: pages rendered to pixels and read by RapidOCR (seed 000 section 3.2.2).

RapidOCR 3.x on onnxruntime; its PP-OCR models ship inside the wheel, so it runs offline. It
reads Latin scripts, Chinese and Japanese -- not Korean. `ocr_image` reads one image (exam
tracks OCR question images with it).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pytest_doceval.systems.base import BuiltinParser
from pytest_doceval.systems.pdf import open_pdf


@functools.cache
def _engine() -> Any:
    # Building the engine loads three ONNX models: once per process.
    from rapidocr import RapidOCR

    return RapidOCR()


def ocr_image(image: bytes) -> str:
    """The text lines RapidOCR reads in an encoded image (PNG, JPEG), in reading order."""
    result = _engine()(image)
    return "\n".join(result.txts or ())


class RapidOCRParser(BuiltinParser):
    """OCR of every page rendered at ``dpi`` (default 300); lines joined in reading order."""

    name = "rapidocr"
    revision = 1
    defaults: ClassVar[Mapping[str, Any]] = {"dpi": 300}
    packages = ("rapidocr", "onnxruntime")
    # What its bundled models read (`systems.sources.cannot_read`): no Hangul.
    languages: ClassVar[frozenset[str]] = frozenset({"en", "zh", "ja"})
    reads = "Latin scripts, Chinese and Japanese"

    def check(self) -> None:
        if not 50 <= self.settings["dpi"] <= 1200:
            raise ValueError(
                f"rapidocr dpi must be between 50 and 1200, got {self.settings['dpi']}"
            )

    def parse(self, pdf: Path) -> str:
        with open_pdf(pdf) as doc:
            pages = [
                ocr_image(page.get_pixmap(dpi=self.settings["dpi"]).tobytes("png")) for page in doc
            ]
        return "\n\n".join(pages).strip()

    def parse_image(self, image: Path) -> str:
        """A page image read as it is (``dpi`` applies to rendered PDF pages only)."""
        return ocr_image(image.read_bytes()).strip()

    def read_image(self, image: bytes) -> str:
        """The text of an image's bytes, as the OCR gives it (an exam question's image)."""
        return ocr_image(image)
