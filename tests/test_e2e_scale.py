"""A run's rows on disk as they finish, as a user meets it: a run killed midway leaves the rows
so far and no report or baseline written; a finished run leaves only its report; shards run
apart and merged give every number of the whole run; a damaged shard stops the merge."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_doceval.cli import main as doceval
from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]

WORDS = "tidal storage moves water between two basins and returns it after sunset".split()

# A kind that kills its own process (as an OOM killer or a CI timeout would) at case c3.
KILLING_CONFTEST = """
import os
import signal

from pytest_doceval import CaseRef, CaseResult, MetricSpec, Suite, suite_kind


@suite_kind
class Fragile(Suite):
    kind = "fragile"
    metrics = {"goodness": MetricSpec("higher")}
    scoring_id = "fragile-v1"

    def case_refs(self):
        return [CaseRef(f"c{i}", s) for i in range(5) for s in ("a", "b")]

    def evaluate(self, ref, results, ctx):
        if ref.case == "c3" and os.environ.get("DOCEVAL_TEST_KILL"):
            os.kill(os.getpid(), signal.SIGKILL)
        return CaseResult({"goodness": int(ref.case[1:]) / 10}, views={"v": ref.case})
"""


def _fragile(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(KILLING_CONFTEST)
    suite = pytester.path / "cases" / "fragile"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text('[suite]\nkind = "fragile"\n\n[gates]\ngoodness = "-5pp"\n')
    (pytester.path / "pyproject.toml").write_text("[tool.doceval]\nsuites = ['cases']\n")


def test_a_run_killed_midway_leaves_its_rows_and_nothing_half_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fragile(pytester)
    pytester.runpytest_subprocess("--doceval", "--doceval-update").assert_outcomes(passed=10)
    report, baseline = pytester.path / "doceval-report.json", pytester.path / "baselines"
    before = report.read_bytes(), (baseline / "fragile.json").read_bytes()
    partial = pytester.path / "doceval-report.partial.jsonl"
    assert not partial.exists()  # a run that ends removes its record

    monkeypatch.setenv("DOCEVAL_TEST_KILL", "1")
    result = pytester.runpytest_subprocess("--doceval", "--doceval-update", "-p", "no:randomly")
    assert result.ret < 0 or result.ret > 2  # killed by SIGKILL, not a pytest exit status
    rows = [json.loads(line) for line in partial.read_text(encoding="utf-8").splitlines()]
    assert [(r["case"], r["system"]) for r in rows] == [
        (f"c{i}", s) for i in range(3) for s in ("a", "b")
    ]
    assert all(r["outcome"] == "passed" and r["metrics"]["goodness"] >= 0 for r in rows)
    assert rows[0]["views"] == {"v": "c0"}  # whole rows, not what the controller kept
    # The last report and the baselines are as the finished run left them.
    assert (report.read_bytes(), (baseline / "fragile.json").read_bytes()) == before
    assert sorted(p.name for p in baseline.iterdir()) == ["fragile.json"]


def _cases(n: int) -> dict[str, dict[str, str]]:
    cases = {}
    for i in range(n):
        truth = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(30))
        sys_out = truth.replace("water", "watr") if i % 3 == 0 else truth
        alt = truth.replace("tidal", "tide").replace("basins", "basns", i % 2)
        cases[f"c{i:02d}"] = {"truth": truth, "sys": sys_out, "alt": alt}
    return cases


def _numbers(section: dict[str, Any]) -> dict[str, Any]:
    """A suite section less what differs between two runs of the same rows: durations."""
    for row in section["results"]:
        row.pop("duration", None)
    return section


def test_shards_merged_give_every_number_of_the_whole_run_under_xdist(
    pytester: pytest.Pytester,
) -> None:
    """With baselines (deltas, suite gates, per-case gates), the whole run under -n 2 (rows
    arriving in any order) and 3 shards merged: the same section, every key."""
    suite = write_suite(
        pytester.path,
        "tides",
        _cases(12),
        systems=["sys", "alt"],
        gates='cer = "+0.5pp"\n\n[gates.suite]\ncer = "significant:+0.5pp"\n',
    )
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=24)
    for case in ("c01", "c04", "c07"):  # some cases get worse after the baseline
        out = suite / case / "outputs" / "alt.md"
        out.write_text(out.read_text().replace("storage", "strage"))
    whole = pytester.runpytest("--doceval", "-n", "2", "--doceval-json", "whole.json")
    whole.assert_outcomes(passed=21, failed=3)
    for k in (1, 2, 3):
        pytester.runpytest("--doceval", f"--doceval-shard={k}/3", f"--doceval-json=shard{k}.json")
    shards = [str(pytester.path / f"shard{k}.json") for k in (1, 2, 3)]
    assert doceval(["merge", *shards, "-o", str(pytester.path / "merged.json")]) == 0
    a = _numbers(read_report(pytester.path / "whole.json")["suites"]["tides"])
    b = _numbers(read_report(pytester.path / "merged.json")["suites"]["tides"])
    assert a["baseline_deltas"] and a["gates"][0]["evaluated"]
    assert set(a) == set(b)
    for key in a:
        assert a[key] == b[key], key


def test_a_merge_of_a_truncated_shard_names_the_file_and_byte(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(pytester.path, "tides", _cases(6), systems=["sys"], gates="")
    for k in (1, 2):
        pytester.runpytest("--doceval", f"--doceval-shard={k}/2", f"--doceval-json=shard{k}.json")
    second = pytester.path / "shard2.json"
    whole = second.read_bytes()
    second.write_bytes(whole[: len(whole) * 2 // 3])
    merged = pytester.path / "merged.json"
    shards = [str(pytester.path / "shard1.json"), str(second)]
    assert doceval(["merge", *shards, "-o", str(merged)]) == 2
    error = capsys.readouterr().err
    assert f"{second}: " in error and f"at byte {len(whole) * 2 // 3:,}" in error, error
    assert not merged.exists()


def test_a_plain_run_plans_a_window_ahead_and_its_numbers_are_those_of_planning_all(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain run plans `PLAN_AHEAD` tests past the running one (so 200,000 plans are not all
    held at once); the start line says so, and every number equals a run planning all."""
    from pytest_doceval.session_hooks import running

    write_suite(pytester.path, "tides", _cases(10), systems=["sys", "alt"], gates="")
    pytester.runpytest("--doceval", "--doceval-json", "all.json").assert_outcomes(passed=20)
    monkeypatch.setattr(running, "PLAN_AHEAD", 4)
    result = pytester.runpytest(
        "--doceval", "--doceval-json", "window.json", "--doceval-cache=off", "-p", "no:xdist"
    )
    result.assert_outcomes(passed=20)
    result.stdout.fnmatch_lines(["*; the first 4 of 20 tests planned, the rest as the run *"])
    assert "20/20 stages" in result.stdout.str()  # every stage counted in the totals
    whole = _numbers(read_report(pytester.path / "all.json")["suites"]["tides"])
    window = _numbers(read_report(pytester.path / "window.json")["suites"]["tides"])
    for section in (whole, window):
        for row in section["results"]:
            row.pop("cache_key", None)  # one run stores its outputs, the other none
    assert whole == window
