"""A case from markdown: PyMuPDF lays out a small markdown subset (converted to HTML here) on A4
pages with `pymupdf.Story`. Its built-in CJK fallback font covers Hangul, so Korean documents
need no TeX. The truth is the markdown itself."""

from __future__ import annotations

import html
import io
import re
from pathlib import Path

import pymupdf

from pytest_doceval.atomic import write_bytes_atomic, write_text_atomic
from pytest_doceval.cli.build_case.common import (
    MARKDOWN_SOURCE_NAME,
    PDF_NAME,
    TRUTH_NAME,
    BuiltCase,
    CaseBuildError,
    prepare_out_dir,
)

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s{0,3}(\d{1,9})[.)]\s+(.*)$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_CODE = re.compile(r"`([^`]+)`")

_CSS = """
body { font-family: sans-serif; font-size: 11pt; line-height: 1.35; }
h1 { font-size: 18pt; margin: 0 0 8pt 0; }
h2 { font-size: 14pt; margin: 12pt 0 6pt 0; }
h3, h4, h5, h6 { font-size: 12pt; margin: 10pt 0 4pt 0; }
p { margin: 0 0 6pt 0; }
ul, ol { margin: 0 0 6pt 0; }
table { border-collapse: collapse; margin: 4pt 0 8pt 0; }
th, td { border: 0.5pt solid #444; padding: 2pt 6pt; }
pre { font-family: monospace; font-size: 9.5pt; }
"""


def _inline(text: str) -> str:
    """Escape `text` for HTML, then apply ``**bold**`` and ```code``` spans."""
    out = html.escape(text, quote=False)
    out = _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", out)
    return _BOLD.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", out)


def _table_cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [cell.strip().replace("\\|", "|") for cell in cells]


def _is_table_start(lines: list[str], i: int) -> bool:
    return (
        "|" in lines[i]
        and i + 1 < len(lines)
        and "-" in lines[i + 1]
        and _TABLE_SEP.match(lines[i + 1]) is not None
    )


def _starts_block(lines: list[str], i: int) -> bool:
    line = lines[i]
    return bool(
        _HEADING.match(line)
        or _BULLET.match(line)
        or _NUMBERED.match(line)
        or _FENCE.match(line)
        or _is_table_start(lines, i)
    )


def markdown_to_html(markdown: str) -> str:
    """Convert the markdown subset cases use into HTML for :class:`pymupdf.Story`.

    Handles ATX headings (``#`` .. ``######``), paragraphs (consecutive lines joined), ``-``/``*``
    and ``1.`` lists (flat; items may be separated by blank lines), pipe tables with a ``---``
    separator row (alignment from the colons), fenced code blocks, ``**bold**`` and
    ```code```. Everything else is text, HTML-escaped.
    """
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if fence := _FENCE.match(line):
            marker = fence.group(1)
            body: list[str] = []
            i += 1
            while i < n and not lines[i].lstrip().startswith(marker):
                body.append(lines[i])
                i += 1
            i += 1  # the closing fence (or the end)
            out.append(f"<pre>{html.escape(chr(10).join(body), quote=False)}</pre>")
            continue
        if heading := _HEADING.match(line):
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
            i += 1
            continue
        if _is_table_start(lines, i):
            header = _table_cells(line)
            aligns = []
            for spec in _table_cells(lines[i + 1]):
                left, right = spec.startswith(":"), spec.endswith(":")
                aligns.append("center" if left and right else "right" if right else "left")
            i += 2
            rows: list[list[str]] = []
            while i < n and lines[i].strip() and "|" in lines[i]:
                rows.append(_table_cells(lines[i]))
                i += 1
            out.append(_table_html(header, rows, aligns))
            continue
        if _BULLET.match(line) or _NUMBERED.match(line):
            ordered = _NUMBERED.match(line) is not None
            i, list_html = _list_html(lines, i, ordered)
            out.append(list_html)
            continue
        para = [line.strip()]
        i += 1
        while i < n and lines[i].strip() and not _starts_block(lines, i):
            para.append(lines[i].strip())
            i += 1
        out.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(out)


def _table_html(header: list[str], rows: list[list[str]], aligns: list[str]) -> str:
    width = len(header)

    def cells(values: list[str], tag: str) -> str:
        values = (values + [""] * width)[:width]
        return "".join(
            f'<{tag} style="text-align: {aligns[k] if k < len(aligns) else "left"}">'
            f"{_inline(value)}</{tag}>"
            for k, value in enumerate(values)
        )

    body = "".join(f"<tr>{cells(row, 'td')}</tr>" for row in rows)
    return f"<table><tr>{cells(header, 'th')}</tr>{body}</table>"


def _list_html(lines: list[str], i: int, ordered: bool) -> tuple[int, str]:
    """Collect one flat list starting at line `i`; return the next line index and its HTML."""
    pattern = _NUMBERED if ordered else _BULLET
    items: list[list[str]] = []
    start = None
    n = len(lines)
    while i < n:
        line = lines[i]
        match = pattern.match(line)
        if match:
            if ordered and start is None:
                start = int(match.group(1))
            items.append([match.group(2 if ordered else 1).strip()])
            i += 1
            continue
        if not line.strip():
            # A blank line ends the list unless the next non-blank line is another item.
            j = i
            while j < n and not lines[j].strip():
                j += 1
            if j < n and pattern.match(lines[j]):
                i = j
                continue
            break
        if line[:1].isspace() or not _starts_block(lines, i):
            items[-1].append(line.strip())  # continuation of the current item
            i += 1
            continue
        break
    tag = "ol" if ordered else "ul"
    attr = f' start="{start}"' if ordered and start not in (None, 1) else ""
    body = "".join(f"<li>{_inline(' '.join(parts))}</li>" for parts in items)
    return i, f"<{tag}{attr}>{body}</{tag}>"


def build_case_from_markdown(
    markdown: str, out_dir: Path, *, title: str | None = None, keep_source: bool = True
) -> BuiltCase:
    """Lay out `markdown` on A4 pages with PyMuPDF and write it as a case.

    The markdown subset of :func:`markdown_to_html` becomes HTML that :class:`pymupdf.Story`
    places page after page (2 cm margins, sans-serif 11 pt). Characters the base font lacks
    (Hangul, CJK) come from PyMuPDF's built-in fallback font, so the text layer holds them.
    ``truth.md`` is `markdown` exactly as given. `title`, when given, is the PDF's metadata
    title only (it is not printed, so the page and the truth keep the same content). With
    `keep_source`, ``source.md`` keeps the markdown the PDF was laid out from, as a case built
    from LaTeX keeps ``source.tex``: ``truth.md`` may be corrected later, and the case can
    still be rebuilt from what made its PDF.
    """
    out_dir = Path(out_dir)
    label = out_dir / TRUTH_NAME
    if not markdown.strip():
        raise CaseBuildError(f"{label}: the markdown is empty")
    page_rect = pymupdf.paper_rect("a4")
    margin = 72 / 2.54 * 2  # 2 cm
    where = pymupdf.Rect(margin, margin, page_rect.width - margin, page_rect.height - margin)
    sink = io.BytesIO()
    try:
        story = pymupdf.Story(html=markdown_to_html(markdown), user_css=_CSS)
        writer = pymupdf.DocumentWriter(sink)
        more, pages = True, 0
        while more:
            pages += 1
            if pages > 5000:
                raise CaseBuildError(f"{label}: the layout does not terminate (over 5000 pages)")
            device = writer.begin_page(page_rect)
            more, _filled = story.place(where)
            story.draw(device)
            writer.end_page()
        writer.close()
    except CaseBuildError:
        raise
    except Exception as exc:
        raise CaseBuildError(f"{label}: PyMuPDF could not lay out the markdown ({exc})") from exc

    with pymupdf.open(stream=sink.getvalue(), filetype="pdf") as doc:
        if title:
            doc.set_metadata({"title": title})
        pdf_bytes = doc.tobytes(garbage=3, deflate=True, no_new_id=True)
        page_count = doc.page_count
    out_dir = prepare_out_dir(out_dir, label)
    pdf_path = write_bytes_atomic(out_dir / PDF_NAME, pdf_bytes)
    truth_path = write_text_atomic(out_dir / TRUTH_NAME, markdown)
    if keep_source:
        write_text_atomic(out_dir / MARKDOWN_SOURCE_NAME, markdown)
    return BuiltCase(directory=out_dir, pdf=pdf_path, truth=truth_path, pages=page_count)
