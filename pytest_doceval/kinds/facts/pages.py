"""How each system's output(s) of a fact's page are made: the plan of one facts test.

A precomputed system's outputs are its repeat files (``<stem>_pg<page>_repeat<N>.md``, found by
`layout.SystemOutputs`), each a saved-output stage (`saved_output_stage`: free, keyed by the
file's path and digest). A registered parser parses the page itself: the page is cut from the PDF
into a one-page PDF (any parser can read that; a parse of the whole PDF would have to be split
into pages again, and PyMuPDF's joins them with blank lines) inside the stage. The stage's key is
the output cache's key of a page: the parser's fingerprint and (PDF digest, page number); a
two-stage system's stage 1 is the same page parse its parser gets when it runs alone
(`systems.staged.parse_stages`, as in the documents kind). Every fact of a page plans the same
keys, so the engine reads or parses a page once per system however many facts it has.

The plan names its results: ``output`` (the parse, or the first repeat) and ``repeat2``,
``repeat3`` ... (a precomputed system's further repeats), listed in order by `repeat_results`.
What makes a page unplannable (a missing PDF or output, an unreadable PDF, a page the PDF does
not have) is the plan's error, naming the fact. A PDF's page count is read once per run, and
kept in the run's store under the PDF's digest: a warm run plans without importing PyMuPDF
(whose import loads layout models, about a second in every process, each xdist worker too).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_doceval.atomic import write_bytes_atomic
from pytest_doceval.engine import Plan, StageResults, saved_output_stage
from pytest_doceval.errors import CaseInputError, DocevalError, SystemRunError, SystemUnavailable
from pytest_doceval.kinds.facts import Fact, output_path
from pytest_doceval.kinds.facts.layout import PDF_DIR, SystemOutputs
from pytest_doceval.kinds.facts.model import IMPLICIT_BASELINE_FILE
from pytest_doceval.store import JSON, cache_key, file_digest
from pytest_doceval.systems import Parser, SystemEnv
from pytest_doceval.systems.base import run_system
from pytest_doceval.systems.sources import Source
from pytest_doceval.systems.staged import parse_stages

if TYPE_CHECKING:
    from pytest_doceval.store import Store

__all__ = ["PagePlans", "repeat_results", "where"]

OUTPUT = "output"  # the result a test scores: the page's parse, or its first repeat


def repeat_result(n: int) -> str:
    """The name of repeat `n`'s result (1-based): the first is the ``output``."""
    return OUTPUT if n == 1 else f"repeat{n}"


def repeat_results(results: StageResults) -> list[str]:
    """The names of the page's outputs a plan of `PagePlans` made, in repeat order."""
    names = [OUTPUT]
    while repeat_result(len(names) + 1) in results:
        names.append(repeat_result(len(names) + 1))
    return names


def where(fact: Fact) -> str:
    """Where a fact was written, for messages: ``<file>:<line>``."""
    if fact.file == IMPLICIT_BASELINE_FILE:
        return f"implicit baseline fact of {fact.pdf}"
    return f"{fact.file}:{fact.line}"


class PagePlans:
    """The plans of one suite's tests (`sources`: where each system's outputs come from)."""

    def __init__(
        self,
        folder: Path,
        env: SystemEnv,
        sources: Mapping[str, Source],
        store: Callable[[], Store | None] = lambda: None,
    ) -> None:
        self.folder = folder
        self.env = env
        self.sources = sources
        self.store = store  # the run's store, known once the run has made it
        self._plans: dict[tuple[str, str, int], Plan | DocevalError] = {}  # (system, pdf, page)
        # Each PDF's (digest, page count), or why it cannot be read: checked once per run.
        self._pdfs: dict[Path, tuple[str, int] | CaseInputError] = {}
        self._outputs: dict[str, SystemOutputs] = {}  # each system folder listed once

    def plan(self, system: str, fact: Fact) -> Plan:
        """The stages making `system`'s output(s) of the fact's page, planned once per page
        (errors too: every fact of a broken page reports the same cause without retrying it);
        an error names the fact and the cause (its class kept: a skip stays a skip)."""
        page = (system, fact.pdf, fact.page)
        found = self._plans.get(page)
        if found is None:
            try:
                found = (
                    self._parse(system, fact)
                    if self.sources[system].parsed
                    else self._saved(system, fact)
                )
            except DocevalError as exc:
                found = exc
            self._plans[page] = found
        if isinstance(found, DocevalError):
            kind = type(found) if type(found) in _PLAIN_ERRORS else CaseInputError
            # Chained to the original cause (a parser's own exception, for --tb=long), not to
            # `found`: pytest would format that traceback again for every fact of the page.
            raise kind(f"fact {fact.id!r} ({system}, {where(fact)}): {found}") from (
                found.__cause__
            )
        return found

    def _saved(self, system: str, fact: Fact) -> Plan:
        folder = self.folder / system
        outputs = self._outputs.get(system)
        if outputs is None:
            outputs = self._outputs[system] = SystemOutputs(folder)
        paths = outputs.repeats(fact.pdf, fact.page)
        if not paths:
            expected = output_path(folder, fact.pdf, fact.page, 1)
            raise CaseInputError(
                f"{expected}: missing output of {system} for {fact.pdf} page {fact.page} "
                "(no <stem>_pg<page>_repeat<N>.md)"
            )
        stages = [
            saved_output_stage(
                path, what="precomputed output", label=f"{system}/{path.relative_to(folder)}"
            )
            for path in paths
        ]
        results = {repeat_result(n): stage.key for n, stage in enumerate(stages, start=1)}
        return Plan(tuple(stages), results)

    def _parse(self, system: str, fact: Fact) -> Plan:
        pdf = self.folder / PDF_DIR / fact.pdf
        digest = self._check_page(pdf, fact.page)
        label = f"{fact.pdf}#page={fact.page}"
        stages = parse_stages(
            system,
            self.env.system,
            input_digest=_page_input(digest, fact.page),
            call=parse_page,
            args=(pdf, fact.page),
            what=label,
            case=label,
        )
        return Plan(tuple(stages), {OUTPUT: stages[-1].key})

    def _check_page(self, pdf: Path, page: int) -> str:
        """`pdf`'s digest, once it is known to be a readable PDF with page `page`."""
        found = self._pdfs.get(pdf)
        if found is None:
            found = self._pdfs[pdf] = _read_pdf(pdf, self.store())
        if isinstance(found, CaseInputError):
            raise CaseInputError(str(found)) from found.__cause__
        digest, pages = found
        if page > pages:
            raise _no_such_page(pdf, page, pages)
        return digest


def _read_pdf(pdf: Path, store: Store | None) -> tuple[str, int] | CaseInputError:
    """`pdf`'s digest and page count, or why it cannot be read. A count read before is taken
    from `store` (same bytes, same PyMuPDF: same count); an unreadable PDF is not stored, so
    its error is found again, by the same check, in every run."""
    if not pdf.is_file():
        return CaseInputError(f"{pdf}: missing PDF (a fact's pdf is a path inside {PDF_DIR}/)")
    digest = file_digest(pdf)
    key = cache_key({"page_count": "pymupdf", "version": version("pymupdf")}, digest)
    stored = store.get(key, JSON) if store is not None else None
    if isinstance(stored, int) and not isinstance(stored, bool) and stored > 0:
        return digest, stored
    from pytest_doceval.systems.pdf import open_pdf  # PyMuPDF: only when a count is needed

    try:
        with open_pdf(pdf) as doc:
            pages: int = doc.page_count
    except CaseInputError as exc:
        return exc
    if store is not None:
        store.put(key, pages, JSON)
    return digest, pages


def parse_page(system: str, parser: Parser, pdf: Path, page: int) -> str:
    """A CPU stage's call: `parser` on page `page` of `pdf`, cut into a one-page PDF in a
    temporary folder of its own (it may run in another process)."""
    with tempfile.TemporaryDirectory(prefix="doceval-page-") as folder:
        single = write_bytes_atomic(Path(folder, f"{pdf.stem}_pg{page}.pdf"), _cut_page(pdf, page))
        return run_system(system, f"{pdf.name}#page={page}", lambda: parser.parse(single))


def _cut_page(pdf: Path, page: int) -> bytes:
    """Page `page` (1-based) of `pdf` as the bytes of a one-page PDF."""
    import pymupdf

    from pytest_doceval.systems.pdf import open_pdf

    with open_pdf(pdf) as doc:
        if page > doc.page_count:  # checked when planned; the file may have changed since
            raise _no_such_page(pdf, page, doc.page_count)
        # PyMuPDF's Document methods are unannotated (pyproject's mypy overrides say so).
        single = pymupdf.open()  # type: ignore[no-untyped-call]
        single.insert_pdf(doc, from_page=page - 1, to_page=page - 1)  # type: ignore[no-untyped-call]
        data: bytes = single.tobytes(garbage=3, deflate=True)  # type: ignore[no-untyped-call]
        single.close()  # type: ignore[no-untyped-call]
    return data


# Errors re-raised with the fact named keep their class (a skip stays a skip).
_PLAIN_ERRORS = (CaseInputError, SystemRunError, SystemUnavailable)


def _page_input(digest: str, page: int) -> str:
    """The cache's input digest of one page: the PDF's bytes and the page number."""
    return hashlib.sha256(f"{digest}:page:{page}".encode()).hexdigest()


def _no_such_page(pdf: Path, page: int, pages: int) -> CaseInputError:
    plural = "s" if pages != 1 else ""
    return CaseInputError(f"{pdf}: the fact is on page {page} but the PDF has {pages} page{plural}")
