"""The README's test command skips the slow end-to-end variants and says how to run them;
``--run-slow`` (CI) and ``-m slow`` run them."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SUITE = """
import pytest

@pytest.mark.slow
def test_cold_ocr_of_many_pages():
    pass

def test_quick():
    pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    # This repository's own hooks, as tests/conftest.py declares them.
    pytester.makeconftest(
        "from tests.conftest import pytest_addoption, pytest_collection_modifyitems  # noqa\n"
    )
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\n")
    pytester.makepyfile(SUITE)
    return pytester


def test_slow_variants_are_skipped_saying_how_to_run_them(project: pytest.Pytester) -> None:
    result = project.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*a slow end-to-end variant: --run-slow (or -m slow) runs it*"])


def test_run_slow_and_marker_selection_run_them(project: pytest.Pytester) -> None:
    project.runpytest("--run-slow").assert_outcomes(passed=2)
    project.runpytest("-m", "slow").assert_outcomes(passed=1)
    project.runpytest("-m", "not slow").assert_outcomes(passed=1)


def test_every_xdist_twin_is_slow_and_its_plain_run_is_not() -> None:
    from tests.conftest import WORKERS

    plain, xdist = WORKERS
    assert plain.values == ([],) and not plain.marks
    assert xdist.values == (["-n", "2"],) and [m.name for m in xdist.marks] == ["slow"]
