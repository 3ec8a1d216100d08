"""Build evaluation cases (``document.pdf`` + ``truth.md``) from a user's sources.

Three ways in, one shape out (a case folder that a ``documents`` suite reads):

* :func:`build_case_from_latex` -- seed 002's pipeline: the same ``.tex`` goes through
  ``pdflatex`` (the PDF a parser reads) and through ``pandoc`` (the markdown truth). The two
  paths do not see the same content (pandoc drops ``\\title``/``\\author`` and macros it does not
  know, keeps ``[@key]`` citations, ``$...$`` maths, footnote definitions and a
  ``::: thebibliography`` div); that asymmetry is what the fair normalisation is for.
* :func:`build_case_from_markdown` -- PyMuPDF lays out markdown (a small subset, converted to
  HTML here) on A4 pages with :class:`pymupdf.Story`. Its built-in CJK fallback font covers
  Hangul, so Korean documents need no TeX. The truth is the markdown itself.
* :func:`make_image_only_pdf` -- renders every page to pixels and writes a PDF of just those
  images: a "scanned" document that only an OCR engine can read.

Every file is written atomically (a temporary file in the same folder, then ``os.replace``), so a
failed or interrupted build leaves the old case as it was. Every failure is a
:class:`CaseBuildError` whose message names the input file and the cause.

Command line: ``doceval build-case SOURCE OUT_DIR [--image-only]`` (see `pytest_doceval.cli`),
e.g. ``doceval build-case cases/papers/tidal-storage/source.tex cases/papers/tidal-storage``.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import io
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from pytest_doceval.atomic import write_bytes_atomic, write_text_atomic
from pytest_doceval.errors import DocevalError

__all__ = [
    "BuiltCase",
    "CaseBuildError",
    "build_case_from_latex",
    "build_case_from_markdown",
    "make_image_only_pdf",
    "markdown_to_html",
]

PDF_NAME = "document.pdf"
TRUTH_NAME = "truth.md"
SOURCE_NAME = "source.tex"

#: pandoc's markdown with every table form but pipe tables switched off, so a table row is a
#: ``| a | b |`` line (a table pipe tables cannot express still comes out as HTML), and without
#: `smart`, so dashes and quotes are the characters the PDF shows (``–``, ``’``), not ``--``.
PANDOC_MARKDOWN = "markdown-smart-simple_tables-multiline_tables-grid_tables"

#: A pandoc Lua filter: pipe tables cannot hold a merged cell (``\multicolumn``, ``\multirow``)
#: and pandoc 2.x's markdown writer then flattens the spans into empty cells, so a table with a
#: span is written as an HTML ``<table>`` (with ``colspan``/``rowspan``) instead, as a raw
#: markdown block (no ``{=html}`` fence). Tables without spans stay pipe tables.
SPAN_TABLES_FILTER = """
local function has_span(rows)
  for _, row in ipairs(rows) do
    for _, cell in ipairs(row.cells) do
      if cell.row_span > 1 or cell.col_span > 1 then return true end
    end
  end
  return false
end

function Table(tbl)
  local spans = has_span(tbl.head.rows) or has_span(tbl.foot.rows)
  for _, body in ipairs(tbl.bodies) do
    spans = spans or has_span(body.head) or has_span(body.body)
  end
  if spans then
    local html = pandoc.write(pandoc.Pandoc({tbl}), "html")
    return pandoc.RawBlock("markdown", html)
  end
end
"""

#: The truth starts with what ``\maketitle`` prints: pandoc reads title, authors and date into
#: metadata and, without a template, drops them; the PDF shows them. A truth without them would
#: charge every parser for text that is really there.
PANDOC_TEMPLATE = """$if(title)$
# $title$

$endif$
$for(author)$
$author$

$endfor$
$if(date)$
$date$

$endif$
$body$
"""

#: PDF dates come from here unless the caller's environment sets SOURCE_DATE_EPOCH: rebuilding
#: an unchanged source then gives the same PDF bytes (the cache keys on them).
_DEFAULT_SOURCE_DATE_EPOCH = "1704067200"  # 2024-01-01T00:00:00Z

_INSTALL_HINTS = {
    "pdflatex": "apt-get install texlive-latex-base",
    "bibtex": "apt-get install texlive-binaries",
    "pandoc": "apt-get install pandoc",
}

_LOG_TAIL_LINES = 20


class CaseBuildError(DocevalError):
    """A case could not be built; the message names the input file and the cause."""


@dataclass(frozen=True)
class BuiltCase:
    """A case folder as written: the folder, its PDF, its truth and the PDF's page count."""

    directory: Path
    pdf: Path
    truth: Path
    pages: int


# --------------------------------------------------------------------------- helpers


def _require_file(path: Path, what: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise CaseBuildError(f"{path}: {what} not found")
    if not path.is_file():
        raise CaseBuildError(f"{path}: {what} is not a file")
    return path


def _require_tool(name: str, source: Path) -> str:
    found = shutil.which(name)
    if found is None:
        raise CaseBuildError(f"{source}: {name} not found: {_INSTALL_HINTS[name]}")
    return found


def _prepare_out_dir(out_dir: Path, source: Path) -> Path:
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CaseBuildError(f"{source}: cannot create case folder {out_dir}: {exc}") from exc
    return out_dir


def _page_count(data: bytes, source: Path) -> int:
    try:
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            return doc.page_count
    except Exception as exc:  # PyMuPDF raises several types for damaged files
        raise CaseBuildError(f"{source}: the PDF produced is not readable ({exc})") from exc


def _run(
    cmd: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    deadline: float,
    source: Path,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `cmd` without a terminal, killing its whole process group when `deadline` passes.

    pdflatex may start helpers (mktexpk, METAFONT) that a plain ``subprocess.run`` timeout would
    leave running; a new session lets us end them all.
    """
    tool = Path(cmd[0]).name
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise CaseBuildError(f"{source}: timed out before {tool} could run")
    try:
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        hint = _INSTALL_HINTS.get(tool, "install it")
        raise CaseBuildError(f"{source}: {tool} not found: {hint}") from exc
    try:
        out, err = proc.communicate(input=stdin, timeout=remaining)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise CaseBuildError(
            f"{source}: {tool} timed out (build budget exhausted after {remaining:.0f} s)"
        ) from None
    return subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)


def _latex_error_excerpt(log: str) -> str:
    """The first LaTeX error (its ``!`` line through the ``l.N`` context) or the log's tail.

    TeX prints the offending source line in two parts: ``l.4 \\frobnicate`` and, below it,
    the rest of the line, so the line after ``l.N`` is kept too. Without a ``!`` line (e.g. a
    crash before the log was complete) the last lines of the log are shown instead, minus
    TeX's memory statistics.
    """
    lines = [line.rstrip() for line in log.splitlines()]
    for i, line in enumerate(lines):
        if not line.startswith("!"):
            continue
        block = [line]
        for j in range(i + 1, min(i + 16, len(lines))):
            block.append(lines[j])
            if re.match(r"l\.\d+", lines[j]):
                if j + 1 < len(lines) and lines[j + 1].strip():
                    block.append(lines[j + 1])
                break
        return "\n".join(part for part in block if part.strip())
    stats = next(
        (k for k, line in enumerate(lines) if line.startswith("Here is how much of TeX")), None
    )
    kept = lines[:stats] if stats is not None else lines
    tail = [line for line in kept if line.strip()][-_LOG_TAIL_LINES:]
    return "log tail:\n" + "\n".join(tail) if tail else "(no log output)"


_TRAILER_ID = re.compile(rb"/ID \[\s*<([0-9A-Fa-f]{32})>\s*<([0-9A-Fa-f]{32})>\s*\]")


def _stable_trailer_id(pdf: bytes) -> bytes:
    """Replace pdfTeX's trailer /ID (a hash of the time and the temporary output path) by a hash
    of the content, so an unchanged source rebuilds to the same bytes.

    The new ID has the same length, so no byte offset in the file moves. A PDF without exactly
    one such ID is returned unchanged.
    """
    matches = list(_TRAILER_ID.finditer(pdf))
    if len(matches) != 1:
        return pdf
    match = matches[0]
    start, end = match.span()
    blank = pdf[:start] + b"/ID" + pdf[end:]
    digest = hashlib.md5(blank, usedforsecurity=False).hexdigest().upper().encode("ascii")
    new = b"/ID [<" + digest + b"> <" + digest + b">]"
    new = new + b" " * (end - start - len(new))  # keep the length exactly
    return pdf[:start] + new + pdf[end:]


def _uses_bibtex(tex_text: str) -> bool:
    """True when the source (comments stripped) calls ``\\bibliography{...}``."""
    uncommented = re.sub(r"(?<!\\)%.*", "", tex_text)
    return re.search(r"\\bibliography\s*\{", uncommented) is not None


def _drop_bibliography_width(truth: str, tex_text: str) -> str:
    """pandoc prints ``\\begin{thebibliography}{9}``'s width argument as text ("9 R. Harwick
    ..."); LaTeX uses it only to size the labels. Drop it so the truth holds what the PDF shows."""
    match = re.search(r"\\begin\{thebibliography\}\{([^}]*)\}", tex_text)
    if not match or not match.group(1).strip():
        return truth
    label = re.escape(match.group(1).strip())
    return re.sub(rf"^(:::+ *thebibliography *\n){label} ", r"\1", truth, count=1, flags=re.M)


def _decode_source(data: bytes) -> str:
    """UTF-8 (BOM tolerated); Latin-1 for legacy sources that are not valid UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _latex_env(src_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("SOURCE_DATE_EPOCH", _DEFAULT_SOURCE_DATE_EPOCH)
    # The trailing separator keeps kpathsea's default search path after the source folder.
    for var in ("TEXINPUTS", "BIBINPUTS", "BSTINPUTS"):
        env[var] = f"{src_dir}{os.pathsep}{env.get(var, '')}"
    return env


# --------------------------------------------------------------------------- LaTeX


def build_case_from_latex(
    tex: Path, out_dir: Path, *, keep_source: bool = True, timeout: float = 120
) -> BuiltCase:
    """Build a case from a LaTeX source: ``pdflatex`` for the PDF, ``pandoc`` for the truth.

    pdflatex runs in a temporary output folder (``-interaction=nonstopmode -halt-on-error``,
    job name ``document``) with the source's folder as working directory, so ``\\input``,
    ``\\includegraphics`` and ``.bib`` files next to the source are found. It runs twice so
    cross-references and ``[1]`` citations resolve; when the source uses ``\\bibliography{...}``
    and ``bibtex`` is installed, bibtex runs in between (and pdflatex a third time). A
    ``thebibliography`` environment needs nothing extra.

    The truth is ``pandoc -f latex -t markdown-smart-simple_tables-multiline_tables-grid_tables
    --wrap=none``: tables become ``| a | b |`` pipe-table lines (a table with merged cells an
    HTML ``<table>``: `SPAN_TABLES_FILTER`), each paragraph one line, dashes
    and quotes real characters; a template puts the title (as a ``#`` heading), the authors and
    the date first, as ``\\maketitle`` prints them.

    Writes ``out_dir/document.pdf``, ``out_dir/truth.md`` and, with `keep_source`,
    ``out_dir/source.tex`` (each atomically). `timeout` (seconds) bounds the whole build.

    Raises:
        CaseBuildError: missing input or tool, a compile error (with the LaTeX error and the
            log's tail), a pandoc error (with its stderr), or the timeout.
    """
    tex = _require_file(Path(tex), "LaTeX source").resolve()
    deadline = time.monotonic() + timeout
    pdflatex = _require_tool("pdflatex", tex)
    pandoc = _require_tool("pandoc", tex)
    raw = tex.read_bytes()
    text = _decode_source(raw)
    env = _latex_env(tex.parent)

    with tempfile.TemporaryDirectory(prefix="doceval-latex-") as tmp_name:
        tmp = Path(tmp_name)
        latex_cmd = [
            pdflatex,
            "-interaction=nonstopmode",
            "-halt-on-error",
            "-no-file-line-error",
            f"-output-directory={tmp}",
            "-jobname=document",
            tex.name,
        ]
        bibtex = shutil.which("bibtex")
        if bibtex and _uses_bibtex(text):
            _pdflatex(latex_cmd, tex, tmp, env, deadline)
            bib = _run(
                [bibtex, "document"],
                cwd=tmp,
                env=env,
                deadline=deadline,
                source=tex,
            )
            if bib.returncode >= 2:  # 1 = warnings (e.g. a missing field): not fatal
                blg = tmp / "document.blg"
                detail = blg.read_text("utf-8", "replace") if blg.exists() else ""
                detail = detail or bib.stdout.decode("utf-8", "replace")
                tail = "\n".join(detail.strip().splitlines()[-_LOG_TAIL_LINES:])
                raise CaseBuildError(f"{tex}: bibtex failed (exit {bib.returncode}):\n{tail}")
        for _ in range(2):
            _pdflatex(latex_cmd, tex, tmp, env, deadline)
        pdf_bytes = _stable_trailer_id((tmp / "document.pdf").read_bytes())

    with tempfile.TemporaryDirectory(prefix="doceval-pandoc-") as tmp_name:
        template = Path(tmp_name) / "truth.md.template"
        template.write_text(PANDOC_TEMPLATE, encoding="utf-8")
        spans_filter = Path(tmp_name) / "span_tables.lua"
        spans_filter.write_text(SPAN_TABLES_FILTER, encoding="utf-8")
        conv = _run(
            [
                pandoc,
                "-f",
                "latex",
                "-t",
                PANDOC_MARKDOWN,
                "--wrap=none",
                "-s",
                f"--template={template}",
                f"--lua-filter={spans_filter}",
            ],
            cwd=tex.parent,
            env=env,
            deadline=deadline,
            source=tex,
            stdin=text.encode("utf-8"),
        )
    if conv.returncode != 0:
        err = conv.stderr.decode("utf-8", "replace").strip() or "(no stderr)"
        raise CaseBuildError(f"{tex}: pandoc failed (exit {conv.returncode}):\n{err}")
    truth_text = _drop_bibliography_width(conv.stdout.decode("utf-8", "replace"), text)
    if not truth_text.endswith("\n"):
        truth_text += "\n"

    pages = _page_count(pdf_bytes, tex)
    out_dir = _prepare_out_dir(out_dir, tex)
    pdf_path = write_bytes_atomic(out_dir / PDF_NAME, pdf_bytes)
    truth_path = write_text_atomic(out_dir / TRUTH_NAME, truth_text)
    if keep_source:
        write_bytes_atomic(out_dir / SOURCE_NAME, raw)
    return BuiltCase(directory=out_dir, pdf=pdf_path, truth=truth_path, pages=pages)


def _pdflatex(cmd: list[str], tex: Path, tmp: Path, env: dict[str, str], deadline: float) -> None:
    """One pdflatex pass; a failure raises with the LaTeX error and the log's tail."""
    run = _run(cmd, cwd=tex.parent, env=env, deadline=deadline, source=tex)
    pdf = tmp / "document.pdf"
    if run.returncode == 0 and pdf.exists():
        return
    log_path = tmp / "document.log"
    log = (
        log_path.read_text("utf-8", "replace")
        if log_path.exists()
        else run.stdout.decode("utf-8", "replace") + run.stderr.decode("utf-8", "replace")
    )
    cause = f"exit {run.returncode}" if run.returncode else "no PDF written"
    raise CaseBuildError(f"{tex}: pdflatex failed ({cause}):\n{_latex_error_excerpt(log)}")


# --------------------------------------------------------------------------- markdown


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
    markdown: str, out_dir: Path, *, title: str | None = None
) -> BuiltCase:
    """Lay out `markdown` on A4 pages with PyMuPDF and write it as a case.

    The markdown subset of :func:`markdown_to_html` becomes HTML that :class:`pymupdf.Story`
    places page after page (2 cm margins, sans-serif 11 pt). Characters the base font lacks
    (Hangul, CJK) come from PyMuPDF's built-in fallback font, so the text layer holds them.
    ``truth.md`` is `markdown` exactly as given. `title`, when given, is the PDF's metadata
    title only (it is not printed, so the page and the truth keep the same content).
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
    out_dir = _prepare_out_dir(out_dir, label)
    pdf_path = write_bytes_atomic(out_dir / PDF_NAME, pdf_bytes)
    truth_path = write_text_atomic(out_dir / TRUTH_NAME, markdown)
    return BuiltCase(directory=out_dir, pdf=pdf_path, truth=truth_path, pages=page_count)


# --------------------------------------------------------------------------- image-only


def make_image_only_pdf(pdf: Path, out: Path, *, dpi: int = 150) -> Path:
    """Write `out`: every page of `pdf` rendered at `dpi` and placed as one image, no text.

    Each output page has the input page's size (rotation applied), so the scan and the original
    overlay exactly. `out` may be `pdf` itself (the input is read before anything is written).
    """
    pdf = _require_file(Path(pdf), "PDF")
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
