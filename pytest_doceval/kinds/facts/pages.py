"""Each system's output(s) of each page of a facts suite, read or parsed once per run.

A precomputed system's outputs are its repeat files (``<stem>_pg<page>_repeat<N>.md``, found by
`facts.find_repeat_outputs`). A registered parser parses the page itself: the page is cut from
the PDF into a one-page PDF (any parser can read that; a parse of the whole PDF would have to be
split into pages again, and PyMuPDF's joins them with blank lines), written to a temporary folder
of the run only when the output cache has no parse of it. The cache keys a page's output by the
parser's fingerprint and (PDF digest, page number); a two-stage system's stage 1 is the same
cached page parse its parser gets when it runs alone, as in the documents kind.

An error is kept per page, so every fact of a broken page reports the same cause without retrying
it, and is raised naming the fact.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_doceval.atomic import write_bytes_atomic
from pytest_doceval.engine import Stage
from pytest_doceval.errors import CaseInputError, DocevalError, SystemRunError, SystemUnavailable
from pytest_doceval.files import output_digest, read_text
from pytest_doceval.kinds.base import RunContext
from pytest_doceval.kinds.facts import Fact, PageOutput, output_path
from pytest_doceval.kinds.facts.layout import PDF_DIR, SystemOutputs
from pytest_doceval.kinds.facts.model import IMPLICIT_BASELINE_FILE
from pytest_doceval.store import file_digest
from pytest_doceval.systems import Parser, SystemEnv
from pytest_doceval.systems.base import RefiningParser, run_system
from pytest_doceval.systems.staged import parse_stages

__all__ = ["Page", "PageOutputs", "where"]


@dataclass(frozen=True)
class Page:
    """A system's output(s) of one page: one per repeat file, or one parse."""

    outputs: list[PageOutput]
    fingerprint: dict[str, Any]
    key: str | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Parsed:
    text: str
    fingerprint: dict[str, Any]
    key: str


def where(fact: Fact) -> str:
    """Where a fact was written, for messages: ``<file>:<line>``."""
    if fact.file == IMPLICIT_BASELINE_FILE:
        return f"implicit baseline fact of {fact.pdf}"
    return f"{fact.file}:{fact.line}"


class PageOutputs:
    """The page outputs of one suite's systems (`parsers`: the registered ones it names)."""

    def __init__(self, folder: Path, env: SystemEnv, parsers: Mapping[str, Parser]) -> None:
        self.folder = folder
        self.env = env
        self.parsers = parsers
        self._pages: dict[tuple[str, str, int], Page | DocevalError] = {}
        self._digests: dict[Path, str] = {}
        self._outputs: dict[str, SystemOutputs] = {}  # each system folder listed once
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def get(self, system: str, fact: Fact, ctx: RunContext) -> Page:
        """`system`'s output(s) of the fact's page, read or parsed once per run (errors too:
        every fact of a broken page reports the same cause without retrying it)."""
        key = (system, fact.pdf, fact.page)
        found = self._pages.get(key)
        if found is None:
            try:
                if system in self.parsers:
                    found = self._parsed_page(system, fact, ctx)
                else:
                    found = self._precomputed_page(system, fact)
            except DocevalError as exc:
                found = exc
            self._pages[key] = found
        if isinstance(found, DocevalError):
            kind = type(found) if type(found) in _PLAIN_ERRORS else CaseInputError
            # Chained to the original cause (a parser's own exception, for --tb=long), not to
            # `found`: pytest would format that traceback again for every fact of the page.
            raise kind(f"fact {fact.id!r} ({system}, {where(fact)}): {found}") from (
                found.__cause__
            )
        return found

    def stages(self, system: str, fact: Fact) -> list[Stage]:
        """The stages of `system`'s parse of the fact's page (none for a precomputed system,
        or when the PDF is missing: the test says so)."""
        pdf = self.folder / PDF_DIR / fact.pdf
        if system not in self.parsers or not pdf.is_file():
            return []
        label = _page_label(fact)
        return parse_stages(
            system,
            lambda name: self.parsers.get(name) or self.env.system(name),
            input_digest=_page_input(self._digest(pdf), fact.page),
            call=parse_page,
            args=(pdf, fact.page),
            what=label,
            case=label,
        )

    def _precomputed_page(self, system: str, fact: Fact) -> Page:
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
        texts = [read_text(path, "precomputed output") for path in paths]
        notes = () if any(t.strip() for t in texts) else (f"{paths[0].name} is empty",)
        fingerprint = {
            "system": system,
            "kind": "precomputed",
            "repeats": len(texts),
            "output_sha256": output_digest(*texts),
        }
        return Page([PageOutput(t) for t in texts], fingerprint, None, notes)

    def _parsed_page(self, system: str, fact: Fact, ctx: RunContext) -> Page:
        pdf = self.folder / PDF_DIR / fact.pdf
        if not pdf.is_file():
            raise CaseInputError(f"{pdf}: missing PDF (a fact's pdf is a path inside {PDF_DIR}/)")
        parsed = self._parse(system, pdf, fact, ctx)
        notes = () if parsed.text.strip() else (f"{system} returned no text for this page",)
        return Page([PageOutput(parsed.text)], parsed.fingerprint, parsed.key, notes)

    def _parse(self, system: str, pdf: Path, fact: Fact, ctx: RunContext) -> Parsed:
        """`system`'s text of the page, through the output cache; a two-stage system's stage 1
        is the same cached page parse its parser gets when evaluated alone."""
        parser = self.parsers.get(system) or self.env.system(system)
        label = _page_label(fact)
        if isinstance(parser, RefiningParser):
            first = self._parse(parser.stage1, pdf, fact, ctx)
            fingerprint = parser.fingerprint()
            cached = ctx.output(
                fingerprint,
                first.key,
                lambda: run_system(system, label, lambda: parser.refine(first.text, case=label)),
            )
            return Parsed(cached.text, fingerprint, cached.key)
        fingerprint = parser.fingerprint()
        digest = self._digest(pdf)
        cached = ctx.output(
            fingerprint,
            _page_input(digest, fact.page),
            lambda: run_system(
                system, label, lambda: parser.parse(self._page_pdf(pdf, digest, fact.page))
            ),
        )
        return Parsed(cached.text, fingerprint, cached.key)

    def _digest(self, pdf: Path) -> str:
        if pdf not in self._digests:
            self._digests[pdf] = file_digest(pdf)
        return self._digests[pdf]

    def _page_pdf(self, pdf: Path, digest: str, page: int) -> Path:
        """Page `page` of `pdf` as a one-page PDF file any parser can read (a temporary
        folder of this run, written only when the cache has no parse of it)."""
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="doceval-facts-")
        target = Path(self._tmp.name, digest[:16], f"{pdf.stem}_pg{page}.pdf")
        if target.is_file():
            return target
        return write_bytes_atomic(target, _cut_page(pdf, page))


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
        if page > doc.page_count:
            plural = "s" if doc.page_count != 1 else ""
            raise CaseInputError(
                f"{pdf}: the fact is on page {page} but the PDF has {doc.page_count} page{plural}"
            )
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


def _page_label(fact: Fact) -> str:
    return f"{fact.pdf}#page={fact.page}"
