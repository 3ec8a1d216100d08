"""What people read (issue 18), as a user runs it: bounds under --doceval-update, damaged PDFs,
where reports go, a case folder given as a path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import read_report

pytest_plugins = ["pytester"]


def test_update_still_fails_an_absolute_bound(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    demo_suite(gates='cer = ["+0.5pp", "<= 0.05"]\n')
    update = pytester.runpytest("--doceval", "--doceval-update")
    # `worse` misses the bound on every case; the tolerance is re-recorded, the bound is not.
    update.assert_outcomes(passed=3, failed=3)
    update.stdout.fnmatch_lines(["*cer 0.* violates bound <= 0.05 (demo/case0[[]worse[]])*"])
    baseline = read_report(pytester.path / "baselines" / "demo.json")
    assert "case0[worse]" in str(baseline)  # measured, so still recorded
    again = pytester.runpytest("--doceval")
    again.assert_outcomes(passed=3, failed=3)
