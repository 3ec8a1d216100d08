"""Seed 002's pipeline: one ``.tex`` through ``pdflatex`` (the PDF a parser reads) and through
``pandoc`` (the markdown truth).

The two paths do not see the same content (pandoc drops ``\\title``/``\\author`` and macros it
does not know, keeps ``[@key]`` citations, ``$...$`` maths, footnote definitions and a
``::: thebibliography`` div); that asymmetry is what the fair normalisation is for.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from pytest_doceval.atomic import write_bytes_atomic, write_text_atomic
from pytest_doceval.cli.build_case.common import (
    LOG_TAIL_LINES,
    PDF_NAME,
    SOURCE_NAME,
    TRUTH_NAME,
    BuiltCase,
    CaseBuildError,
    page_count,
    prepare_out_dir,
    require_file,
    require_tool,
    run_tool,
)

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
    tail = [line for line in kept if line.strip()][-LOG_TAIL_LINES:]
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
    tex = require_file(Path(tex), "LaTeX source").resolve()
    deadline = time.monotonic() + timeout
    pdflatex = require_tool("pdflatex", tex)
    pandoc = require_tool("pandoc", tex)
    raw = tex.read_bytes()
    text = _decode_source(raw)
    env = _latex_env(tex.parent)
    pdf_bytes = _compile_pdf(tex, text, pdflatex, env, deadline)
    truth_text = _pandoc_truth(tex, text, pandoc, env, deadline)

    pages = page_count(pdf_bytes, tex)
    out_dir = prepare_out_dir(out_dir, tex)
    pdf_path = write_bytes_atomic(out_dir / PDF_NAME, pdf_bytes)
    truth_path = write_text_atomic(out_dir / TRUTH_NAME, truth_text)
    if keep_source:
        write_bytes_atomic(out_dir / SOURCE_NAME, raw)
    return BuiltCase(directory=out_dir, pdf=pdf_path, truth=truth_path, pages=pages)


def _compile_pdf(
    tex: Path, text: str, pdflatex: str, env: dict[str, str], deadline: float
) -> bytes:
    """pdflatex twice (bibtex and a third pass between when the source needs it), in a
    temporary output folder; the PDF's bytes with a content-derived trailer ID."""
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
            bib = run_tool([bibtex, "document"], cwd=tmp, env=env, deadline=deadline, source=tex)
            if bib.returncode >= 2:  # 1 = warnings (e.g. a missing field): not fatal
                blg = tmp / "document.blg"
                detail = blg.read_text("utf-8", "replace") if blg.exists() else ""
                detail = detail or bib.stdout.decode("utf-8", "replace")
                tail = "\n".join(detail.strip().splitlines()[-LOG_TAIL_LINES:])
                raise CaseBuildError(f"{tex}: bibtex failed (exit {bib.returncode}):\n{tail}")
        for _ in range(2):
            _pdflatex(latex_cmd, tex, tmp, env, deadline)
        return _stable_trailer_id((tmp / "document.pdf").read_bytes())


def _pandoc_truth(tex: Path, text: str, pandoc: str, env: dict[str, str], deadline: float) -> str:
    """The markdown truth: pandoc with the title template and the merged-cells filter."""
    with tempfile.TemporaryDirectory(prefix="doceval-pandoc-") as tmp_name:
        template = Path(tmp_name) / "truth.md.template"
        template.write_text(PANDOC_TEMPLATE, encoding="utf-8")
        spans_filter = Path(tmp_name) / "span_tables.lua"
        spans_filter.write_text(SPAN_TABLES_FILTER, encoding="utf-8")
        conv = run_tool(
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
    return truth_text if truth_text.endswith("\n") else truth_text + "\n"


def _pdflatex(cmd: list[str], tex: Path, tmp: Path, env: dict[str, str], deadline: float) -> None:
    """One pdflatex pass; a failure raises with the LaTeX error and the log's tail."""
    run = run_tool(cmd, cwd=tex.parent, env=env, deadline=deadline, source=tex)
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
