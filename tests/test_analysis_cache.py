"""A suite's analysis is read back when its rows are the last run's (`run.analysis_cache`): the
same section as computing it, in one form, and computed again when anything it is computed
from changes."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.documents.suite import DocumentsSuite
from pytest_doceval.report import analysis
from pytest_doceval.run import analysis_cache, code_digest
from pytest_doceval.run.analysis_cache import AnalysisCache
from pytest_doceval.store import Store
from tests.conftest import read_report


def _rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(12):
        for system, shift in (("a", 0.0), ("b", 0.05)):
            rows.append(
                {
                    "suite": "s",
                    "case": f"c{i:02d}",
                    "system": system,
                    "labels": {},
                    "nodeid": f"cases/s/suite.toml::c{i:02d}[{system}]",
                    "outcome": "passed",
                    "message": None,
                    "metrics": {"score": 0.5 + 0.03 * (i % 5) + shift, "odd": math.nan},
                    "counts": {},
                    "details": {},
                    "views": {},
                    "notes": [],
                    "flags": {},
                    "baseline": {"score": 0.5 + 0.03 * (i % 5)},
                    "duration": 0.01 * i,
                }
            )
    return rows


META: dict[str, Any] = {
    "kind": "documents",
    "path": "cases/s",
    "scoring_id": "x",
    "systems": ["a", "b"],
    "notes": [],
    "metrics": {"score": {"direction": "higher"}, "odd": {"direction": "lower"}},
    "gate_rules": {"case": {}, "suite": {}},
}


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a suite was analysed (not read back)."""
    calls: list[int] = []
    original = analysis.analyse_suite

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(analysis, "analyse_suite", counting)
    return calls


def test_a_section_is_read_back_for_the_same_rows_in_any_order(
    tmp_path: Path, analysed: list[int]
) -> None:
    stats = StatsConfig(resamples=300)
    store = Store(tmp_path)
    first = AnalysisCache(store).section(DocumentsSuite, META, _rows(), stats)
    store.close()  # as a run ends
    assert len(analysed) == 1
    shuffled = list(reversed(_rows()))
    for row in shuffled:
        row["duration"] = 9.0  # the one field two runs of unchanged tests differ in
    again = AnalysisCache(Store(tmp_path)).section(DocumentsSuite, META, shuffled, stats)
    assert len(analysed) == 1  # read back, in a new process's cache object
    assert _json({**again, "results": None}) == _json({**first, "results": None})
    assert [r["duration"] for r in again["results"]] == [9.0] * 24  # this run's rows


def test_the_section_read_back_is_the_section_computed(tmp_path: Path, analysed: list[int]) -> None:
    stats = StatsConfig(resamples=300)
    fresh = analysis.analyse_suite(META, _rows(), stats)
    cache = AnalysisCache(Store(tmp_path))
    computed = cache.section(DocumentsSuite, META, _rows(), stats)
    read = cache.section(DocumentsSuite, META, _rows(), stats)
    assert len(analysed) == 2  # `fresh` and `computed`; `read` was read back
    # One form: its JSON, key order kept (NaN included), whether computed or read back.
    assert _json(computed) == _json(read) == _json(fresh)
    assert list(computed) == list(fresh)
    assert _json(computed) == _json(json.loads(json.dumps(computed)))


@pytest.mark.parametrize(
    "change",
    ["metric", "baseline", "meta", "stats", "code", "unused"],
)
def test_anything_a_section_is_computed_from_makes_it_computed_again(
    tmp_path: Path, analysed: list[int], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    stats = StatsConfig(resamples=300)
    cache = AnalysisCache(Store(tmp_path))
    cache.section(DocumentsSuite, META, _rows(), stats)
    rows, meta, unused = _rows(), dict(META), []
    if change == "metric":
        rows[3]["metrics"]["score"] += 1e-12
    elif change == "baseline":
        rows[3]["baseline"] = {"score": 0.1}
    elif change == "meta":
        meta["notes"] = ["a new note"]
    elif change == "stats":
        stats = StatsConfig(resamples=301)
    elif change == "code":
        monkeypatch.setattr(analysis_cache, "analysis_code_digest", lambda kind: "edited")
    elif change == "unused":
        unused = ["gone[a]"]
    cache.section(DocumentsSuite, meta, rows, stats, unused_baseline=unused)
    assert len(analysed) == 2


def test_without_a_store_every_section_is_computed(tmp_path: Path, analysed: list[int]) -> None:
    cache = AnalysisCache(Store(None, "off"))
    for _ in range(2):
        section = cache.section(DocumentsSuite, META, _rows(), StatsConfig(resamples=300))
    assert len(analysed) == 2
    assert _json(section) == _json(json.loads(json.dumps(section)))


def test_the_analysis_code_is_the_scoring_code_and_the_reports() -> None:
    package = Path(code_digest.__file__).resolve().parents[1]
    analysed = code_digest.scoring_code_files(None, left_out=code_digest.DISPLAY_ROOMS)
    files = {p.relative_to(package).as_posix() for p in analysed}
    assert "report/analysis.py" in files and "stats/bootstrap.py" in files
    assert not any(f.startswith(("html/", "cli/")) for f in files)


def test_a_warm_run_reads_its_analysis_back_and_reports_the_same(
    pytester: pytest.Pytester,
    demo_suite: Callable[..., Path],
    analysed: list[int],
) -> None:
    demo_suite()
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=6)
    cold = pytester.runpytest("--doceval", "--doceval-json=cold.json")
    calls = len(analysed)
    warm = pytester.runpytest("--doceval", "--doceval-json=warm.json")
    assert len(analysed) == calls  # nothing analysed again
    a, b = (read_report(pytester.path / f"{n}.json") for n in ("cold", "warm"))
    for report in (a, b):
        for row in report["suites"]["demo"]["results"]:
            row.pop("duration")
    assert a["suites"] == b["suites"]
    assert _doceval_lines(warm.outlines) == _doceval_lines(cold.outlines)
    assert any("demo" in line for line in _doceval_lines(cold.outlines))


def _doceval_lines(lines: list[str]) -> list[str]:
    """The terminal's doceval section, less the engine's line (the cold run scores afresh,
    the warm one finds its scores stored) and from the line naming the report file on."""
    start = next(i for i, line in enumerate(lines) if " doceval " in line and "=" in line)
    section = lines[start + 1 :]
    end = next((i for i, line in enumerate(section) if line.startswith("doceval report")), None)
    return [line for line in section[:end] if not line.startswith("doceval: ")]


def _json(section: Any) -> str:
    return json.dumps(section, sort_keys=False, default=str)
