"""`rapidocr`: pages rendered to pixels and read by RapidOCR (seed 000 section 3.2.2).

RapidOCR 3.x on onnxruntime; its PP-OCR models ship inside the wheel, so it runs offline. It
reads Latin scripts, Chinese and Japanese -- not Korean.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pytest_doceval.systems.pdf import open_pdf


@functools.cache
def _engine() -> Any:
    # Building the engine loads three ONNX models: once per process.
    from rapidocr import RapidOCR

    return RapidOCR()


class RapidOCRParser:
    """OCR of every page rendered at ``dpi`` (default 300); lines joined in reading order."""

    name = "rapidocr"
    revision = 1  # bump when this module's code changes the output (keys the cache)

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        settings = dict(settings or {})
        self.dpi = int(settings.pop("dpi", 300))
        if settings:
            raise ValueError(f"unknown rapidocr settings: {', '.join(sorted(settings))}")
        if not 50 <= self.dpi <= 1200:
            raise ValueError(f"rapidocr dpi must be between 50 and 1200, got {self.dpi}")

    def fingerprint(self) -> dict[str, Any]:
        return {
            "system": self.name,
            "revision": self.revision,
            "rapidocr": version("rapidocr"),
            "onnxruntime": version("onnxruntime"),
            "dpi": self.dpi,
        }

    def parse(self, pdf: Path) -> str:
        pages: list[str] = []
        with open_pdf(pdf) as doc:
            for page in doc:
                png = page.get_pixmap(dpi=self.dpi).tobytes("png")
                result = _engine()(png)
                pages.append("\n".join(result.txts or ()))
        return "\n\n".join(pages).strip()
