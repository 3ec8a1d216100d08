"""Opening PDFs with errors that name the file and the cause."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pytest_doceval.errors import CaseInputError


def open_pdf(path: Path) -> pymupdf.Document:
    """Open `path`, refusing missing, corrupt, encrypted and zero-page documents clearly."""
    if not path.is_file():
        raise CaseInputError(f"{path}: file not found")
    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # PyMuPDF raises several types for damaged files
        raise CaseInputError(f"{path}: not a readable PDF ({exc})") from exc
    if doc.needs_pass:
        doc.close()
        raise CaseInputError(f"{path}: the PDF is encrypted (password required)")
    if doc.page_count == 0:
        doc.close()
        raise CaseInputError(f"{path}: the PDF has no pages")
    return doc
