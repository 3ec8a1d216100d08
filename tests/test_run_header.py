"""pytest's header under ``--doceval`` names the suites that run, never ``testpaths``."""

from __future__ import annotations

import pytest

from tests.conftest import GOOD, TRUTH, write_suite

pytest_plugins = ["pytester"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n[tool.doceval]\nsuites = ["cases"]\n'
    )
    (pytester.path / "tests").mkdir()
    write_suite(
        pytester.path, "tides", {"c0": {"truth": TRUTH, "sys": GOOD}}, systems=["sys"], gates=""
    )
    return pytester


def test_a_doceval_run_names_its_suites_not_testpaths(project: pytest.Pytester) -> None:
    result = project.runpytest("--doceval")
    result.assert_outcomes(passed=1)
    header = result.stdout.str().split("collected")[0]
    assert "testpaths:" not in header, header
    result.stdout.fnmatch_lines(["doceval suites: cases ([tool.doceval] suites)"])


def test_suites_given_as_paths_are_named_as_typed(project: pytest.Pytester) -> None:
    result = project.runpytest("--doceval", "cases/tides")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["doceval suites: cases/tides"])


def test_a_plain_run_keeps_pytests_header(project: pytest.Pytester) -> None:
    (project.path / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    result = project.runpytest()
    result.stdout.fnmatch_lines(["testpaths: tests"])
    assert "doceval suites" not in result.stdout.str()
