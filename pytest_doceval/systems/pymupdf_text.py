"""`pymupdf`: the PDF's text layer (seed 000 section 3.2.1), tables merged in as markdown."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_doceval.systems.base import BuiltinParser
from pytest_doceval.systems.pdf import open_pdf

if TYPE_CHECKING:  # imported when parsing (see `systems.pdf`: it loads models at import)
    import pymupdf


class PyMuPDFText(BuiltinParser):
    """Plain text per page in the PDF's own block order, pages in order.

    Tables found by ``find_tables()`` replace the text blocks that lie inside them, as a
    markdown table at the position of their first block, so table text is neither lost nor
    counted twice.
    """

    name = "pymupdf"
    # Bump when this parser's own code changes its output: the fingerprint keys the cache.
    revision = 2
    # find_tables() costs about a third of a second a page: `tables = false` skips it.
    defaults: ClassVar[Mapping[str, Any]] = {"tables": True}
    packages = ("pymupdf",)

    def parse(self, pdf: Path) -> str:
        with open_pdf(pdf) as doc:
            return "\n\n".join(self._page_text(page) for page in doc).strip()

    def _page_text(self, page: pymupdf.Page) -> str:
        import pymupdf

        tables = page.find_tables().tables if self.settings["tables"] else []
        boxes = [pymupdf.Rect(t.bbox) for t in tables]
        emitted: set[int] = set()
        parts: list[str] = []
        for block in page.get_text("blocks", flags=text_flags()):
            x0, y0, x1, y1, text = block[:5]
            centre = pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)
            inside = next((i for i, box in enumerate(boxes) if centre in box), None)
            if inside is None:
                parts.append(text.strip())
            elif inside not in emitted:
                emitted.add(inside)
                parts.append(_table_markdown(tables[inside]))
        parts += [_table_markdown(t) for i, t in enumerate(tables) if i not in emitted]
        return "\n".join(part for part in parts if part)


def text_flags() -> int:
    """PyMuPDF's default text flags minus TEXT_PRESERVE_LIGATURES: "ﬁ" comes out as "fi"."""
    import pymupdf

    return int(pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP)


def _table_markdown(table: pymupdf.table.Table) -> str:
    """The table as markdown. When PyMuPDF takes the line above a table as its header
    (``header.external``), that line is already in the text as its own block and its other
    columns come out as invented names ("Col2"): the table's own first row is the header then,
    so no text is emitted twice and none is made up."""
    lines = table.to_markdown().strip().splitlines()
    if table.header.external and len(lines) > 2:
        lines = [lines[2], lines[1], *lines[3:]]
    return "\n".join(lines)
