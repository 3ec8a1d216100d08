"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_text_atomic(path: Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` via a temporary file in the same folder and `os.replace`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        # A failed write must not leave debris that a later run could mistake for data.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def stable_json(data: Any) -> str:
    """JSON that diffs well in a pull request: sorted keys, two-space indent, trailing newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=True) + "\n"


def write_json_atomic(path: Path, data: Any) -> Path:
    return write_text_atomic(path, stable_json(data))
