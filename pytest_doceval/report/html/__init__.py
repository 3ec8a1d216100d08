"""The HTML report: one self-contained page a pull-request reviewer opens from a CI artifact.

``render_html(report)`` turns a ``doceval-report/1`` report (a dict) into a complete HTML5
document with inline CSS, inline JavaScript and inline SVG; it never references anything
outside itself, and a Content-Security-Policy (``default-src 'none'`` plus the hashes of its
own script and style) makes the browser enforce that. ``write_html`` writes it atomically.

The page is generic over suite kinds: everything it says about a metric (direction, whether
it is a headline metric, its description) comes from the section's ``metrics`` specs, a row's
extra panels from its ``views`` (`views.VIEWS`), a kind's analyses from the keys the section
lists in ``analysis_keys`` (`analyses.ANALYSES`). Unknown views and analyses still render.

Reviewer order. An interrupted run says so first. Suites that failed (failed or errored tests,
failed gates, a suite error) come first, then those with significant baseline changes. Each
suite leads with "What changed": significant baseline deltas, worse first, the rest folded
into one line. Then gates, the summary (mean, CI and its method, n, small-n marks) with a
metric legend, plots, analyses and the per-case table.

Modules: `frame` (document, CSP, header, run summary, TOC), `model` (reading the report),
`summary` and `changes` (tables), `plots` (SVG), `cases` (rows and detail chunks), `codec`
(shared-truth diffs, deflate + base85 blocks), `views` and `analyses` (renderer registries),
`fmt` (escaping and numbers: a missing, NaN or infinite number shows as ``n/a``).

Escaping. Every string from the report reaches the page either through a ``markupsafe.Markup``
template (the server-rendered parts: a plain ``str`` is escaped when it meets markup, a
``Markup`` fragment never twice) or as JSON data in ``<script type="application/json">`` with ``<``,
``>`` and ``&`` written as ``\\u003c``/``\\u003e``/``\\u0026`` (so ``</script>`` in data cannot
end the element); the page's script reads that data with ``JSON.parse`` and puts it into the
document only with ``textContent`` and text nodes, never ``innerHTML``.

Scale. Per-case rows are a compact JSON table drawn by the script, a page of rows at a time.
Everything else about a case (node id, labels, all metrics, counts, notes, views) is packed
into chunks of about ``cases.CHUNK_BYTES``, decoded only when a row is opened. The truth-vs-
output diffs of one case share its truth text: the text is stored once per case and each
system's diff becomes a short edit script into it. When a report's details exceed
``cases.INLINE_LIMIT`` the chunks are raw-deflated and base85-encoded (decoded in the browser
with ``DecompressionStream``; the base85 alphabet used has no ``<``, ``>`` or ``&``),
otherwise they are plain JSON.

At any size. The rows of the case table come in pages of ``cases.ROWS_PAGE`` and the details
in chunks, made in one pass over the rows, each row read from disk once (`row_file.Rows`).
While its data stays under `SELF_CONTAINED_BYTES` the page holds it (one file, as above);
past that, `write_html` writes the data into a folder beside the page, ``<page>.data/``, one
``<id>.js`` file a block, which the page's script loads with ``<script src>`` when it needs
it (``fetch`` of ``file://`` is blocked in browsers; a script is not): the page itself --
summary, gates, failures, what moved, plots, analyses, the case table's headers -- stays
small, and the case table fills in as its pages arrive; search and filters work over every
case once they are in. The policy then allows scripts the page's own script adds
(``'strict-dynamic'``), never a script written in the page's markup. The two go together:
keep the folder beside the page.

Self-test hook. Opening the page with ``#selftest`` makes its script open the first case row
that has a view once every page of rows is in, then set ``data-selftest`` on ``<html>`` to
``ok`` (or ``error: ...``) and ``data-open-ms`` to the milliseconds from the click to the
drawn details. The page always records ``data-ready-ms``, ``performance.now()`` when its
script has drawn the page, and ``data-rows-ms`` when every case table has all its rows. They
exist for headless-browser tests and the benchmark.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup

from pytest_doceval.atomic import write_text_atomic
from pytest_doceval.html.codec import Blobs, DataFolder
from pytest_doceval.html.model import suite_views
from pytest_doceval.report.html.frame import (
    document,
    interrupted_banner,
    page_header,
    run_summary,
    title,
    toc,
)
from pytest_doceval.report.html.suite import suite_section
from pytest_doceval.report.schema import Report

__all__ = ["render_html", "write_html"]


# Past this many bytes of data, a page keeps its data in a folder beside it (`write_html`).
SELF_CONTAINED_BYTES = 8_000_000


def render_html(report: Report) -> str:
    """A complete, self-contained HTML5 document for a ``doceval-report/1`` report.

    Absent or ``None`` optional parts are skipped; nothing in the report is trusted as markup.
    """
    return _render(report, Blobs())


def _render(report: Report, blobs: Blobs, data_url: str | None = None) -> str:
    views = suite_views(report)
    sections = [suite_section(view, blobs) for view in views]
    if not sections:
        sections = [Markup('<p class="empty">This report has no suites.</p>')]
    body = Markup().join(
        [page_header(report), interrupted_banner(report), run_summary(views), toc(views), *sections]
    )
    folder = blobs.folder if blobs.spilled else None
    data = None if folder is None or data_url is None else (data_url, folder.render)
    page = document(title(views), body, blobs.render(), data=data)
    # Lone surrogates (possible in JSON strings) cannot be written as UTF-8: make them '?'.
    return page.encode("utf-8", "replace").decode("utf-8")


def data_folder(path: Path) -> Path:
    """Where the page at `path` keeps its data when it is too big to hold it:
    ``doceval-report.html`` -> ``doceval-report.data/`` beside it."""
    return path.with_name(path.stem + ".data")


def write_html(report: Report, path: Path) -> Path:
    """Render `report` and write it to `path` atomically (temporary file beside it, then
    ``os.replace``); returns the path. A page whose data passes `SELF_CONTAINED_BYTES` keeps
    it in `data_folder` (written first, then put in place of the old one, then the page); a
    page that holds its own data removes a folder an earlier, bigger report left."""
    path = Path(path)
    final = data_folder(path)
    staging = final.with_name(f".{final.name}.{secrets.token_hex(4)}.tmp")
    blobs = Blobs(spill_at=SELF_CONTAINED_BYTES, folder=DataFolder(staging, secrets.token_hex(8)))
    try:
        page = _render(report, blobs, quote(final.name) + "/")
    except BaseException:
        blobs.close()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = final.with_name(f".{final.name}.{secrets.token_hex(4)}.old")
    with contextlib.suppress(FileNotFoundError):
        final.rename(old)  # a page without data files leaves none of an earlier page's
    if blobs.spilled:
        staging.rename(final)
    write_text_atomic(path, page)
    shutil.rmtree(old, ignore_errors=True)
    return path
