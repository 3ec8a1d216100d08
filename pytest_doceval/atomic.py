"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any


def _file_mode(path: Path) -> int:
    """The mode an ordinary write would leave: the existing file's, else 0666 less the umask.
    (``mkstemp`` creates 0600, which would make reports and case files private.)"""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0o022)
        os.umask(umask)
        return 0o666 & ~umask


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and `os.replace`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        # A failed write must not leave debris that a later run could mistake for data.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    """UTF-8 with ``\\n`` line ends, atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def stable_json(data: Any) -> str:
    """JSON that diffs well in a pull request: sorted keys, two-space indent, trailing newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=True) + "\n"


def write_json_atomic(path: Path, data: Any) -> Path:
    return write_text_atomic(path, stable_json(data))
