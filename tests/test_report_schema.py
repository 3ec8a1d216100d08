"""The report's declared shape (`report.schema`) against real reports: a plain run, a run with
``-n 2`` and two shards merged. Every key of the JSON must be declared (or be the kind's own:
what its ``describe()`` returned, or an analysis ``analysis_keys`` lists), every declared
required key present, every value of its declared type; so the TypedDicts cannot drift from
what the report really holds."""

from __future__ import annotations

import copy
from collections.abc import Container, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.cli import main as doceval
from pytest_doceval.kinds.registry import kind_class
from pytest_doceval.report.schema import (
    Aggregate,
    Report,
    SuiteSection,
    add_kind_keys,
    kind_keys,
)
from pytest_doceval.rows import Row
from tests.conftest import read_report, write_suite
from tests.report_shape import shape_problems

pytest_plugins = ["pytester"]

WORDS = "tidal storage moves water between two basins and returns it after sunset".split()


def _cases(n: int) -> dict[str, dict[str, str]]:
    cases = {}
    for i in range(n):
        truth = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(30))
        cases[f"c{i:02d}"] = {
            "truth": f"# Tides {i}\n\n{truth}\n",
            "good": f"Tides {i}\n{truth}\n",
            "worse": f"# Tides {i}\n{truth.replace('water', 'watr')}\n",
        }
    return cases


@pytest.fixture
def described(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The keys the documents kind's ``describe()`` returned during the runs (in process: the
    controller calls it)."""
    keys: set[str] = set()
    cls = kind_class("documents")
    original = cls.describe

    def describe(self: Any) -> dict[str, object]:
        found = original(self)
        keys.update(found)
        return found

    monkeypatch.setattr(cls, "describe", describe)
    return keys


def _allowed(kind_keys_seen: set[str]) -> Any:
    def extra(shape: type, value: Mapping[str, object]) -> Container[str]:
        if shape is SuiteSection:
            listed = value.get("analysis_keys")
            return {*(map(str, listed) if isinstance(listed, list) else ()), *kind_keys_seen}
        return ()

    return extra


def _check(report: dict[str, Any], described: set[str]) -> None:
    assert shape_problems(report, Report, extra=_allowed(described)) == []
    for section in report["suites"].values():
        assert set(kind_keys(section)) == described  # nothing else hides as the kind's
        assert section["analysis_keys"]  # the analyses were there to check
        assert all(k in section for k in section["analysis_keys"])


def _project(pytester: pytest.Pytester) -> Path:
    suite = write_suite(
        pytester.path, "tides", _cases(12), systems=["good", "worse"], gates='cer = "+5pp"\n'
    )
    with (suite / "suite.toml").open("a") as toml:
        toml.write('\n[gates.suite]\ncer = "significant:+0.5pp"\n')
    # A baseline first, so the reports hold baseline deltas and evaluated suite gates.
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=24)
    return suite


def test_real_reports_hold_exactly_the_declared_shape(
    pytester: pytest.Pytester, described: set[str]
) -> None:
    _project(pytester)
    reports: dict[str, dict[str, Any]] = {}
    pytester.runpytest("--doceval").assert_outcomes(passed=24)
    reports["plain"] = read_report(pytester.path / "doceval-report.json")
    pytester.runpytest("--doceval", "-n", "2").assert_outcomes(passed=24)
    reports["-n 2"] = read_report(pytester.path / "doceval-report.json")
    passed = 0
    for k in (1, 2):  # balanced by the whole run's durations: not always 12 and 12
        json_path = f"shard-{k}.json"
        shard = pytester.runpytest(
            "--doceval", "--doceval-shard", f"{k}/2", "--doceval-json", json_path
        )
        passed += shard.parseoutcomes()["passed"]
        reports[f"shard {k}"] = read_report(pytester.path / json_path)
    assert passed == 24
    merged = pytester.path / "merged.json"
    assert doceval(["merge", "shard-1.json", "shard-2.json", "-o", str(merged)]) == 0
    reports["merged"] = read_report(merged)

    assert described == {"language", "normalization", "teds"}
    for name, report in reports.items():
        section = report["suites"]["tides"]
        assert section["baseline_deltas"] and section["gates"], name
        assert section["gates"][0]["evaluated"], name
        _check(report, described)
    # The merged report is the plain run's, computed from the same rows.
    plain, whole = reports["plain"], reports["merged"]
    assert plain["suites"]["tides"]["aggregates"] == whole["suites"]["tides"]["aggregates"]


def test_a_key_the_schema_does_not_declare_is_found_wherever_it_is(
    pytester: pytest.Pytester, described: set[str]
) -> None:
    _project(pytester)
    pytester.runpytest("--doceval").assert_outcomes(passed=24)
    report = read_report(pytester.path / "doceval-report.json")
    _check(report, described)
    extra = _allowed(described)

    def added(path: list[str | int], key: str = "surprise") -> list[str]:
        changed = copy.deepcopy(report)
        target: Any = changed
        for step in path:
            target = target[step]
        target[key] = 1
        return shape_problems(changed, Report, extra=extra)

    suite = ["suites", "tides"]
    places: list[list[str | int]] = [
        [],
        ["environment"],
        ["config"],
        suite,
        [*suite, "results", 0],
        [*suite, "metrics", "cer"],
        [*suite, "gate_rules"],
        [*suite, "aggregates", "good", "cer"],
        [*suite, "baseline_deltas", 0],
        [*suite, "gates", 0],
    ]
    for path in places:
        problems = added(path)
        assert len(problems) == 1 and "'surprise' is not declared" in problems[0], path

    # A required key missing, a value of another type: found too.
    broken = copy.deepcopy(report)
    del broken["suites"]["tides"]["aggregates"]["good"]["cer"]["n"]
    broken["suites"]["tides"]["results"][0]["metrics"]["cer"] = "0.1"
    problems = shape_problems(broken, Report, extra=extra)
    assert any("no 'n' (Aggregate)" in p for p in problems)
    assert any("results[0].metrics.cer" in p for p in problems)
    assert len(problems) == 2


def test_the_checker_reads_the_typed_dicts_as_mypy_does() -> None:
    entry = {"mean": 0.5, "ci_low": None, "ci_high": 0.7, "n": 3, "method": "t", "small_n": True}
    assert shape_problems(entry, Aggregate) == []
    assert shape_problems({**entry, "n": True}, Aggregate) != []  # a bool is no count
    assert shape_problems({**entry, "flagged": {"why": 2}}, Aggregate) == []
    assert shape_problems({**entry, "flagged": {"why": "2"}}, Aggregate) != []
    row: dict[str, Any] = {"suite": "s", "case": "c", "system": "x"}
    assert {p.split(": ")[1] for p in shape_problems(row, Row)} >= {"no 'metrics' (Row)"}


def test_a_kind_key_cannot_replace_a_declared_one() -> None:
    from pytest_doceval.errors import DocevalError
    from pytest_doceval.report.schema import SuiteMeta

    meta: SuiteMeta = {"kind": "k", "path": "cases/s"}
    add_kind_keys(meta, {"language": "en"})
    assert meta == {"kind": "k", "path": "cases/s", "language": "en"}
    with pytest.raises(DocevalError, match="reports results, which the report itself uses"):
        add_kind_keys(meta, {"results": []})


def test_a_user_kind_whose_description_clashes_gets_a_suite_error_not_a_crash(
    pytester: pytest.Pytester,
) -> None:
    """A kind whose ``describe()`` names a key the report uses (here ``results``) would have
    replaced the suite's rows; the suite reports the clash as its error and fails the run."""
    from tests.test_e2e_kinds import example_kind, write_guesses

    pytester.makeconftest(
        example_kind()
        + "\n\n@suite_kind\nclass Clashing(GuessSuite):\n    kind = 'clashing'\n\n"
        + "    def describe(self):\n        return {'language': 'en', 'results': 'mine'}\n"
    )
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    suite = write_guesses(pytester.path)
    (suite / "suite.toml").write_text('[suite]\nkind = "clashing"\n')
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(passed=24)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAILED guesses: suite kind 'clashing' reports results*"])
    section = read_report(pytester.path / "doceval-report.json")["suites"]["guesses"]
    assert "reports results, which the report itself uses" in section["error"]
    assert len(section["results"]) == 24 and "language" not in section
