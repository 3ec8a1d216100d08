"""Issue 17's input defects, hit as a user would: labels put on a `CaseRef` reach the report row
(defect 1), a misspelled ``[suite]`` key is an error naming it (defect 3), an edited saved output
changes the system's fingerprint (defect 4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import WORKERS, read_report

KIND = """
from pytest_doceval import CaseRef, CaseResult, MetricSpec, Suite, suite_kind


class Echo(Suite):
    metrics = {"score": MetricSpec("higher")}
    scoring_id = "echo-v1"

    def case_refs(self):
        return [CaseRef(c, "sys", {"topic": c[0]}) for c in ("a1", "b1")]

    def evaluate(self, ref, results, ctx):
        # Labels are not copied: the row gets the ref's anyway; this one adds its own.
        return CaseResult({"score": 1.0}, labels={"seen": "y"})


@suite_kind
class Declared(Echo):
    kind = "declared"
    suite_keys = frozenset({"colour"})


@suite_kind
class Undeclared(Echo):
    kind = "undeclared"
"""


def _suite(root: Path, name: str, toml: str) -> None:
    folder = root / "cases" / name
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text(toml)


@pytest.mark.parametrize("workers", WORKERS)
def test_ref_labels_reach_the_rows_and_a_misspelled_suite_key_is_named(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makeconftest(KIND)
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    _suite(pytester.path, "good", '[suite]\nkind = "declared"\ncolour = "red"\n')
    _suite(pytester.path, "typo", '[suite]\nkind = "declared"\ncolor = "red"\n')
    _suite(pytester.path, "free", '[suite]\nkind = "undeclared"\n')
    _suite(pytester.path, "loose", '[suite]\nkind = "undeclared"\nsytems = ["a"]\n')
    result = pytester.runpytest("--doceval", *workers)
    result.assert_outcomes(passed=4, failed=2)
    # (fnmatch: ? stands for the brackets, which it would read as a character class)
    result.stdout.fnmatch_lines(
        [
            "*typo/suite.toml: unknown key(s) color (did you mean 'colour'?) in ?suite? for kind "
            "'declared'; allowed: colour, kind"
        ]
    )
    # A kind that declares no keys accepts only `kind`: a misspelled key is never a default.
    result.stdout.fnmatch_lines(
        ["*loose/suite.toml: unknown key(s) sytems in ?suite? for kind 'undeclared'; allowed: kind"]
    )
    suites = read_report(pytester.path / "doceval-report.json")["suites"]
    for name in ("good", "free"):
        labels = {r["case"]: r["labels"] for r in suites[name]["results"]}
        assert labels == {"a1": {"topic": "a", "seen": "y"}, "b1": {"topic": "b", "seen": "y"}}


def test_editing_a_saved_output_shows_in_the_baseline_diff(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    """Defect 4: a precomputed system's fingerprint carries its output's digest, so an edit
    under ``outputs/`` that keeps the numbers still shows as a new output."""
    suite = demo_suite()
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=6)
    baseline_path = next((pytester.path / "baselines").rglob("*.json"))
    before = json.loads(baseline_path.read_text())["entries"]
    output = suite / "case0" / "outputs" / "good.md"
    output.write_text(output.read_text() + "\n\n", encoding="utf-8")  # same words, new file
    result = pytester.runpytest("--doceval", "--doceval-update")
    result.assert_outcomes(passed=6)
    after = json.loads(baseline_path.read_text())["entries"]
    assert after["case0[good]"]["metrics"] == before["case0[good]"]["metrics"]
    assert after["case0[good]"]["fingerprint"] != before["case0[good]"]["fingerprint"]
    assert {k for k in after if after[k]["fingerprint"] != before[k]["fingerprint"]} == {
        "case0[good]"
    }
    assert "same numbers, new output or system" in result.stdout.str()
