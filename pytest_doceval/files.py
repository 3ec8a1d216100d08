"""Reading a suite's own files: UTF-8 text and JSON Lines, with one wording for every problem.

Every kind reads truths, questions, facts and saved outputs through these functions, so a bad
file says the same thing whichever kind found it: ``<path>: missing <what>``, ``<path>: <what>
is not UTF-8 (byte 0x.. at offset N)``, and for JSON Lines ``<path>:<line>: <cause>``. A JSONL
file is decoded line by line, so one bad line (not UTF-8, not JSON) is a problem of that line
only and the kind decides whether it breaks the file or just the case it would have been.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_doceval.errors import CaseInputError

# How many problems one error lists before it says "... and N more".
MAX_LISTED = 20


def _read_bytes(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CaseInputError(f"{path}: missing {what}") from None
    except IsADirectoryError:
        raise CaseInputError(f"{path}: {what} is a folder, not a file") from None
    except OSError as exc:
        raise CaseInputError(f"{path}: {what} cannot be read: {exc.strerror or exc}") from None


def not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    """The one wording of a decoding failure: which byte, where."""
    return f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"


def read_text(path: Path, what: str) -> str:
    """A UTF-8 text file (a leading byte-order mark dropped), or a `CaseInputError` naming the
    file, what it is for, and why it cannot be used."""
    data = _read_bytes(path, what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaseInputError(f"{path}: {what} is {not_utf8(data, exc)}") from None
    return text.removeprefix("\ufeff")


@dataclass(frozen=True)
class JsonLine:
    """One parsed line of a JSON Lines file (``number`` counts from 1, blank lines included)."""

    number: int
    value: Any


@dataclass(frozen=True)
class LineProblem:
    """A line that could not be used, and why."""

    number: int
    cause: str

    def where(self, path: Path) -> str:
        return f"{path}:{self.number}: {self.cause}"


def read_jsonl(path: Path, what: str) -> Iterator[JsonLine | LineProblem]:
    """Each non-blank line of `path`, parsed, or the problem of that line (not UTF-8, not JSON).

    A missing or unreadable file raises `CaseInputError` at once (before the first line)."""
    data = _read_bytes(path, what)
    return _lines(data)


def _lines(data: bytes) -> Iterator[JsonLine | LineProblem]:
    for number, raw in enumerate(data.splitlines(), start=1):
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield LineProblem(number, not_utf8(raw, exc))
            continue
        try:
            yield JsonLine(number, json.loads(text))
        except json.JSONDecodeError as exc:
            yield LineProblem(number, f"not valid JSON ({exc.msg}, column {exc.colno})")


def output_digest(*contents: str | bytes) -> str:
    """The SHA-256 of a saved output (several files: each, length-prefixed, in order): what a
    precomputed system's fingerprint carries, so that editing a file under ``outputs/`` shows
    in the baseline diff as a changed system even when the numbers stay the same."""
    digest = hashlib.sha256()
    for content in contents:
        data = content.encode("utf-8") if isinstance(content, str) else content
        digest.update(f"{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()


def problems_error(problems: Sequence[str]) -> CaseInputError:
    """One error listing `problems` (``path:line: cause`` each), at most `MAX_LISTED` of them."""
    listed = list(problems[:MAX_LISTED])
    if len(problems) > MAX_LISTED:
        listed.append(f"... and {len(problems) - MAX_LISTED} more problems")
    return CaseInputError("\n".join(listed))
