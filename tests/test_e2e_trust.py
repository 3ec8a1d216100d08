"""What a new user ran into, run as they would (issue: trustworthy numbers and runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GOOD, TRUTH, read_report, write_suite

PARSER = """
import pytest_doceval
from pathlib import Path

@pytest_doceval.register_parser("versioned")
class Versioned:
    name = "versioned"

    def __init__(self, settings, env):
        self.version = Path(__file__).with_name("version.txt").read_text().strip()

    def fingerprint(self):
        return {"system": self.name, "version": self.version}

    def parse(self, pdf):
        if self.version == "interrupt" and pdf.parent.name == "c1":
            raise KeyboardInterrupt  # Ctrl-C in the middle of the run
        if self.version == "boom":
            raise ZeroDivisionError("the user's parser divided by zero")
        text = "Tides\\nTidal storage moves water between two basins.\\n- pumps\\n- turbines\\n"
        return text.replace("water", "watr") if self.version == "2" else text
"""


@pytest.fixture
def versioned(pytester: pytest.Pytester) -> Path:
    pytester.makeconftest(PARSER)
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    (pytester.path / "version.txt").write_text("1")
    cases = {f"c{i}": {"truth": TRUTH, "pdf": GOOD} for i in range(3)}
    return write_suite(pytester.path, "tides", cases, systems=["versioned"])


def test_output_diff_shows_what_this_output_changed(
    pytester: pytest.Pytester, versioned: Path
) -> None:
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=3)
    baseline = json.loads((pytester.path / "baselines" / "tides.json").read_text())
    assert all(entry["cache_key"] for entry in baseline["entries"].values())
    (pytester.path / "version.txt").write_text("2")
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(failed=3)
    row = read_report(pytester.path / "doceval-report.json")["suites"]["tides"]["results"][0]
    change = row["views"]["output_diff"]
    assert change["previous_cache_key"] == baseline["entries"]["c0[versioned]"]["cache_key"]
    assert ["S", "e", "a"] in change["ops"] or any(op[0] != "=" for op in change["ops"])
    assert "".join(op[1] for op in change["ops"] if op[0] in "=SD").count("water") == 1


def test_running_from_a_subfolder_uses_the_project_baselines(
    pytester: pytest.Pytester, versioned: Path
) -> None:
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=3)
    sub = pytester.path / "cases" / "tides"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)
        result = pytester.runpytest("--doceval", str(sub / "suite.toml"))
    result.assert_outcomes(passed=3)
    assert not (sub / "baselines").exists() and not (sub / ".doceval-cache").exists()


def test_collect_only_and_empty_selection_keep_the_last_report(
    pytester: pytest.Pytester, versioned: Path
) -> None:
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=3)
    report = pytester.path / "doceval-report.json"
    before = report.read_text()
    pytester.runpytest("--doceval", "--co")
    pytester.runpytest("--doceval", "-k", "no_such_case")
    assert report.read_text() == before


def test_an_interrupted_run_says_so_and_keeps_the_baselines(
    pytester: pytest.Pytester, versioned: Path
) -> None:
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=3)
    baseline = (pytester.path / "baselines" / "tides.json").read_text()
    (pytester.path / "version.txt").write_text("interrupt")
    result = pytester.runpytest_subprocess("--doceval", "--doceval-update", "--doceval-no-cache")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = read_report(pytester.path / "doceval-report.json")
    assert report["interrupted"] is True
    result.stdout.fnmatch_lines(["*INTERRUPTED: the numbers below cover only the tests that ran*"])
    assert (pytester.path / "baselines" / "tides.json").read_text() == baseline


def test_a_user_parser_error_leads_with_the_cause_and_keeps_its_traceback(
    pytester: pytest.Pytester, versioned: Path
) -> None:
    (pytester.path / "version.txt").write_text("boom")
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        ["ERROR cases/tides/suite.toml::c0[[]versioned] - versioned failed*"]
    )
    assert "Traceback" not in result.stdout.str()
    long = pytester.runpytest("--doceval", "--tb=long")
    long.stdout.fnmatch_lines(["*Traceback (most recent call last)*", "*ZeroDivisionError*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--doceval", "--doceval-bootstrap", "-5"], "*--doceval-bootstrap -5: need at least 100*"),
        (["--doceval", "--doceval-seed", "-1"], "*--doceval-seed -1*"),
        (["--doceval-update"], "*--doceval-update only applies to an evaluation run*"),
    ],
)
def test_bad_options_stop_before_anything_runs(
    pytester: pytest.Pytester, versioned: Path, args: list[str], message: str
) -> None:
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (pytester.path / "doceval-report.json").exists()


def test_a_parser_that_returns_no_text_is_listed(
    pytester: pytest.Pytester, versioned: Path
) -> None:
    pytester.makeconftest(
        PARSER.replace("return text.replace", "return '' or text.replace").replace(
            'text = "Tides', 'text = "" if self.version == "empty" else "Tides'
        )
    )
    (pytester.path / "version.txt").write_text("empty")
    result = pytester.runpytest("--doceval")
    result.stdout.fnmatch_lines(["*note on c0[[]versioned]: versioned returned no text*"])


def test_a_one_case_suite_writes_valid_json(pytester: pytest.Pytester, versioned: Path) -> None:
    """A CI of one case is NaN; the report writes null, which every JSON parser reads."""
    for case in ("c1", "c2"):
        import shutil

        shutil.rmtree(versioned / case)
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=1)
    text = (pytester.path / "doceval-report.json").read_text()

    def refuse(constant: str) -> None:
        raise AssertionError(f"bare {constant} in the JSON report")

    report = json.loads(text, parse_constant=refuse)
    cer = report["suites"]["tides"]["aggregates"]["versioned"]["cer"]
    assert cer["n"] == 1 and cer["small_n"] is True
