"""Paths in what a run shows and writes are the project's, never the machine's: messages, hints
and reports attached to a pull request must not carry a CI runner's absolute folders; node ids
keep the suite's folder however pytest was started."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]


def ours(result: pytest.RunResult) -> str:
    """The run's output but pytest's own header (its ``rootdir:`` line)."""
    return "\n".join(
        line for line in result.stdout.lines if not line.startswith(("rootdir:", "cachedir:"))
    )


def test_a_suite_error_names_its_file_relative_to_the_project(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path, "tides", {"c00": {"truth": "a b", "sys": "a b"}}, systems=["sys"])
    (pytester.path / "baselines").mkdir()
    (pytester.path / "baselines" / "tides.json").write_text("{not json", encoding="utf-8")
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(errors=1)
    out = ours(result)
    assert "unreadable baseline" in out and "baselines/tides.json" in out, out
    machine = str(pytester.path)
    assert machine not in out
    report = (pytester.path / "doceval-report.json").read_text(encoding="utf-8")
    assert "baselines/tides.json: unreadable baseline" in report
    assert machine not in report
    assert machine not in (pytester.path / "doceval-report.html").read_text(encoding="utf-8")


def test_a_case_folder_hint_names_the_suite_as_typed(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path, "tides", {"c00": {"truth": "a b", "sys": "a b"}}, systems=["sys"])
    result = pytester.runpytest("--doceval", "cases/tides/c00")
    result.stdout.fnmatch_lines(
        [
            "*hint: cases/tides/c00 is a case folder of suite cases/tides; *"
            "pytest --doceval cases/tides -k c00*"
        ]
    )
    assert str(pytester.path) not in ours(result)


def test_node_ids_keep_the_suites_folder_when_run_from_another_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = pytester.path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.doceval]\nsuites = ["cases"]\n')
    write_suite(
        project, "tides", {"c00": {"truth": "a b", "sys": "a b"}}, systems=["sys"], gates=""
    )
    here = pytester.path / "elsewhere"
    here.mkdir()
    # A project of its own: pytest's rootdir is here, and its node id of the suite is
    # ``suite.toml::c00[sys]``.
    (here / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = ""\n')
    monkeypatch.chdir(here)
    result = pytester.runpytest("--doceval", str(Path("..") / "proj" / "cases" / "tides"))
    result.assert_outcomes(passed=1)
    rows = read_report(project / "doceval-report.json")["suites"]["tides"]["results"]
    assert [row["nodeid"] for row in rows] == ["cases/tides/suite.toml::c00[sys]"]
