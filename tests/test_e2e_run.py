"""The plugin as a user runs it: pytester end-to-end runs of `pytest --doceval`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_doceval.kinds.documents.suite import SCORING_REVISION
from tests.conftest import WORKERS, read_report

pytest_plugins = ["pytester"]


def test_inert_without_doceval(pytester: pytest.Pytester, demo_suite: Callable[..., Path]) -> None:
    demo_suite()
    result = pytester.runpytest("cases")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert not (pytester.path / "doceval-report.json").exists()


def test_missing_baseline_fails_then_update_then_pass(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    demo_suite()
    first = pytester.runpytest("--doceval")
    first.assert_outcomes(failed=6)
    first.stdout.fnmatch_lines(["*cer: no baseline for demo/case0[[]good[]]*--doceval-update*"])

    update = pytester.runpytest("--doceval", "--doceval-update")
    update.assert_outcomes(passed=6)
    update.stdout.fnmatch_lines(["*demo: baseline baselines/demo.json updated (6 added)*"])
    baseline = (pytester.path / "baselines" / "demo.json").read_text()
    assert (
        f'"scoring_id": "fair-v1@r{SCORING_REVISION}"' in baseline and '"case0[good]"' in baseline
    )

    again = pytester.runpytest("--doceval")
    again.assert_outcomes(passed=6)
    unchanged = pytester.runpytest("--doceval", "--doceval-update")
    unchanged.stdout.fnmatch_lines(["*demo: baseline baselines/demo.json unchanged*"])


def test_one_case_is_accepted_with_k_and_the_others_keep_their_entries(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    """The README's per-case accept: `--doceval-update -k` records today's numbers of the
    selected tests only; every other entry stays as it was, and still gates."""
    suite = demo_suite()
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=6)
    baseline = pytester.path / "baselines" / "demo.json"
    before = json.loads(baseline.read_text())["entries"]
    for case in ("case0", "case1"):  # both regress
        path = suite / case / "outputs" / "good.md"
        path.write_text(path.read_text().replace("storage", "stroage"))
    accept = pytester.runpytest("--doceval", "--doceval-update", "-k", "case0 and good")
    accept.assert_outcomes(passed=1)
    accept.stdout.fnmatch_lines(
        [
            "*demo: baseline baselines/demo.json updated (1 changed)*",
            "*changed case0[[]good[]]: *cer 0.0000->*",
        ]
    )
    after = json.loads(baseline.read_text())["entries"]
    assert after["case0[good]"]["metrics"] != before["case0[good]"]["metrics"]
    assert {k: v for k, v in after.items() if k != "case0[good]"} == {
        k: v for k, v in before.items() if k != "case0[good]"
    }
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(passed=5, failed=1)  # case1 is still a regression
    result.stdout.fnmatch_lines(["FAILED *case1[[]good[]]*cer*"])


def test_regression_message_names_metric_value_baseline_and_case(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    suite = demo_suite()
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=6)
    worse = suite / "case1" / "outputs" / "worse.md"
    worse.write_text(worse.read_text().replace("pumps", "pmps"))
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*cer 0.* > baseline 0.* + 0.5pp (demo/case1[[]worse[]])*"])
    report = read_report(pytester.path / "doceval-report.json")
    failed = [r for r in report["suites"]["demo"]["results"] if r["outcome"] == "failed"]
    assert [(r["case"], r["system"]) for r in failed] == [("case1", "worse")]
    assert "0.5pp" in failed[0]["message"]


def test_improvement_within_tolerance_passes(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    suite = demo_suite()
    pytester.runpytest("--doceval", "--doceval-update")
    worse = suite / "case1" / "outputs" / "worse.md"
    worse.write_text(worse.read_text().replace("watr", "water"))
    pytester.runpytest("--doceval").assert_outcomes(passed=6)


def test_unused_baseline_entry_is_listed_and_removed_on_update(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    suite = demo_suite()
    pytester.runpytest("--doceval", "--doceval-update")
    import shutil

    shutil.rmtree(suite / "case2")
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*unused baseline entries*case2[[]good[]], case2[[]worse[]]*"])
    report = read_report(pytester.path / "doceval-report.json")
    assert report["suites"]["demo"]["unused_baseline"] == ["case2[good]", "case2[worse]"]
    update = pytester.runpytest("--doceval", "--doceval-update")
    update.stdout.fnmatch_lines(["*removed case2[[]good[]]*"])
    assert "case2" not in (pytester.path / "baselines" / "demo.json").read_text()


def test_deselected_items_keep_their_baseline_entries(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    demo_suite()
    pytester.runpytest("--doceval", "--doceval-update")
    result = pytester.runpytest("--doceval", "--doceval-update", "-k", "good")
    result.assert_outcomes(passed=3)
    assert "case0[worse]" in (pytester.path / "baselines" / "demo.json").read_text()


def test_ids_and_k_selection(pytester: pytest.Pytester, demo_suite: Callable[..., Path]) -> None:
    demo_suite()
    result = pytester.runpytest("--doceval", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "cases/demo/suite.toml::case0[[]good[]]",
            "cases/demo/suite.toml::case0[[]worse[]]",
            "cases/demo/suite.toml::case1[[]good[]]",
        ]
    )
    selected = pytester.runpytest("--doceval", "--collect-only", "-q", "-k", "worse and not case0")
    selected.stdout.fnmatch_lines(
        ["*case1[[]worse[]]", "*case2[[]worse[]]", "*2/6 tests collected*"]
    )


def test_json_report_contract(pytester: pytest.Pytester, demo_suite: Callable[..., Path]) -> None:
    demo_suite()
    pytester.runpytest("--doceval", "--doceval-update", "--doceval-json", "out/r.json")
    report = read_report(pytester.path / "out" / "r.json")
    assert report["schema"] == "doceval-report/1"
    suite = report["suites"]["demo"]
    assert suite["kind"] == "documents" and suite["scoring_id"] == f"fair-v1@r{SCORING_REVISION}"
    row = suite["results"][0]
    assert {"case", "system", "outcome", "metrics", "counts"} <= set(row)
    assert row["outcome"] == "passed"
    for metric in ("cer", "wer", "body_cer", "cer_raw", "structure_f1", "structure_precision"):
        assert isinstance(row["metrics"][metric], float)
    assert set(row["counts"]["cer"]) == {
        "hits",
        "substitutions",
        "deletions",
        "insertions",
        "reference_length",
    }
    edit_keys = {"hits", "substitutions", "deletions", "insertions", "reference_length"}
    assert set(row["counts"]) == {"cer", "ned", "wer", "body_cer", "cer_raw"}
    assert all(set(c) == edit_keys for c in row["counts"].values())
    assert set(row["details"]["structure_counts"]["all"]) == {"tp", "fp", "fn"}
    agg = suite["aggregates"]["worse"]["cer"]
    assert set(agg) >= {"mean", "ci_low", "ci_high", "n"} and agg["n"] == 3
    assert agg["ci_low"] <= agg["mean"] <= agg["ci_high"]
    cer_values = [r["metrics"]["cer"] for r in suite["results"] if r["system"] == "worse"]
    assert agg["mean"] == pytest.approx(sum(cer_values) / 3)
    counts = [r["counts"]["cer"] for r in suite["results"] if r["system"] == "worse"]
    edits = sum(c["substitutions"] + c["deletions"] + c["insertions"] for c in counts)
    assert agg["corpus"] == pytest.approx(edits / sum(c["reference_length"] for c in counts))


@pytest.mark.parametrize("workers", WORKERS)
def test_metrics_are_junit_properties(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path], workers: list[str]
) -> None:
    """Each test's metrics are properties of its test case, once (the teardown report
    carries them, also across xdist)."""
    demo_suite()
    pytester.runpytest_subprocess("--doceval", "--doceval-update", "--junitxml=junit.xml", *workers)
    xml = (pytester.path / "junit.xml").read_text()
    assert xml.count("<testcase ") == 6
    assert xml.count('<property name="cer" value="') == 6
    assert xml.count('<property name="structure_f1" value="') == 6


@pytest.mark.slow
def test_xdist_gives_the_same_report(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    demo_suite()
    pytester.runpytest("--doceval", "--doceval-update")
    plain = pytester.runpytest_subprocess("--doceval", "--doceval-json", "plain.json")
    plain.assert_outcomes(passed=6)
    par = pytester.runpytest_subprocess("--doceval", "-n", "2", "--doceval-json", "par.json")
    par.assert_outcomes(passed=6)
    a = read_report(pytester.path / "plain.json")["suites"]["demo"]
    b = read_report(pytester.path / "par.json")["suites"]["demo"]
    for rows in (a["results"], b["results"]):
        for row in rows:
            row.pop("duration", None)
    for key in ("results", "aggregates", "comparisons", "baseline_deltas", "gates"):
        assert a[key] == b[key], key


@pytest.mark.slow
def test_an_xdist_worker_sends_reports_that_read_as_the_plain_runs(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    """A worker sends each test's report as one JSON text (plugin.py): what the controller
    rebuilds from it -- outcome, failure text, metrics as properties, captured sections --
    is what a plain run reports, as junitxml writes it."""
    suite = demo_suite()
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=6)
    worse = suite / "case1" / "outputs" / "worse.md"
    worse.write_text(worse.read_text().replace("pumps", "pmps"))  # one regression
    for name, workers in (("plain", []), ("xdist", ["-n", "2"])):
        result = pytester.runpytest_subprocess(
            "--doceval", f"--junitxml={name}.xml", "-o", "junit_logging=all", *workers
        )
        result.assert_outcomes(passed=5, failed=1)
    plain, xdist = (_junit_cases(pytester.path / f"{name}.xml") for name in ("plain", "xdist"))
    assert xdist == plain
    assert sum("failure" in case for case in plain.values()) == 1


def _junit_cases(path: Path) -> dict[str, dict[str, object]]:
    """Each test case of a junit XML file: its properties, failure message and text, and
    captured output, without times (and the hostname) that differ between runs."""
    import xml.etree.ElementTree as ET

    cases: dict[str, dict[str, object]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        found: dict[str, object] = {
            "properties": [(p.get("name"), p.get("value")) for p in case.iter("property")],
        }
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                found[child.tag] = (child.get("message"), child.text)
            elif child.tag in ("system-out", "system-err"):
                found[child.tag] = child.text
        cases[f"{case.get('classname')}::{case.get('name')}"] = found
    return cases


def test_normalization_change_rescores_without_reparsing(
    pytester: pytest.Pytester,
) -> None:
    from tests.conftest import write_suite

    pytester.makeconftest(
        """
import pytest_doceval
CALLS = []

@pytest_doceval.register_parser("counting")
class Counting:
    name = "counting"
    def __init__(self, settings, env): pass
    def fingerprint(self): return {"system": "counting", "version": "1"}
    def parse(self, pdf):
        marker = pdf.parent.parent.parent / "calls.txt"
        with open(marker, "a") as f:
            f.write("x")
        return "Tides moved water"
"""
    )
    suite = write_suite(
        pytester.path,
        "docs",
        {"c": {"truth": "# Tides moved water\n", "pdf": "Tides moved water"}},
        systems=["counting"],
        gates="",
    )
    pytester.runpytest("--doceval").assert_outcomes(passed=1)
    pytester.runpytest("--doceval").assert_outcomes(passed=1)
    toml = suite / "suite.toml"
    toml.write_text(
        toml.read_text().replace(
            'systems = ["counting"]', 'systems = ["counting"]\nnormalization = "plain-v1"'
        )
    )
    pytester.runpytest("--doceval").assert_outcomes(passed=1)
    assert (pytester.path / "cases" / "calls.txt").read_text() == "x"
    report = read_report(pytester.path / "doceval-report.json")
    assert report["suites"]["docs"]["scoring_id"] == f"plain-v1@r{SCORING_REVISION}"
    pytester.runpytest("--doceval", "--doceval-no-cache").assert_outcomes(passed=1)
    assert (pytester.path / "cases" / "calls.txt").read_text() == "xx"


def test_update_writes_no_baseline_for_a_suite_that_measured_nothing(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    suite = demo_suite()
    for truth in suite.glob("*/truth.md"):
        truth.unlink()  # every test errors: nothing is measured
    result = pytester.runpytest("--doceval", "--doceval-update")
    result.assert_outcomes(errors=6)
    result.stdout.fnmatch_lines(
        ["*demo: no test measured anything; baseline baselines/demo.json not written*"]
    )
    assert not (pytester.path / "baselines" / "demo.json").exists()
    assert "unchanged" not in result.stdout.str()
