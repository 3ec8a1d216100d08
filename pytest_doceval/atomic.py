"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

# A temporary name unique within this host's processes and this process's threads; O_EXCL
# guards against debris a crashed process with a recycled pid left behind.
_TEMPORARY_NAMES = itertools.count()


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and `os.replace`.

    An existing file keeps its mode; a new one gets what an ordinary write would give it
    (0666 less the umask, which ``os.open`` applies). The folder is created only when the
    first attempt finds it missing: runs write thousands of entries into folders that exist,
    and a store entry costs a few system calls, no more (issue 24's per-case overhead).
    """
    path = Path(path)
    mode = _existing_mode(path)
    fd, tmp = _temporary(path)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        # A failed write must not leave debris that a later run could mistake for data.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[BinaryIO]:
    """A binary file to write in pieces that becomes `path` when the block ends without an
    error, as `write_bytes_atomic` writes (a temporary file beside it, then ``os.replace``);
    on an error the temporary file is removed and `path` is left as it was. For files too big
    to hold in memory at once (a report of 200,000 rows)."""
    path = Path(path)
    mode = _existing_mode(path)
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, "wb") as out:
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            yield out
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _existing_mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return None


def _temporary(path: Path) -> tuple[int, str]:
    """A new temporary file beside `path`; its folder is made only when it is missing."""
    try:
        return _open_temporary(path)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return _open_temporary(path)


def _open_temporary(path: Path) -> tuple[int, str]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = f"{path.parent}/.{path.name}.{os.getpid()}.{next(_TEMPORARY_NAMES)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def write_text_atomic(path: Path, text: str) -> Path:
    """UTF-8 with ``\\n`` line ends, atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def stable_json(data: Any) -> str:
    """JSON that diffs well in a pull request: sorted keys, two-space indent, trailing newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=True) + "\n"


def write_json_atomic(path: Path, data: Any) -> Path:
    return write_text_atomic(path, stable_json(data))
