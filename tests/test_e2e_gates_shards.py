"""Suite gates, shards and merging, pytest-html, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_doceval.cli import main as doceval
from pytest_doceval.kinds.documents.suite import SCORING_REVISION
from pytest_doceval.run.shards import hash_shard
from tests.conftest import WORKERS, read_report, write_suite

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


def _comparable(section: dict) -> dict:
    for row in section["results"]:
        row.pop("duration", None)
    return {k: section[k] for k in ("results", "aggregates", "comparisons", "outcomes", "gates")}


@pytest.mark.parametrize("workers", WORKERS)
def test_an_empty_shard_exits_0_with_an_empty_report_that_merges(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    # Two cases whose hash puts both in shard 1 of 2 (checked: the test's premise).
    two = {k: v for k, v in _cases(12).items() if k in ("c01", "c03")}
    assert {hash_shard(("tides", case), 2) for case in two} == {0}
    write_suite(pytester.path, "tides", two, systems=["sys", "alt"], gates="")
    run = pytester.runpytest_subprocess if workers else pytester.runpytest
    full = run("--doceval", "--doceval-json", "full.json", *workers)
    full.assert_outcomes(passed=4)
    for k in (1, 2):
        result = run(
            "--doceval", "--doceval-shard", f"{k}/2", "--doceval-json", f"s{k}.json", *workers
        )
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*doceval: shard 2/2 holds none of the run's 2 case(s), split by a hash of the case "
            "names *; it wrote an empty report for doceval merge*"
        ]
    )
    empty = read_report(pytester.path / "s2.json")
    assert empty["shard"] == "2/2" and empty["suites"] == {} and empty["shard_basis"] == "hash"
    merged = pytester.path / "merged.json"
    paths = [str(pytester.path / f"s{k}.json") for k in (1, 2)]
    assert doceval(["merge", *paths, "-o", str(merged)]) == 0
    assert _comparable(read_report(merged)["suites"]["tides"]) == _comparable(
        read_report(pytester.path / "full.json")["suites"]["tides"]
    )


def test_a_k_that_matches_nothing_in_a_shard_still_writes_no_report(
    pytester: pytest.Pytester,
) -> None:
    write_suite(pytester.path, "tides", _cases(4), systems=["sys"], gates="")
    for k in (1, 2):
        result = pytester.runpytest(
            "--doceval", "--doceval-shard", f"{k}/2", "-k", "nothing", "--doceval-json", "s.json"
        )
        assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert not (pytester.path / "s.json").exists()


def test_shards_balance_by_the_durations_of_the_last_whole_run(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path, "tides", _cases(6), systems=["sys", "alt"], gates="")
    pytester.runpytest("--doceval").assert_outcomes(passed=12)
    # The last run's durations, made uneven (a case's two systems share its seconds).
    report_path = pytester.path / "doceval-report.json"
    report = read_report(report_path)
    seconds = {"c00": 9.0, "c01": 5.0, "c02": 4.0, "c03": 3.0, "c04": 2.0, "c05": 1.0}
    for row in report["suites"]["tides"]["results"]:
        row["duration"] = seconds[row["case"]] / 2
    report_path.write_text(json.dumps(report), encoding="utf-8")
    ran = {}
    for k in (1, 2):
        pytester.runpytest(
            "--doceval",
            "--doceval-shard",
            f"{k}/2",
            "--doceval-shard-durations",
            "doceval-report.json",
            "--doceval-json",
            f"s{k}.json",
        ).assert_outcomes(passed=4 if k == 1 else 8)
        shard = read_report(pytester.path / f"s{k}.json")
        assert shard["shard_basis"].startswith("durations:")
        ran[k] = sorted({row["case"] for row in shard["suites"]["tides"]["results"]})
    # Longest first, each to the lighter shard (by hand in tests/test_shards.py): 12 s each.
    assert ran == {1: ["c00", "c03"], 2: ["c01", "c02", "c04", "c05"]}
    paths = [str(pytester.path / f"s{k}.json") for k in (1, 2)]
    assert doceval(["merge", *paths, "-o", str(pytester.path / "m.json")]) == 0


def test_merge_refuses_shards_split_differently(pytester: pytest.Pytester, capsys) -> None:
    write_suite(pytester.path, "tides", _cases(4), systems=["sys"], gates="")
    for k in (1, 2):
        pytester.runpytest("--doceval", "--doceval-shard", f"{k}/2", "--doceval-json", f"s{k}.json")
    second = pytester.path / "s2.json"
    data = read_report(second)
    data["shard_basis"] = "durations:0123456789abcdef"
    second.write_text(json.dumps(data), encoding="utf-8")
    out = str(pytester.path / "m.json")
    assert doceval(["merge", str(pytester.path / "s1.json"), str(second), "-o", out]) == 2
    assert "the shards were split differently" in capsys.readouterr().err


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
    other = variant("s3.json", "2/2", scoring_id="plain-v1@r0", results=[])
    assert doceval(["merge", first, other, "-o", out]) == 2
    assert f"scoring_id 'fair-v1@r{SCORING_REVISION}' vs 'plain-v1@r0'" in capsys.readouterr().err
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


@pytest.mark.parametrize("workers", WORKERS)
def test_a_shard_with_its_own_report_balances_by_the_whole_run_in_the_project_root(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    """The CI matrix's usual command, each shard writing its own report: the split comes from
    the whole run's report in the project root (not the shard's own, part of a run), and each
    shard says which report it used; without one, each says it went by hash and why."""
    write_suite(pytester.path, "tides", _cases(6), systems=["sys"], gates="")
    run = pytester.runpytest_subprocess if workers else pytester.runpytest
    for k in (1, 2):
        result = run(
            "--doceval", "--doceval-shard", f"{k}/2", "--doceval-json", f"s{k}.json", *workers
        )
        result.stdout.fnmatch_lines(
            [
                f"*doceval: shard {k}/2 ran * of the run's 6 case(s), split by a hash of the case "
                f"names (no whole run's report at s{k}.json or doceval-report.json)*"
            ]
        )
        assert read_report(pytester.path / f"s{k}.json")["shard_basis"] == "hash"
    run("--doceval", *workers).assert_outcomes(passed=6)  # the whole run, in the project root
    for k in (1, 2):
        result = run(
            "--doceval", "--doceval-shard", f"{k}/2", "--doceval-json", f"s{k}.json", *workers
        )
        result.stdout.fnmatch_lines(
            [
                f"*doceval: shard {k}/2 ran * of the run's 6 case(s), split balanced by the case "
                "durations in doceval-report.json*"
            ]
        )
        assert read_report(pytester.path / f"s{k}.json")["shard_basis"].startswith("durations:")
    paths = [str(pytester.path / f"s{k}.json") for k in (1, 2)]
    assert doceval(["merge", *paths, "-o", str(pytester.path / "m.json")]) == 0
