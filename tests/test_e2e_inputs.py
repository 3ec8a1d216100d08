"""Issue 17's input defects, hit as a user would: labels put on a `CaseRef` reach the report row
(defect 1), a misspelled ``[suite]`` key is an error naming it (defect 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import read_report

KIND = """
from pytest_doceval import CaseRef, CaseResult, MetricSpec, Suite, suite_kind


class Echo(Suite):
    metrics = {"score": MetricSpec("higher")}
    scoring_id = "echo-v1"

    def case_refs(self):
        return [CaseRef(c, "sys", {"topic": c[0]}) for c in ("a1", "b1")]

    def evaluate(self, ref, ctx):
        # Labels are not copied: the row gets the ref's anyway; this one adds its own.
        return CaseResult(self.name, ref.case, ref.system, {"score": 1.0}, labels={"seen": "y"})


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


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_ref_labels_reach_the_rows_and_a_misspelled_suite_key_is_named(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makeconftest(KIND)
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    _suite(pytester.path, "good", '[suite]\nkind = "declared"\ncolour = "red"\n')
    _suite(pytester.path, "typo", '[suite]\nkind = "declared"\ncolor = "red"\n')
    _suite(pytester.path, "free", '[suite]\nkind = "undeclared"\nanything = 1\n')
    result = pytester.runpytest("--doceval", *workers)
    result.assert_outcomes(passed=4, failed=1)
    # (fnmatch: ? stands for the brackets, which it would read as a character class)
    result.stdout.fnmatch_lines(
        [
            "*typo/suite.toml: unknown key(s) color in ?suite? for kind 'declared'; "
            "allowed: colour, kind"
        ]
    )
    suites = read_report(pytester.path / "doceval-report.json")["suites"]
    for name in ("good", "free"):
        labels = {r["case"]: r["labels"] for r in suites[name]["results"]}
        assert labels == {"a1": {"topic": "a", "seen": "y"}, "b1": {"topic": "b", "seen": "y"}}
