"""Rows on disk, one JSON object a line, read back one at a time.

A run's rows go to a file as the tests finish (`RowRecord`: appended and flushed, so a run that
is killed leaves the rows it had); a JSON report holds its rows one a line too
(`report.json_report`). `Rows` is a sequence of rows kept as (file, offset, length) with their
numbers in a `RowTable`: the shared analyses read the table, and indexing or iterating reads
and decodes one line at a time, so a suite of 200,000 rows is never in memory as dicts. A
`Rows` can also wrap rows already in memory (`Rows.of`), so every report is read one way.

A row's line is the JSON of ``rows.plain(row)`` as the report writes it (UTF-8, no NaN, one
line: JSON escapes every line break inside a string), its ``duration`` written last.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from array import array
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

from pytest_doceval.errors import DocevalError
from pytest_doceval.row_table import RowTable, sort_order
from pytest_doceval.rows import MEASURED, Row, plain

_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
_ENCODE_ASCII = json.JSONEncoder(ensure_ascii=True, allow_nan=False).encode
_VOLATILE = "duration"  # the one field of a row that differs between runs of unchanged tests


# A run of digits this long may be an integer beyond 64 bits, which orjson reads as a float.
# Found by mapping digits to 0 and the rest to a space (a regular expression took ten times
# longer than the parse it guards).
_LONG_RUN = b"0" * 19
_DIGITS = bytes(c if 48 <= c <= 57 else 32 for c in range(256)).replace(b"123456789", b"0" * 9)


def decode_row(line: bytes) -> Any:
    """``json.loads(line)``, by orjson where it reads the line the same way: three times as
    fast, most of the time of reading a report of 200,000 rows. Not for a line with a run of
    19 digits (an integer orjson would read as a float), and not where orjson refuses the
    line (a lone surrogate's escape, NaN written by another tool): `json` reads those, or
    raises its error with the position."""
    if line.translate(_DIGITS).find(_LONG_RUN) < 0:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line)


def encode_row(row: Mapping[str, Any]) -> tuple[dict[str, Any], bytes, bytes]:
    """A row as JSON gives it (`rows.plain`), its line (no line break), and the JSON of the
    row less its ``duration``: the line is that JSON with the duration added last, so a row
    is made plain and encoded once."""
    data: dict[str, Any] = plain(row)
    duration = data.pop(_VOLATILE, None)
    steady = _encoded(data)
    if duration is None:
        return data, steady, steady
    data[_VOLATILE] = duration
    head = steady[:-1] + (b", " if data.keys() - {_VOLATILE} else b"")
    return data, head + b'"duration": ' + _encoded(duration) + b"}", steady


def _encoded(data: Any) -> bytes:
    try:
        return _ENCODE(data).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: as a \\u escape, which reads back the same
        return _ENCODE_ASCII(data).encode("ascii")


class RowLines:
    """Where each row's line is: (file, offset, length), a column each, by table row."""

    def __init__(self, files: Sequence[Path] = ()) -> None:
        self.files = list(files)
        self.source = array("H")
        self.offset = array("q")
        self.length = array("l")
        self._fds: dict[int, int] = {}

    @classmethod
    def sized(cls, files: Sequence[Path], rows: int) -> RowLines:
        """Room for `rows` rows of the first file, to be placed by `put`."""
        lines = cls(files)
        lines.source = array("H", [0]) * rows
        lines.offset = array("q", [0]) * rows
        lines.length = array("l", [0]) * rows
        return lines

    def add(self, source: int, offset: int, length: int) -> None:
        self.source.append(source)
        self.offset.append(offset)
        self.length.append(length)

    def put(self, row: int, offset: int, length: int) -> None:
        self.offset[row] = offset
        self.length[row] = length

    def extend(self, other: RowLines) -> None:
        base = len(self.files)
        self.files += other.files
        self.source += array("H", (base + s for s in other.source))
        self.offset += other.offset
        self.length += other.length

    def read(self, i: int) -> bytes:
        source = self.source[i]
        fd = self._fds.get(source)
        if fd is None:
            try:
                fd = self._fds[source] = os.open(self.files[source], os.O_RDONLY)
            except OSError as exc:
                raise DocevalError(f"{self.files[source]}: cannot read its rows ({exc})") from exc
        length = self.length[i]
        data = os.pread(fd, length, self.offset[i])
        if len(data) != length:
            raise DocevalError(
                f"{self.files[source]}: truncated at byte {self.offset[i] + len(data)} "
                f"(a row of {length} bytes starts at byte {self.offset[i]})"
            )
        return data

    def close(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def __del__(self) -> None:
        self.close()


class Rows(Sequence[Row]):
    """A sequence of rows (in `order`, indices into `table`) read from their lines on disk, or
    from a list in memory; `table` holds their numbers."""

    def __init__(
        self,
        table: RowTable,
        order: array[int] | None = None,
        *,
        lines: RowLines | None = None,
        memory: Sequence[Row] | None = None,
        digests: bytearray | None = None,
    ) -> None:
        self.table = table
        self.order = array("q", range(len(table))) if order is None else order
        self._lines = lines
        self._memory = memory
        self._digests = digests  # 32 bytes a table row: SHA-256 of its JSON less duration

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> Rows:
        """`rows` as they are (a `Rows` unchanged; a list of dicts kept in memory, leaving out
        anything in it that is not a mapping)."""
        if isinstance(rows, Rows):
            return rows
        table = RowTable()
        kept: list[Row] = []
        for row in rows:
            if not isinstance(row, Mapping):
                continue
            table.add(plain(row))
            kept.append(row)  # type: ignore[arg-type]
        return cls(table, memory=kept)

    @classmethod
    def concat(cls, parts: Sequence[Rows]) -> Rows:
        """The rows of `parts`, one after another (each part's own order)."""
        table = RowTable()
        lines = RowLines()
        memory: list[Row] = []
        order = array("q")
        for part in parts:
            base = len(table)
            table.extend(part.table)
            order += array("q", (base + i for i in part.order))
            if part._lines is not None:
                lines.extend(part._lines)
            elif part._memory is not None:
                memory += part._memory
        if lines.files and memory:
            raise ValueError("rows from files and rows in memory cannot be joined")
        return cls(table, order, lines=lines if lines.files else None, memory=memory or None)

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> Rows: ...
    def __getitem__(self, index: int | slice) -> Row | Rows:
        if isinstance(index, slice):
            return self._with(self.order[index])
        return self._row(self.order[index])

    def __iter__(self) -> Iterator[Row]:
        for i in self.order:
            yield self._row(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Rows: {len(self)} rows>"

    def _row(self, i: int) -> Row:
        if self._memory is not None:
            return self._memory[i]
        assert self._lines is not None
        data = self._lines.read(i)
        try:
            row: Row = decode_row(data)
        except ValueError as exc:
            where = f"{self._lines.files[self._lines.source[i]]}: at byte {self._lines.offset[i]}"
            raise DocevalError(f"{where}: a row is not JSON ({exc})") from exc
        return row

    def _with(self, order: array[int]) -> Rows:
        return Rows(
            self.table, order, lines=self._lines, memory=self._memory, digests=self._digests
        )

    def backed_by(self, lines: RowLines) -> Rows:
        """The same rows, read from `lines` (where a report was just written)."""
        return Rows(self.table, self.order, lines=lines, digests=self._digests)

    def line(self, k: int) -> bytes:
        """The JSON line of the `k`-th row, as the report writes it."""
        i = self.order[k]
        if self._lines is not None:
            return self._lines.read(i)
        return encode_row(self._row(i))[1]

    def sorted(self) -> Rows:
        """The rows in the one report order: by (case, system), stable (`rows.sort_rows`)."""
        return self._with(sort_order(self.table, self.order))

    def measured(self) -> Rows:
        """The rows whose metrics were measured (passed or failed)."""
        outcomes = self.table.outcomes
        return self._with(array("q", (i for i in self.order if outcomes[i] in MEASURED)))

    def digest(self) -> str:
        """SHA-256 over the rows in this order, each less its ``duration``: equal for rows
        that differ only in how long they took (the analysis cache's key)."""
        total = hashlib.sha256()
        for i in self.order:
            if self._digests is not None:
                total.update(self._digests[32 * i : 32 * i + 32])
            else:
                total.update(hashlib.sha256(encode_row(self._row(i))[2]).digest())
        return total.hexdigest()

    def close(self) -> None:
        if self._lines is not None:
            self._lines.close()


def table_of(rows: Sequence[Mapping[str, Any]]) -> tuple[RowTable, Sequence[int]] | None:
    """The table and order of `rows` when it is a `Rows` (None for a plain list)."""
    if isinstance(rows, Rows):
        return rows.table, rows.order
    return None


class RowRecord:
    """Rows appended to one file as they come, each line written and flushed at once (a run
    killed midway leaves every finished test's row), grouped (by suite file) into `Rows`.

    The file (`path`, or a new temporary file when None) is created, or emptied, at the first
    row; `discard` removes it."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file: Any = None
        self._size = 0
        self._groups: dict[Any, tuple[RowTable, RowLines, bytearray]] = {}

    def add(self, group: Any, row: Mapping[str, Any]) -> bool:
        """Record `row` in `group`; True when it is the group's first."""
        data, line, steady = encode_row(row)
        if self._file is None:
            self._file = self._open()
        assert self.path is not None
        found = self._groups.get(group)
        first = found is None
        if found is None:
            found = self._groups[group] = (RowTable(), RowLines([self.path]), bytearray())
        table, lines, digests = found
        self._file.write(line + b"\n")
        table.add(data)
        lines.add(0, self._size, len(line))
        digests += hashlib.sha256(steady).digest()
        self._size += len(line) + 1
        return first

    def _open(self) -> Any:
        if self.path is None:
            fd, name = tempfile.mkstemp(prefix="doceval-rows-", suffix=".jsonl")
            self.path = Path(name)
            return os.fdopen(fd, "wb", buffering=0)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return open(self.path, "wb", buffering=0)

    def groups(self) -> list[Any]:
        return list(self._groups)

    def rows(self, group: Any) -> Rows:
        table, lines, digests = self._groups[group]
        return Rows(table, lines=lines, digests=digests)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def discard(self) -> None:
        """Close and remove the file (its rows are in the report now)."""
        self.close()
        for _, lines, _ in self._groups.values():
            lines.close()
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
