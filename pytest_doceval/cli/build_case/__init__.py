"""Build evaluation cases (``document.pdf`` + ``truth.md``) from a user's sources.

Three ways in, one shape out (a case folder that a ``documents`` suite reads):

* :func:`build_case_from_latex` (`latex`) -- seed 002's pipeline: the same ``.tex`` goes
  through ``pdflatex`` (the PDF a parser reads) and through ``pandoc`` (the markdown truth).
* :func:`build_case_from_markdown` (`markdown`) -- PyMuPDF lays out markdown (a small subset,
  converted to HTML) on A4 pages with :class:`pymupdf.Story`. Its built-in CJK fallback font
  covers Hangul, so Korean documents need no TeX. The truth is the markdown itself.
* :func:`make_image_only_pdf` (`scan`) -- renders every page to pixels and writes a PDF of just
  those images: a "scanned" document that only an OCR engine can read.

Every file is written atomically (a temporary file in the same folder, then ``os.replace``), so a
failed or interrupted build leaves the old case as it was. Every failure is a
:class:`CaseBuildError` whose message names the input file and the cause.

Command line: ``doceval build-case SOURCE OUT_DIR [--image-only]`` (see `pytest_doceval.cli`),
e.g. ``doceval build-case cases/papers/tidal-storage/source.tex cases/papers/tidal-storage``.
"""

from pytest_doceval.cli.build_case.common import BuiltCase, CaseBuildError
from pytest_doceval.cli.build_case.latex import build_case_from_latex
from pytest_doceval.cli.build_case.markdown import build_case_from_markdown, markdown_to_html
from pytest_doceval.cli.build_case.scan import make_image_only_pdf

__all__ = [
    "BuiltCase",
    "CaseBuildError",
    "build_case_from_latex",
    "build_case_from_markdown",
    "make_image_only_pdf",
    "markdown_to_html",
]
