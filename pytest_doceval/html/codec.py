"""How per-case data travels in the page: the text-diff codec and the data blocks.

Diffs that show the same truth text (one case, several systems) store that text once: each
diff becomes an edit script into it (`pieces`, `merge`, `Chunk.diffs`). Data blocks are
``<script>`` elements the page's script reads by id: plain JSON (``<``, ``>``, ``&`` escaped)
or raw deflate + base85 with an alphabet that has no ``<``, ``>`` or ``&`` (`Blobs`)."""

from __future__ import annotations

import base64
import json
import os
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
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


class Blobs:
    """The data blocks of the page: ``<script>`` elements the page's script reads by id."""

    def __init__(self) -> None:
        # (id, JSON text) for plain blocks, (id, UTF-8 bytes) for blocks still to pack
        self._parts: list[tuple[str, str | bytes]] = []

    def json(self, ident: str, data: Any) -> None:
        self._parts.append((ident, script_json(data)))

    def packed(self, ident: str, data: Any) -> None:
        """Raw deflate + base85 (alphabet without ``<>&``), for the browser's
        ``DecompressionStream("deflate-raw")``; compressed in `render`, in parallel."""
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        self._parts.append((ident, raw.encode("utf-8", "replace")))

    def render(self) -> Markup:
        raw = [data for _, data in self._parts if isinstance(data, bytes)]
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            deflated = iter(list(pool.map(deflate, raw)))  # zlib releases the GIL
        out = []
        for ident, data in self._parts:
            if isinstance(data, bytes):
                # Safe inside <script> as it is: its alphabet has no "<", ">" or "&".
                text = Markup(base64.b85encode(next(deflated)).decode("ascii").translate(_B85_SAFE))
                kind = "application/x-doceval-deflate-b85"
            else:
                # `script_json` wrote "<", ">" and "&" as \u escapes: safe inside <script>.
                text, kind = Markup(data), "application/json"
            out.append(Markup('<script type="{}" id="{}">{}</script>\n').format(kind, ident, text))
        return Markup().join(out)


def deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(_DEFLATE_LEVEL, zlib.DEFLATED, -15, 9)
    return compressor.compress(data) + compressor.flush()
