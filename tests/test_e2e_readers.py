"""What people read (issue 18), as a user runs it: bounds under --doceval-update, damaged PDFs,
where reports go, a case folder given as a path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import read_report, write_suite

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


REPO = Path(__file__).resolve().parents[1]


def _damaged_suite(root: Path) -> Path:
    """Two truncated copies of real PDFs: a text paper cut to a stub MuPDF rebuilds as one blank
    page, and a small text PDF cut short enough to need a repair yet keep its text."""
    cases = {
        name: {"truth": "Ferry\n\nThe ferry leaves.", "pdf": "Ferry\nThe ferry leaves."}
        for name in ("stub", "clipped", "sound")
    }
    suite = write_suite(root, "damaged", cases, systems=["pymupdf"], gates="")
    real = (REPO / "cases" / "korean" / "allotment-water-ko" / "document.pdf").read_bytes()
    (suite / "stub" / "document.pdf").write_bytes(real[: len(real) // 20])
    clipped = suite / "clipped" / "document.pdf"
    data = clipped.read_bytes()
    clipped.write_bytes(data[: int(len(data) * 0.9)])
    return suite


def test_damaged_pdf_without_text_errors_and_with_text_is_scored_with_a_note(
    pytester: pytest.Pytester,
) -> None:
    _damaged_suite(pytester.path)
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "damaged PDF: MuPDF had to repair it (*startxref*found no text*(cases/damaged/stub/*",
            "*note on clipped[[]pymupdf]: damaged document.pdf: MuPDF had to repair it*",
        ]
    )
    results = read_report(pytester.path / "doceval-report.json")["suites"]["damaged"]["results"]
    by_case = {r["case"]: r for r in results}
    assert by_case["stub"]["outcome"] == "error" and "cer" not in by_case["stub"]["metrics"]
    assert by_case["clipped"]["metrics"]["cer"] < 0.2
    assert any("repair" in note for note in by_case["clipped"]["notes"])
    assert not any("repair" in note for note in by_case["sound"].get("notes", []))
    # Nothing damaged becomes a baseline silently: the stub stays out of it.
    pytester.runpytest("--doceval", "--doceval-update")
    baseline = (pytester.path / "baselines" / "damaged.json").read_text()
    assert "stub[pymupdf]" not in baseline and "clipped[pymupdf]" in baseline
