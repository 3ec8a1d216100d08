"""A "scanned" document: every page rendered to pixels, a PDF of just those images, which only
an OCR engine can read."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pytest_doceval.atomic import write_bytes_atomic
from pytest_doceval.cli.build_case.common import CaseBuildError, require_file


def make_image_only_pdf(pdf: Path, out: Path, *, dpi: int = 150) -> Path:
    """Write `out`: every page of `pdf` rendered at `dpi` and placed as one image, no text.

    Each output page has the input page's size (rotation applied), so the scan and the original
    overlay exactly. `out` may be `pdf` itself (the input is read before anything is written).
    """
    pdf = require_file(Path(pdf), "PDF")
    out = Path(out)
    if not 30 <= dpi <= 1200:
        raise CaseBuildError(f"{pdf}: dpi must be between 30 and 1200, got {dpi}")
    try:
        src = pymupdf.open(pdf)
    except Exception as exc:
        raise CaseBuildError(f"{pdf}: not a readable PDF ({exc})") from exc
    with src, pymupdf.open() as scan:
        if src.needs_pass:
            raise CaseBuildError(f"{pdf}: the PDF is encrypted (password required)")
        if src.page_count == 0:
            raise CaseBuildError(f"{pdf}: the PDF has no pages")
        for page in src.pages():
            pix = page.get_pixmap(dpi=dpi, alpha=False)
            new = scan.new_page(width=page.rect.width, height=page.rect.height)
            new.insert_image(new.rect, stream=pix.tobytes("png"))
        data = scan.tobytes(garbage=3, deflate=True, no_new_id=True)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return write_bytes_atomic(out, data)
    except OSError as exc:
        raise CaseBuildError(f"{pdf}: cannot write {out}: {exc}") from exc
