"""``--doceval-limit N``: a smoke run of the first N cases of each suite, every system of a
kept case; the report says it was limited, and a limited run never updates a baseline."""

from __future__ import annotations

import pytest

from pytest_doceval.run.limit import check_limit, first_cases
from tests.conftest import GOOD, TRUTH, WORKERS, read_report, write_suite

pytest_plugins = ["pytester"]


def test_the_first_cases_of_each_suite_with_all_their_systems() -> None:
    items = [(s, c, sys) for s in ("a", "b") for c in ("c1", "c2", "c3") for sys in ("x", "y")]
    items.insert(2, ("broken", "", "*"))  # a suite that did not load: kept

    def case_of(item: tuple[str, str, str]) -> tuple[str, str]:
        return item[0], item[1]

    kept, dropped = first_cases(items, case_of, 2)
    assert [i for i in kept if i[0] != "broken"] == [
        (s, c, sys) for s in ("a", "b") for c in ("c1", "c2") for sys in ("x", "y")
    ]
    assert ("broken", "", "*") in kept
    assert dropped == [(s, "c3", sys) for s in ("a", "b") for sys in ("x", "y")]


def test_a_limit_is_a_positive_number_and_never_updates() -> None:
    assert check_limit(None, update=True) is None and check_limit(3, update=False) == 3
    with pytest.raises(ValueError, match="N >= 1"):
        check_limit(0, update=False)
    with pytest.raises(ValueError, match="never updates a baseline"):
        check_limit(2, update=True)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    cases = {f"c{i}": {"truth": TRUTH, "good": GOOD, "copy": TRUTH} for i in range(5)}
    write_suite(pytester.path, "tides", cases, systems=["good", "copy"], gates='cer = "+0"\n')
    write_suite(pytester.path, "ebbs", {"e0": {"truth": TRUTH, "good": GOOD}}, systems=["good"])
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=11)
    return pytester


@pytest.mark.parametrize("workers", WORKERS)
def test_a_limited_run_says_so_and_keeps_the_baselines(
    project: pytest.Pytester, workers: list[str]
) -> None:
    baselines = {p.name: p.read_text() for p in (project.path / "baselines").iterdir()}
    result = project.runpytest("--doceval", "--doceval-limit", "2", *workers)
    result.assert_outcomes(passed=5)  # tides: c0, c1 x two systems; ebbs: its one case
    result.stdout.fnmatch_lines(["LIMITED: the first 2 case(s) of each suite (--doceval-limit 2)*"])
    report = read_report(project.path / "doceval-report.json")
    assert report["limit"] == 2
    rows = report["suites"]["tides"]["results"]
    assert sorted((r["case"], r["system"]) for r in rows) == [
        (c, s) for c in ("c0", "c1") for s in ("copy", "good")
    ]
    html = (project.path / "doceval-report.html").read_text(encoding="utf-8")
    assert "LIMITED: the first 2 case(s) of each suite" in html
    assert {p.name: p.read_text() for p in (project.path / "baselines").iterdir()} == baselines


def test_a_limited_update_is_refused_and_the_limit_needs_doceval(project: pytest.Pytester) -> None:
    result = project.runpytest("--doceval", "--doceval-limit", "2", "--doceval-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--doceval-limit runs part of each suite and never updates*"])
    result = project.runpytest("--doceval-limit", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--doceval-limit only applies to an evaluation run*"])
    assert project.runpytest("--doceval", "--doceval-limit", "0").ret == pytest.ExitCode.USAGE_ERROR


def test_the_limit_goes_first_then_k(project: pytest.Pytester) -> None:
    result = project.runpytest("--doceval", "--doceval-limit", "1", "-k", "copy")
    result.assert_outcomes(passed=1)  # tides' c0, its copy system only
    rows = read_report(project.path / "doceval-report.json")["suites"]["tides"]["results"]
    assert [(r["case"], r["system"]) for r in rows] == [("c0", "copy")]
