"""A big run's failed tests in pytest's terminal (`run/failure_sections.py`): past
`LONG_SECTIONS`, ``--tb=auto`` becomes ``--tb=line`` and the run says so; a style the user gave
is kept."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_doceval.run import failure_sections
from pytest_doceval.run.failure_sections import one_line_failures


def config(tbstyle: str, failed: int, passed: int) -> Any:
    reporter = SimpleNamespace(stats={"failed": [object()] * failed, "": [object()] * passed})
    option = SimpleNamespace(tbstyle=tbstyle)
    return SimpleNamespace(
        option=option,
        getoption=lambda name, default=None: getattr(option, name, default),
        pluginmanager=SimpleNamespace(get_plugin=lambda name: reporter),
    )


def test_a_run_whose_sections_would_take_minutes_shows_a_line_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(failure_sections, "LONG_SECTIONS", 1_000)
    big = config("auto", failed=20, passed=100)  # 20 x 120 reports > 1,000
    line = one_line_failures(big)
    assert big.option.tbstyle == "line"
    assert line == (
        "doceval: 20 failed tests are shown a line each (--tb=line): pytest's sections "
        "would scan all 120 reports for each; --tb=short shows them"
    )


def test_a_small_run_or_a_style_given_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(failure_sections, "LONG_SECTIONS", 1_000)
    small = config("auto", failed=5, passed=100)  # 5 x 105 reports
    assert one_line_failures(small) is None and small.option.tbstyle == "auto"
    chosen = config("short", failed=20, passed=100)
    assert one_line_failures(chosen) is None and chosen.option.tbstyle == "short"


def test_the_default_bound_leaves_ordinary_runs_alone() -> None:
    """The shipped suites fail a few tests of a few hundred; 1,000 failures of 10,000 tests
    still get pytest's sections."""
    assert one_line_failures(config("auto", failed=1_000, passed=9_000)) is None
    assert one_line_failures(config("auto", failed=16_703, passed=400_000)) is not None
