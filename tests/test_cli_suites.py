"""``doceval suites``: what ``pytest --doceval`` would run, without running it; checked against
what a run of the same project then does (its tests, and which of them it skips)."""

from __future__ import annotations

import pytest

from pytest_doceval.cli import main as doceval
from tests.conftest import GOOD, TRUTH, read_report, write_suite
from tests.test_e2e_exam import use_server, write_exam

pytest_plugins = ["pytester"]

HOOKED = """
import pytest_doceval


class Echo:
    name = "hooked"

    def __init__(self, settings, env):
        pass

    def fingerprint(self):
        return {"system": "hooked"}

    def parse(self, pdf):
        return "Tides"


def pytest_doceval_register_systems(registry):
    registry.register("hooked", Echo)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    use_server(pytester, None)  # no model configured
    pytester.makeconftest(HOOKED)
    cases = {f"c{i}": {"truth": TRUTH, "pdf": GOOD, "saved": GOOD} for i in range(3)}
    systems = ["pymupdf", "saved", "hooked", "pymupdf+vlm"]
    write_suite(pytester.path, "tides", cases, systems=systems, gates="")
    write_exam(pytester.path, models=["random", "gpt-x"], tracks=["A"])
    broken = write_suite(
        pytester.path, "broken", {"c0": {"truth": TRUTH, "saved": GOOD}}, systems=["saved"]
    )
    (broken / "suite.toml").write_text('[suite]\nkind = "documents"\nsystems = ["savd"]\n')
    return pytester


def test_suites_lists_kinds_systems_counts_and_the_skips_a_run_then_makes(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    assert doceval(["suites"]) == 2  # one suite does not load
    out = capsys.readouterr().out
    assert "cases/tides (documents): 3 case(s), 4 system(s), 12 test(s)" in out
    assert "systems: pymupdf (3), saved (3), hooked (3), pymupdf+vlm (3)" in out
    assert "skipped: pymupdf+vlm (3 test(s)): pymupdf+vlm needs a model" in out
    assert "cases/exam (exam): 6 case(s), 2 system(s), 12 test(s)" in out
    assert "skipped: gpt-x-A (6 test(s)): gpt-x-A needs model 'gpt-x'" in out
    assert "cases/broken: does not load" in out
    assert "unknown system 'savd' (did you mean 'saved'?)" in out
    assert "3 suite(s), 24 test(s), 9 of them to be skipped; 1 suite(s) do not load" in out
    assert str(project.path) not in out  # paths as the project names them

    # What the run then does: the same tests, the same skips.
    result = project.runpytest("--doceval")
    result.assert_outcomes(passed=15, skipped=9, failed=1)  # + the broken suite's item
    report = read_report(project.path / "doceval-report.json")["suites"]
    skipped = {
        (name, r["system"])
        for name, section in report.items()
        for r in section.get("results", [])
        if r["outcome"] == "skipped"
    }
    assert skipped == {("tides", "pymupdf+vlm"), ("exam", "gpt-x-A")}
    assert len(report["tides"]["results"]) == 12 and len(report["exam"]["results"]) == 12


def test_suites_of_given_paths_and_nothing_run(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    assert doceval(["suites", "cases/tides"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("cases/tides (documents)")
    assert "1 suite(s), 12 test(s), 3 of them to be skipped" in out
    assert not (project.path / ".doceval-cache").exists()  # nothing parsed, asked or stored
    assert not (project.path / "doceval-report.json").exists()
