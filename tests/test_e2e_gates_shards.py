"""Suite gates, shards and merging, pytest-html, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_doceval.cli import main as doceval
from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]

WORDS = "tidal storage moves water between two basins and returns it after sunset".split()


def _cases(n: int, *, typo_every: int = 0) -> dict[str, dict[str, str]]:
    cases = {}
    for i in range(n):
        truth = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(40))
        out = truth
        if typo_every and i % typo_every == 0:
            out = truth.replace("water", "watr", 2).replace("basins", "basns")
        cases[f"c{i:02d}"] = {"truth": truth, "sys": out, "alt": truth.replace("tidal", "tide")}
    return cases


def test_suite_gate_fails_the_session_on_a_significant_regression(
    pytester: pytest.Pytester,
) -> None:
    suite = write_suite(pytester.path, "tides", _cases(12), systems=["sys"], gates="")
    (suite / "suite.toml").write_text(
        '[suite]\nkind = "documents"\nsystems = ["sys"]\n\n'
        '[gates.suite]\ncer = "significant:+0.5pp"\n'
    )
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=12)
    # Every case gets clearly worse: tests pass (no per-case gate) but the session fails.
    for case in suite.iterdir():
        out = case / "outputs" / "sys.md"
        if out.exists():
            out.write_text(out.read_text().replace("water", "wtr").replace("tidal", "tdl"))
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(passed=12)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAILED tides: suite gate significant:+0.5pp*exceeds margin*"])
    gates = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]["gates"]
    assert [g["passed"] for g in gates] == [False]
    assert gates[0]["ci_low"] > 0.005


def test_suite_gate_ignores_noise_within_margin(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path, "tides", _cases(12), systems=["sys"], gates="")
    (suite / "suite.toml").write_text(
        '[suite]\nkind = "documents"\nsystems = ["sys"]\n\n'
        '[gates.suite]\ncer = "significant:+5pp"\n'
    )
    pytester.runpytest("--doceval", "--doceval-update")
    out = suite / "c00" / "outputs" / "sys.md"
    out.write_text(out.read_text().replace("water", "watr", 1))
    result = pytester.runpytest("--doceval")
    assert result.ret == pytest.ExitCode.OK
    deltas = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]
    delta = next(d for d in deltas["baseline_deltas"] if d["metric"] == "cer")
    assert delta["mean_diff"] > 0 and delta["n"] == 12


def test_shards_partition_and_merge_equals_unsharded(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path, "tides", _cases(10, typo_every=3), systems=["sys", "alt"], gates="")
    full = pytester.runpytest("--doceval", "--doceval-json", "full.json")
    full.assert_outcomes(passed=20)
    ran = []
    for k in (1, 2, 3):
        result = pytester.runpytest(
            "--doceval", "--doceval-shard", f"{k}/3", "--doceval-json", f"shard{k}.json"
        )
        ran.append(result.parseoutcomes().get("passed", 0))
    assert sum(ran) == 20
    for k in (1, 2, 3):  # whole cases go together: both systems of a case in one shard
        rows = read_report(pytester.path / f"shard{k}.json")["suites"]["tides"]["results"]
        by_case: dict[str, int] = {}
        for row in rows:
            by_case[row["case"]] = by_case.get(row["case"], 0) + 1
        assert set(by_case.values()) <= {2}
    paths = [str(pytester.path / f"shard{k}.json") for k in (1, 2, 3)]
    merged = pytester.path / "merged.json"
    assert doceval(["merge", *paths, "-o", str(merged)]) == 0
    a = read_report(pytester.path / "full.json")["suites"]["tides"]
    b = read_report(merged)["suites"]["tides"]
    for section in (a, b):
        for row in section["results"]:
            row.pop("duration", None)
    for key in ("results", "aggregates", "comparisons", "outcomes", "gates"):
        assert a[key] == b[key], key


def test_merge_refuses_overlap_mismatch_and_missing_shards(
    pytester: pytest.Pytester, capsys
) -> None:
    write_suite(pytester.path, "tides", _cases(3), systems=["sys"], gates="")
    pytester.runpytest("--doceval", "--doceval-shard", "1/1", "--doceval-json", "a.json")
    a = pytester.path / "a.json"
    out = str(pytester.path / "m.json")
    assert doceval(["merge", str(a), str(a), "-o", out]) == 2
    assert "shard 1/1 is given twice" in capsys.readouterr().err

    def variant(name: str, shard: str, **suite: object) -> str:
        data = json.loads(a.read_text())
        data["shard"] = shard
        data["suites"]["tides"].update(suite)
        (pytester.path / name).write_text(json.dumps(data))
        return str(pytester.path / name)

    first, second = variant("s1.json", "1/2"), variant("s2.json", "2/2")
    assert doceval(["merge", first, second, "-o", out]) == 2
    assert "overlapping shards: tides/c00[sys] is in both" in capsys.readouterr().err
    other = variant("s3.json", "2/2", scoring_id="plain-v1@r4", results=[])
    assert doceval(["merge", first, other, "-o", out]) == 2
    assert "scoring_id 'fair-v1@r4' vs 'plain-v1@r4'" in capsys.readouterr().err
    of_three = [variant("t1.json", "1/3"), variant("t3.json", "3/3", results=[])]
    assert doceval(["merge", *of_three, "-o", out]) == 2
    assert "incomplete set of shards: missing 2/3" in capsys.readouterr().err
    assert doceval(["merge", str(pytester.path / "t1.json"), str(a), "-o", out]) == 2
    assert "is shard 1/1, the others are of 3" in capsys.readouterr().err


def test_pytest_html_columns_and_summary(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path, "tides", _cases(3), systems=["sys"], gates="")
    for extra in ([], ["-n", "2"]):
        result = pytester.runpytest_subprocess(
            "--doceval", "--html=report.html", "--self-contained-html", *extra
        )
        result.assert_outcomes(passed=3)
        page = (pytester.path / "report.html").read_text()
        assert 'data-column-type="cer"' in page
        assert "col-cer" in page and "col-structure_f1" in page
        assert "doceval: tides" in page


def test_bad_shard_option(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path, "tides", _cases(2), systems=["sys"], gates="")
    result = pytester.runpytest("--doceval", "--doceval-shard", "4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--doceval-shard '4/3': need 1 <= K <= N*"])


def test_cli_compare_finds_regression(pytester: pytest.Pytester, capsys) -> None:
    suite = write_suite(pytester.path, "tides", _cases(12), systems=["sys"], gates="")
    pytester.runpytest("--doceval", "--doceval-json", "old.json")
    assert doceval(["compare", "old.json", "old.json"]) == 0
    assert "unchanged" in capsys.readouterr().out
    for case in suite.iterdir():
        out = case / "outputs" / "sys.md"
        if out.exists():
            out.write_text(out.read_text().replace("water", "wtr"))
    pytester.runpytest("--doceval", "--doceval-json", "new.json")
    assert doceval(["compare", "old.json", "new.json", "--metric", "cer"]) == 1
    out = capsys.readouterr().out
    assert "WORSE" in out and "significant regression" in out
    assert doceval(["compare", "old.json", "missing.json"]) == 2
    assert "missing.json: no such report" in capsys.readouterr().err


def test_cli_report_rejects_other_schema(tmp_path: Path, capsys) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema": "doceval-report/0", "suites": {}}))
    assert doceval(["report", str(path)]) == 2
    assert "report schema 'doceval-report/0' is not 'doceval-report/1'" in capsys.readouterr().err
    path.write_text("{broken")
    assert doceval(["report", str(path)]) == 2
