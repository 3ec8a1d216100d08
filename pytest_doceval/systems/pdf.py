"""Opening PDFs with errors that name the file and the cause, and saying when MuPDF repaired one.

A damaged PDF (truncated, a broken cross-reference table) is often still opened: MuPDF rebuilds
what it can (``doc.is_repaired``) and logs why ("cannot find startxref ... repairing"). What it
rebuilds may be a blank page, which a parser turns into no text and a metric into CER 1.0: a
number nobody should take as a baseline. `repair_note` reports the repair so a suite can refuse
such a document or score it with a visible note.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_doceval.errors import CaseInputError

if TYPE_CHECKING:
    import pymupdf

# PyMuPDF is imported where a PDF is opened, never at import: with ``pymupdf_layout``
# installed, ``import pymupdf`` loads its layout models (about a second), which a run whose
# outputs and results are all stored never needs.


def _warnings() -> str:
    """MuPDF's warnings since the last call, on one line (they are global to the process)."""
    import pymupdf

    text = str(pymupdf.TOOLS.mupdf_warnings(reset=True) or "")
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _repair_words(warnings: str) -> str:
    return f"MuPDF had to repair it ({warnings or 'no reason logged'})"


def open_pdf(path: Path) -> pymupdf.Document:
    """Open `path`, refusing missing, corrupt, encrypted and zero-page documents clearly."""
    import pymupdf

    if not path.is_file():
        raise CaseInputError(f"{path}: file not found")
    _warnings()  # forget what earlier documents logged
    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # PyMuPDF raises several types for damaged files
        raise CaseInputError(f"{path}: not a readable PDF ({exc})") from exc
    if doc.needs_pass:
        doc.close()
        raise CaseInputError(f"{path}: the PDF is encrypted (password required)")
    if doc.page_count == 0:
        repaired = doc.is_repaired
        doc.close()
        why = f"; {_repair_words(_warnings())}" if repaired else ""
        raise CaseInputError(f"{path}: the PDF has no pages{why}")
    return doc


def repair_note(path: Path) -> str | None:
    """None for a sound PDF; for one MuPDF had to repair, what it logged, e.g.
    ``"MuPDF had to repair it (format error: cannot find startxref; ...)"``."""
    with open_pdf(path) as doc:
        repaired = doc.is_repaired
    warnings = _warnings()
    return _repair_words(warnings) if repaired else None
