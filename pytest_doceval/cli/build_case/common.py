"""What every way of building a case shares: the case's file names, its error, the folder it
writes, and running an external tool (pdflatex, bibtex, pandoc) under one time budget."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from pytest_doceval.errors import DocevalError

PDF_NAME = "document.pdf"
TRUTH_NAME = "truth.md"
SOURCE_NAME = "source.tex"
MARKDOWN_SOURCE_NAME = "source.md"  # what a case built from markdown was laid out from

#: pandoc's markdown with every table form but pipe tables switched off, so a table row is a
#: ``| a | b |`` line (a table pipe tables cannot express still comes out as HTML), and without
#: `smart`, so dashes and quotes are the characters the PDF shows (``–``, ``’``), not ``--``.
INSTALL_HINTS = {
    "pdflatex": "apt-get install texlive-latex-base",
    "bibtex": "apt-get install texlive-binaries",
    "pandoc": "apt-get install pandoc",
}

LOG_TAIL_LINES = 20


class CaseBuildError(DocevalError):
    """A case could not be built; the message names the input file and the cause."""


@dataclass(frozen=True)
class BuiltCase:
    """A case folder as written: the folder, its PDF, its truth and the PDF's page count."""

    directory: Path
    pdf: Path
    truth: Path
    pages: int


def require_file(path: Path, what: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise CaseBuildError(f"{path}: {what} not found")
    if not path.is_file():
        raise CaseBuildError(f"{path}: {what} is not a file")
    return path


def require_tool(name: str, source: Path) -> str:
    found = shutil.which(name)
    if found is None:
        raise CaseBuildError(f"{source}: {name} not found: {INSTALL_HINTS[name]}")
    return found


def prepare_out_dir(out_dir: Path, source: Path) -> Path:
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CaseBuildError(f"{source}: cannot create case folder {out_dir}: {exc}") from exc
    return out_dir


def page_count(data: bytes, source: Path) -> int:
    try:
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            return doc.page_count
    except Exception as exc:  # PyMuPDF raises several types for damaged files
        raise CaseBuildError(f"{source}: the PDF produced is not readable ({exc})") from exc


def run_tool(
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
        hint = INSTALL_HINTS.get(tool, "install it")
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
