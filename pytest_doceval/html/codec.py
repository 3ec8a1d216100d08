"""How per-case data travels in the page: the text-diff codec and the data blocks.

Diffs that show the same truth text (one case, several systems) store that text once: each
diff becomes an edit script into it (`pieces`, `merge`, `Chunk.diffs`). Data blocks are
``<script>`` elements the page's script reads by id: plain JSON (``<``, ``>``, ``&`` escaped)
or raw deflate + base85 with an alphabet that has no ``<``, ``>`` or ``&`` (`Blobs`); a page
too big to hold its data keeps it in files beside it (`DataFolder`)."""

from __future__ import annotations

import base64
import json
import os
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from pytest_doceval.html.fmt import plain, script_json

# Python's base85 alphabet with <, > and & swapped for characters it does not use, so an
# encoded chunk holds nothing HTML could read as markup.
_B85_SAFE = str.maketrans("<>&", ".,:")
_DEFLATE_LEVEL = 9

Runs = list[tuple[int, str]]


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value >= 0 else None


def pieces(ops: list[Any]) -> tuple[Runs, list[Any]] | None:
    """The truth text a diff shows, as (position, text) runs, and the diff as an edit script
    into that text: ``n > 0`` n equal characters, ``n <= 0`` -n elided ones, ``[n]`` n deleted,
    ``[n, hyp]`` n substituted by hyp, ``[hyp]`` hyp inserted. None if an op is malformed
    or its truth holds a character beyond U+FFFF (JavaScript counts those as two)."""
    position, end = 0, -1
    runs: list[tuple[int, list[str]]] = []
    script: list[Any] = []
    for op in ops:
        if not isinstance(op, list | tuple) or len(op) < 2:
            return None
        kind, first = op[0], op[1]
        if kind == "…":
            count = _count(first)
            if count is None:
                return None
            script.append(-count)
            position += count
            continue
        if not isinstance(first, str):
            return None
        if kind == "I":
            script.append([first])
            continue
        if not (first.isascii() or max(first, default="") <= "\uffff"):
            return None
        if kind == "S":
            if len(op) < 3 or not isinstance(op[2], str):
                return None
            script.append([len(first), op[2]])
        elif kind == "D":
            script.append([len(first)])
        elif kind == "=":
            if not first:
                continue
            script.append(len(first))
        else:
            return None
        if first:
            if runs and end == position:
                runs[-1][1].append(first)
            else:
                runs.append((position, [first]))
            position += len(first)
            end = position
    return [(start, "".join(parts)) for start, parts in runs], script


def merge(run_lists: list[Runs]) -> list[str | int] | None:
    """One truth text from the runs several diffs show of it, as text pieces and gap lengths
    (``["abc", 120, "def"]``); None if two diffs disagree about a character."""
    merged: list[list[Any]] = []
    for start, text in sorted((run for runs in run_lists for run in runs), key=lambda r: r[0]):
        if merged and start <= merged[-1][0] + len(merged[-1][1]):
            run_start, run_text = merged[-1]
            offset = start - run_start
            overlap = min(len(run_text) - offset, len(text))
            if run_text[offset : offset + overlap] != text[:overlap]:
                return None
            if overlap < len(text):
                merged[-1][1] = run_text + text[overlap:]
        else:
            merged.append([start, text])
    out: list[str | int] = []
    position = 0
    for start, text in merged:
        if start > position:
            out.append(start - position)
        out.append(text)
        position = start + len(text)
    return out


def _script_size(script: list[Any]) -> int:
    """Rough JSON size of an edit script: numbers and short output strings."""
    return 8 * len(script) + sum(
        len(x[-1]) for x in script if type(x) is list and type(x[-1]) is str
    )


@dataclass
class Chunk:
    """Details of some cases: truth texts, edit scripts and row details apart (each compresses
    better on its own), and a running estimate of its JSON size."""

    refs: list[list[str | int]] = field(default_factory=list)
    scripts: list[list[Any]] = field(default_factory=list)
    rows: dict[str, Any] = field(default_factory=dict)
    size: int = 0

    def diffs(self, ops_lists: list[list[Any]]) -> list[dict[str, Any]]:
        """Diffs of one truth text (one case, one metric, several systems): each as a
        reference into a shared truth (``{"g": ref, "s": script}``) or, when it cannot share
        (malformed, astral, inconsistent), its ops as given (``{"ops": [...]}``)."""
        encoded = [pieces(ops) for ops in ops_lists]
        shared = [e for e in encoded if e is not None]
        reference = merge([e[0] for e in shared]) if shared else None
        if reference is not None:
            self.refs.append(reference)
            self.size += sum(len(s) if isinstance(s, str) else 8 for s in reference)
        out = []
        for ops, piece in zip(ops_lists, encoded, strict=True):
            if reference is not None and piece is not None:
                self.scripts.append(piece[1])
                self.size += _script_size(piece[1])
                out.append({"g": len(self.refs) - 1, "s": len(self.scripts) - 1})
            else:
                out.append(self.ops(ops))
        return out

    def ops(self, ops: list[Any]) -> dict[str, Any]:
        """Ops stored as they are (an output-to-output diff shares no truth text)."""
        data = plain(ops)
        self.size += len(json.dumps(data, ensure_ascii=False))
        return {"ops": data}

    def data(self) -> dict[str, Any]:
        return {"refs": self.refs, "scripts": self.scripts, "rows": self.rows}


# A data block in the page: JSON, or raw deflate + base85 (`Blobs.packed`).
JSON_KIND = "application/json"
PACKED_KIND = "application/x-doceval-deflate-b85"
# Deflate jobs in flight at once (each holds its chunk's JSON): memory stays bounded.
_IN_FLIGHT = 8


@dataclass
class _Part:
    ident: str
    kind: str
    payload: str | Future[str]  # the block's text, or the job making it
    size: int  # its size (an estimate until the job is done)

    def text(self) -> str:
        return self.payload if isinstance(self.payload, str) else self.payload.result()


@dataclass
class _Table:
    """A suite's case table: its header (always in the page) and its first page of rows
    (in the header while the page holds its data, else a file of its own)."""

    ident: str
    header: dict[str, Any]
    first: dict[str, Any]


class DataFolder:
    """The data files of a page too big to hold them: one ``<id>.js`` each, which calls
    ``doceval_data(id, render, kind, text)`` when the page loads it with ``<script src>``
    (``fetch`` of ``file://`` is blocked in browsers; a script is not). `render` ties the files
    to the page that wrote them: a page never draws another render's data."""

    def __init__(self, path: Path, render: str) -> None:
        self.path = path
        self.render = render

    def make(self) -> None:
        """Create the folder. Called once, before any `write`: writes run on several threads,
        and a lazy mkdir in `write` raced (two threads both saw it missing)."""
        self.path.mkdir(parents=True)

    def write(self, ident: str, kind: str, text: str) -> None:
        call = ",".join(json.dumps(x, ensure_ascii=False) for x in (ident, self.render, kind, text))
        (self.path / f"{ident}.js").write_text(
            f"doceval_data({call});\n", encoding="utf-8", errors="replace"
        )


class Blobs:
    """The data blocks of the page, read by its script by id: ``<script>`` elements in the
    page (`render`) or, once they pass `spill_at` bytes, files of `folder` (every block but the
    case tables' headers, which stay in the page: its first screen never waits for a file).

    Packed blocks are compressed on a thread pool as they come (zlib releases the GIL), a few
    at a time, so a report of any size is written with a bounded amount of it in memory."""

    def __init__(self, *, spill_at: int | None = None, folder: DataFolder | None = None) -> None:
        self._parts: list[_Part | _Table] = []
        self._spill_at = spill_at
        self.folder = folder
        self._size = 0
        self._pool: ThreadPoolExecutor | None = None
        self._writes: deque[Future[None]] = deque()
        self.spilled = False

    def json(self, ident: str, data: Any) -> None:
        text = script_json(data)
        self._add(_Part(ident, JSON_KIND, text, len(text)))

    def packed(self, ident: str, data: Any) -> None:
        """Raw deflate + base85 (alphabet without ``<>&``), for the browser's
        ``DecompressionStream("deflate-raw")``."""
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        data_bytes = raw.encode("utf-8", "replace")
        job = self._jobs().submit(deflate_b85, data_bytes)
        self._add(_Part(ident, PACKED_KIND, job, len(data_bytes) // 4))

    def table(self, ident: str, header: dict[str, Any], first: dict[str, Any]) -> None:
        """A suite's case table: `header` and its `first` page of rows (`_Table`)."""
        part = _Table(ident, header, first)
        if self.spilled:
            self._spill_table(part)
        self._parts.append(part)
        self._check()

    def _jobs(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1))
        return self._pool

    def _add(self, part: _Part) -> None:
        if self.spilled:
            self._write(part)
            return
        self._parts.append(part)
        self._size += part.size
        self._check()

    def _check(self) -> None:
        if self.spilled or self._spill_at is None or self.folder is None:
            return
        # An estimate for blocks still compressing; exact once they are done.
        size = 0
        for part in self._parts:
            if isinstance(part, _Table):
                size += len(script_json(part.first))
            elif isinstance(part.payload, str):
                size += len(part.payload)
            else:
                size += len(part.payload.result()) if part.payload.done() else part.size
        self._size = size
        if size > self._spill_at:
            self.spill()

    def spill(self) -> None:
        """From now on every block but the tables' headers goes to the folder."""
        if self.spilled or self.folder is None:
            return
        self.folder.make()
        self.spilled = True
        kept: list[_Part | _Table] = []
        for part in self._parts:
            if isinstance(part, _Table):
                self._spill_table(part)
                kept.append(part)
            else:
                self._write(part)
        self._parts = kept

    def _spill_table(self, part: _Table) -> None:
        self.packed(f"{part.ident}-p0", part.first)  # its rows start in a file: "-p0"

    def _write(self, part: _Part) -> None:
        folder = self.folder
        assert folder is not None
        while len(self._writes) >= _IN_FLIGHT:
            self._writes.popleft().result()

        def write() -> None:
            folder.write(part.ident, part.kind, part.text())

        self._writes.append(self._jobs().submit(write))

    def close(self) -> None:
        """Wait for every file still being written (an error in one is raised here)."""
        while self._writes:
            self._writes.popleft().result()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def render(self) -> Markup:
        """The blocks that are in the page, as ``<script>`` elements."""
        out = []
        for part in self._parts:
            if isinstance(part, _Table):
                data = part.header if self.spilled else {**part.header, **part.first}
                ident, kind, text = part.ident, JSON_KIND, script_json(data)
            else:
                ident, kind, text = part.ident, part.kind, part.text()
            # JSON written by `script_json` has "<", ">" and "&" as \u escapes, and the base85
            # alphabet has none of them: either is safe inside <script> as it is.
            out.append(
                Markup('<script type="{}" id="{}">{}</script>\n').format(kind, ident, Markup(text))
            )
        self.close()
        return Markup().join(out)


def deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(_DEFLATE_LEVEL, zlib.DEFLATED, -15, 9)
    return compressor.compress(data) + compressor.flush()


def deflate_b85(data: bytes) -> str:
    """Raw deflate, base85 in the page's alphabet (no ``<``, ``>`` or ``&``)."""
    return base64.b85encode(deflate(data)).decode("ascii").translate(_B85_SAFE)
