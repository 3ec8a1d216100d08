"""The ``doceval-report/1`` JSON report: what a run measured, in a versioned schema.

Top level: ``schema``, ``created``, ``environment``, ``config`` (bootstrap settings) and
``shard``, ``interrupted`` and ``suites.<name>`` -- each suite's meta (kind, path, scoring id,
systems, metric specs, gate rules, notes) plus `analysis.analyse_suite`'s results, aggregates,
baseline deltas, gates and the kind's analyses. `schema` declares it key by key.
"""

from __future__ import annotations

import bisect
import datetime as dt
import io
import json
import platform
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, BinaryIO, cast

from pytest_doceval.atomic import atomic_file
from pytest_doceval.errors import DocevalError
from pytest_doceval.report.schema import Environment, Report, StatsSettings, SuiteSection
from pytest_doceval.row_file import RowLines, Rows, decode_row
from pytest_doceval.row_table import RowTable
from pytest_doceval.rows import plain

REPORT_SCHEMA = "doceval-report/1"
_PACKAGES = (
    "pytest-doceval",
    "pytest",
    "pytest-xdist",
    "pymupdf",
    "pymupdf4llm",
    "rapidocr",
    "onnxruntime",
    "jiwer",
    "rapidfuzz",
    "kiwipiepy",
    "numpy",
    "scipy",
)


def environment() -> Environment:
    """What the numbers depend on: Python, the platform, the packages' versions. Not where
    the interpreter lives (a CI runner's or a user's folder in a report passed on)."""
    packages = {}
    for name in _PACKAGES:
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            continue
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": packages,
    }


def build_report(
    suites: Mapping[str, SuiteSection],
    config: StatsSettings,
    *,
    shard: str | None = None,
    shard_basis: str | None = None,
    interrupted: bool = False,
    limit: int | None = None,
) -> Report:
    """The report; ``shard`` is ``"K/N"`` for one shard of a run, split on `shard_basis`
    (run/shards.py), ``interrupted`` marks a run stopped before its end (its numbers cover
    only the tests that ran), ``limit`` a run of the first N cases of each suite
    (run/limit.py)."""
    report: Report = {
        "schema": REPORT_SCHEMA,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "environment": environment(),
        "config": config,
        "shard": shard,
        "interrupted": interrupted,
        "suites": dict(sorted(suites.items())),
    }
    if shard_basis is not None:
        report["shard_basis"] = shard_basis
    if limit is not None:
        report["limit"] = limit
    return report


def write_report(report: Report, path: Path) -> Path:
    """Written atomically (`save_report`)."""
    save_report(report, path)
    return path


def save_report(report: Report, path: Path) -> Report:
    """Write `report` to `path` atomically, a row at a time, and return it with each suite's
    ``results`` read from the written file (`row_file.Rows`): rows that came from a run's
    record or from other reports are copied line by line, never all in memory at once.

    NaN and infinities (a CI of one case) become null, since bare NaN is not JSON for most
    parsers. Keys keep their order: a suite's metrics are listed in the order its kind
    declares them, which is the order reports show them in."""
    with atomic_file(path) as out:
        written: Report = _write(report, out, path)
    return written


def report_text(report: Mapping[str, Any]) -> str:
    """The report as JSON text, as `save_report` writes it (without the final line break)."""
    buffer = io.BytesIO()
    _write(report, buffer, Path("<memory>"))
    return buffer.getvalue().decode("utf-8").removesuffix("\n")


def _write(report: Mapping[str, Any], out: BinaryIO, path: Path) -> Any:
    """The report's JSON (of its `plain` form), indented, each row of a suite's ``results`` on
    one line, written to `out`; the report returned with its rows read from `path`.

    Indenting every row's nested metrics made the JSON a few hundred lines per row, and
    ``json.dumps`` with ``indent`` runs its pure-Python encoder: most of the time of writing a
    big suite's report. A row a line is still readable and diffable, and written by the C
    encoder (`row_file.encode_row`), or copied as it is from the file it was read from."""
    suites: dict[str, Any] = {}
    rows: dict[str, tuple[str, Rows]] = {}
    for name, section in report.get("suites", {}).items():
        if isinstance(section, Mapping) and isinstance(section.get("results"), Sequence):
            token = f"@doceval-results-{len(rows)}@"
            rows[json.dumps(token)] = (name, Rows.of(section["results"]))
            section = {**section, "results": token}
        suites[name] = section
    skeleton = plain({**report, "suites": suites})
    text = json.dumps(skeleton, indent=2, ensure_ascii=False, allow_nan=False)
    parts = [text]
    for token in rows:
        head, found, tail = parts[-1].partition(token)
        if not found or token in tail:  # the token also occurs in the report's own text
            whole = {**report, "suites": {**report["suites"]}}
            for name, section_rows in rows.values():
                whole["suites"][name] = {**whole["suites"][name], "results": list(section_rows)}
            out.write(json.dumps(plain(whole), indent=2, ensure_ascii=False).encode() + b"\n")
            return report
        parts[-1:] = [head, token, tail]
    written: dict[str, Rows] = {}
    size = 0
    for part in parts:
        if part not in rows:
            data = part.encode("utf-8")
            out.write(data)
            size += len(data)
            continue
        name, section_rows = rows[part]
        if not len(section_rows):
            out.write(b"[]")
            size += 2
            written[name] = section_rows
            continue
        lines = RowLines.sized([path], len(section_rows.table))
        out.write(b"[\n")
        size += 2
        for k in range(len(section_rows)):
            line = section_rows.line(k)
            out.write(ROW_INDENT)
            lines.put(section_rows.order[k], size + len(ROW_INDENT), len(line))
            end = b",\n" if k + 1 < len(section_rows) else b"\n"
            out.write(line + end)
            size += len(ROW_INDENT) + len(line) + len(end)
        out.write(b"    ]")
        size += 5
        written[name] = section_rows.backed_by(lines)
    out.write(b"\n")
    return {
        **report,
        "suites": {
            name: {**section, "results": written[name]} if name in written else section
            for name, section in report.get("suites", {}).items()
        },
    }


def load_report(path: Path) -> Report:
    """A report from disk; a clear error for a missing file, bad JSON or another schema, and
    for a truncated or damaged file, naming the byte where it breaks (never a part of it read
    as the whole).

    A report this package wrote (a row a line) is read a line at a time: each suite's
    ``results`` is a `row_file.Rows` of (offset, length) into the file, with the rows' numbers
    in its table, so a report of 200,000 rows is never in memory as dicts. Any other JSON
    report is read whole. The one place JSON becomes a `Report` unchecked below its top level
    (the cast): checking every row of a big report on each read would cost more than the
    read, and a report of this schema is written by `build_report`, whose types mypy checks."""
    if not path.is_file():
        raise DocevalError(f"{path}: no such report")
    try:
        with path.open("rb") as source:
            by_lines = source.readline().rstrip(b"\r\n") == b"{"
            source.seek(0)
            data = _read_by_lines(path, source) if by_lines else _read_whole(path, source.read())
    except OSError as exc:
        raise DocevalError(f"{path}: cannot read the report ({exc})") from exc
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != REPORT_SCHEMA:
        raise DocevalError(f"{path}: report schema {schema!r} is not {REPORT_SCHEMA!r}")
    if not isinstance(data.get("suites"), dict):
        raise DocevalError(f"{path}: report has no 'suites' object")
    return cast(Report, data)


# The line that opens a suite's rows in a report `save_report` wrote, and how rows are indented.
RESULTS_START = b'      "results": ['
ROW_INDENT = b"      "
_ROWS_TOKEN = "@doceval-rows-{}@"


def _read_whole(path: Path, raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        raise DocevalError(f"{path}: {_broken(exc.start, len(raw))} (not UTF-8)") from exc
    except ValueError as exc:
        at = _byte_of(text, exc)
        reason = getattr(exc, "msg", str(exc))
        raise DocevalError(f"{path}: {_broken(at, len(raw))} ({reason})") from exc
    for section in (data.get("suites") or {}).values() if isinstance(data, dict) else ():
        if isinstance(section, dict) and isinstance(section.get("results"), list):
            section["results"] = Rows.of(section["results"])
    return data


def _read_by_lines(path: Path, source: BinaryIO) -> Any:
    """A report written a row a line: each row line parsed as it comes (for its numbers, then
    let go) and kept as (offset, length); the rest, the skeleton, parsed at the end."""
    size = path.stat().st_size
    skeleton = bytearray()
    starts: list[tuple[int, int]] = []  # (skeleton byte, file byte) where each piece starts
    found: list[Rows] = []
    rows: _RowReader | None = None
    at = 0
    for line in source:
        if rows is not None and line.strip() not in (b"]", b"],"):
            rows.add(line, at)
        elif rows is not None:  # the end of a suite's rows: a token stands for them
            token = json.dumps(_ROWS_TOKEN.format(len(found))).encode()
            found.append(rows.rows())
            rows = None
            starts.append((len(skeleton), at))
            skeleton += token + line.strip().removeprefix(b"]") + b"\n"
        elif line.rstrip(b"\r\n") == RESULTS_START:
            rows = _RowReader(path)
            starts.append((len(skeleton), at))
            skeleton += RESULTS_START[:-1]
        else:
            starts.append((len(skeleton), at))
            skeleton += line
        at += len(line)
    if rows is not None:
        raise DocevalError(f"{path}: {_broken(size, size)} (inside a suite's results)")
    try:
        text = skeleton.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        where = _file_byte(exc.start, starts)
        raise DocevalError(f"{path}: {_broken(where, size)} (not UTF-8)") from exc
    except ValueError as exc:
        where = _file_byte(_byte_of(text, exc), starts)
        reason = getattr(exc, "msg", str(exc))
        raise DocevalError(f"{path}: {_broken(where, size)} ({reason})") from exc
    for section in (data.get("suites") or {}).values() if isinstance(data, dict) else ():
        results = section.get("results") if isinstance(section, dict) else None
        if isinstance(results, str) and results.startswith("@doceval-rows-"):
            section["results"] = found[int(results.strip("@").rpartition("-")[2])]
        elif isinstance(results, list):
            section["results"] = Rows.of(results)
    return data


class _RowReader:
    """The rows of one suite as a report holds them, a line each, read into a `Rows`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.table = RowTable()
        self.lines = RowLines([path])

    def add(self, line: bytes, at: int) -> None:
        body = line.rstrip(b"\r\n").removesuffix(b",")
        indent = len(body) - len(body.lstrip(b" "))
        body = body[indent:]
        try:
            row = decode_row(body)
        except ValueError as exc:
            size = self.path.stat().st_size
            # A row cut short by the end of the file: the file was truncated there.
            where = size if not line.endswith(b"\n") else at + indent + _byte_of(body, exc)
            reason = getattr(exc, "msg", str(exc))
            raise DocevalError(f"{self.path}: {_broken(where, size)} (a row: {reason})") from exc
        if not isinstance(row, dict):
            raise DocevalError(f"{self.path}: at byte {at + indent}: a row is not a JSON object")
        self.table.add(row)
        self.lines.add(0, at + indent, len(body))

    def rows(self) -> Rows:
        return Rows(self.table, lines=self.lines)


def _byte_of(text: str | bytes, error: ValueError) -> int:
    """The byte offset in `text`'s UTF-8 where `error` (a JSONDecodeError) found it broken."""
    decoded = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    position = getattr(error, "pos", len(decoded))
    return len(decoded[:position].encode("utf-8"))


def _file_byte(skeleton_byte: int, starts: list[tuple[int, int]]) -> int:
    """The file's byte of a byte of the skeleton (the report less its rows)."""
    piece = bisect.bisect_right(starts, (skeleton_byte, float("inf"))) - 1
    if piece < 0:
        return skeleton_byte
    kept, at = starts[piece]
    return at + skeleton_byte - kept


def _broken(at: int, size: int) -> str:
    if at >= size:
        return f"truncated at byte {size:,} (the file ends before the report does)"
    return f"damaged at byte {at:,} of {size:,}"
