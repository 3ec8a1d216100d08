"""Which code computed a number: digests of the package's source files (and a kind's own),
and of the Python and library versions, for the keys of stored results
(`run.score_cache`) and stored suite analyses (`run.analysis_cache`)."""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import re
import sys
from pathlib import Path
from typing import Any

import pytest_doceval
from pytest_doceval.store import file_digest

# Rooms of the package that cannot change a result: they present results or run the CLI.
PRESENTATION_ROOMS = ("report", "html", "cli")


def json_digest(payload: Any) -> str:
    """The one digest rule of the run's keys: SHA-256 of canonical JSON (sorted keys)."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def scoring_code_files(
    kind: type | None, *, left_out: tuple[str, ...] = PRESENTATION_ROOMS
) -> list[Path]:
    """The source files that score a suite of class `kind` (the module's rule): the package's
    but those of the rooms `left_out` and of the other kinds' folders, and the kind's own;
    empty when the kind's source cannot be found. `kind` None: the package's alone."""
    package = Path(pytest_doceval.__file__).resolve().parent
    own: Path | None = None
    if kind is not None:
        module = sys.modules.get(kind.__module__)
        source = getattr(module, "__file__", None)
        if not source:
            return []
        source_path = Path(source).resolve()
        own = source_path.parent if getattr(module, "__package__", None) else source_path
    kinds = package / "kinds"
    files = {
        path
        for path in package.rglob("*.py")
        if path.relative_to(package).parts[0] not in left_out
        and not (path.parent != kinds and kinds in path.parents)
    }
    if own is not None:
        files |= set(own.rglob("*.py")) if own.is_dir() else {own}
    return sorted(p for p in files if "__pycache__" not in p.parts)


@functools.cache
def scoring_code_digest(kind: type) -> str | None:
    """The digest of `scoring_code_files`, once per process and kind; None when there are
    none or one cannot be read (then no result of the kind is kept)."""
    return _code_digest(scoring_code_files(kind))


# The rooms that present a report without computing any of it.
DISPLAY_ROOMS = ("html", "cli")


@functools.cache
def analysis_code_digest(kind: type | None) -> str | None:
    """The digest of the code that analyses a suite of class `kind` (`run.analysis_cache`):
    its scoring code and the report's (``report/``: the analyses, the statistics it calls)."""
    return _code_digest(scoring_code_files(kind, left_out=DISPLAY_ROOMS))


def _code_digest(files: list[Path]) -> str | None:
    package = Path(pytest_doceval.__file__).resolve().parent
    try:
        # Paths relative to the package (absolute for a kind of one's own): a checkout moved
        # elsewhere keeps the digest of the package's own files.
        entries = [(_relative(path, package), _source_digest(path)) for path in files]
    except OSError:
        return None
    return json_digest(entries) if entries else None


def _source_digest(path: Path) -> str:
    """A source file's digest, hashed once while it stays the same file (the kinds share
    most of theirs; one process may run pytest more than once, as pytester does)."""
    stat = path.stat()
    return _digest_of_version(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _digest_of_version(path: Path, mtime_ns: int, size: int) -> str:
    return file_digest(path)


def _relative(path: Path, package: Path) -> str:
    return path.relative_to(package).as_posix() if package in path.parents else str(path)


@functools.cache
def environment_digest() -> str:
    """Python's version and the installed versions of the package's dependencies."""
    from importlib.metadata import PackageNotFoundError, requires, version

    try:
        names = [re.split(r"[^A-Za-z0-9_.\-]", r, maxsplit=1)[0] for r in requires(_DIST) or []]
    except PackageNotFoundError:  # run from a checkout that is not installed
        names = []
    versions: dict[str, str | None] = {}
    for name in sorted(set(names)):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    return json_digest({"python": platform.python_version(), "packages": versions})


_DIST = "pytest-doceval"
