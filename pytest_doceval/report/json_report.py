"""The ``doceval-report/1`` JSON report: what a run measured, in a versioned schema.

Top level: ``schema``, ``created``, ``environment``, ``config`` (bootstrap settings) and
``shard``, ``interrupted`` and ``suites.<name>`` -- each suite's meta (kind, path, scoring id,
systems, metric specs, gate rules, notes) plus `analysis.analyse_suite`'s results, aggregates,
baseline deltas, gates and the kind's analyses. `schema` declares it key by key.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, cast

from pytest_doceval.atomic import write_text_atomic
from pytest_doceval.errors import DocevalError
from pytest_doceval.report.schema import Environment, Report, StatsSettings, SuiteSection
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
    """Written atomically; NaN and infinities (a CI of one case) become null, since bare NaN
    is not JSON for most parsers. Keys keep their order: a suite's metrics are listed in the
    order its kind declares them, which is the order reports show them in."""
    return write_text_atomic(path, report_text(report) + "\n")


def report_text(report: Mapping[str, Any]) -> str:
    """The report as JSON text (of its `plain` form): indented, with each row of a suite's
    ``results`` on one line.

    Indenting every row's nested metrics made the JSON a few hundred lines per row, and
    ``json.dumps`` with ``indent`` runs its pure-Python encoder: most of the time of writing a
    big suite's report. A row a line is still readable and diffable, and written by the C
    encoder. Rows are made plain one at a time, as they are encoded: a plain copy of the whole
    report first was hundreds of MB more at the peak of a 70,000-row run."""
    suites: dict[str, Any] = {}
    rows: dict[str, list[Any]] = {}
    for name, section in report.get("suites", {}).items():
        if isinstance(section, Mapping) and isinstance(section.get("results"), list):
            token = f"@doceval-results-{len(rows)}@"
            rows[json.dumps(token)] = section["results"]
            section = {**section, "results": token}
        suites[name] = section
    skeleton = plain({**report, "suites": suites})
    text = json.dumps(skeleton, indent=2, ensure_ascii=False, allow_nan=False)
    encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
    parts = [text]
    for token, results in rows.items():
        head, found, tail = parts[-1].partition(token)
        if not found or token in tail:  # the token also occurs in the report's own text
            return json.dumps(plain(report), indent=2, ensure_ascii=False, allow_nan=False)
        lines = ",\n".join(f"      {encode(plain(row))}" for row in results)
        parts[-1:] = [head, f"[\n{lines}\n    ]" if results else "[]", tail]
    return "".join(parts)


def load_report(path: Path) -> Report:
    """A report from disk; a clear error for a missing file, bad JSON or another schema.

    The one place JSON becomes a `Report` unchecked below its top level (the cast): checking
    every row of a big report on each read would cost more than the read, and a report of
    this schema is written by `build_report`, whose types mypy checks."""
    if not path.is_file():
        raise DocevalError(f"{path}: no such report")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DocevalError(f"{path}: not a JSON report ({exc})") from exc
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != REPORT_SCHEMA:
        raise DocevalError(f"{path}: report schema {schema!r} is not {REPORT_SCHEMA!r}")
    if not isinstance(data.get("suites"), dict):
        raise DocevalError(f"{path}: report has no 'suites' object")
    return cast(Report, data)
