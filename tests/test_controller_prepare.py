"""An xdist controller makes the run's suites while its workers start (`Controller.prepare_found`,
called at its session start), not after the last row: numbers do not depend on it, only when
the work is done."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pytest_doceval.config import StatsConfig
from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.run.case_gates import SuiteBaselines
from pytest_doceval.run.controller import Controller
from tests.test_startup import write_one_case_suite

pytest_plugins = ["pytester"]


def _controller(
    tmp_path: Path, made: list[tuple[str, str]], *, ahead: bool, rows_read_later: bool = False
) -> Controller:
    def suite(file: Path) -> object:
        made.append((file.name, threading.current_thread().name))
        raise SuiteConfigError(f"{file}: not a suite")  # a broken suite: left for finish

    return Controller(
        suite=suite,  # type: ignore[arg-type]
        baselines=SuiteBaselines(tmp_path / "baselines"),
        stats=StatsConfig(),
        update=False,
        root=tmp_path,
        invoked_in=tmp_path,
        prepare_ahead=ahead,
        rows_read_later=rows_read_later,
    )


def test_a_controller_makes_the_suites_it_is_told_of_on_its_own_thread(tmp_path: Path) -> None:
    made: list[tuple[str, str]] = []
    controller = _controller(tmp_path, made, ahead=True)
    controller.prepare_found(lambda: [tmp_path / "a.toml", tmp_path / "b.toml"])
    controller._wait_for_preparation()
    # Both made, in order, off the main thread; their errors stay for `finish` to report.
    assert [name for name, _ in made] == ["a.toml", "b.toml"]
    assert all(thread.startswith("doceval-prepare") for _, thread in made)


def test_a_plain_run_prepares_nothing_ahead(tmp_path: Path) -> None:
    made: list[tuple[str, str]] = []
    controller = _controller(tmp_path, made, ahead=False)
    controller.prepare_found(lambda: [tmp_path / "a.toml"])
    controller._wait_for_preparation()
    assert made == []


LOGGING_CONFTEST = """
import json
from pathlib import Path

from pytest_doceval.run.controller import Controller

LOG = Path(__file__).parent / "controller.log"
found, add_row = Controller.prepare_found, Controller.add_row


def logged_found(self, find):
    with LOG.open("a") as log:
        log.write(json.dumps(["found", [Path(f).name for f in find()]]) + "\\n")
    return found(self, find)


def logged_row(self, suite_file, row):
    with LOG.open("a") as log:
        log.write(json.dumps(["row", Path(suite_file).parent.name]) + "\\n")
    return add_row(self, suite_file, row)


Controller.prepare_found, Controller.add_row = logged_found, logged_row
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_the_controller_is_told_of_the_suites_before_any_row(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    import json

    write_one_case_suite(pytester.path)
    pytester.makeconftest(LOGGING_CONFTEST)
    result = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider", *workers)
    result.assert_outcomes(passed=1)
    log = [json.loads(line) for line in (pytester.path / "controller.log").read_text().split("\n")
           if line]  # fmt: skip
    # Told at the session's start of the suite file the arguments name; then the one row.
    assert log == [["found", ["suite.toml"]], ["row", "docs"]]


def test_the_suite_files_told_are_the_ones_collection_finds(pytester: pytest.Pytester) -> None:
    """`suite_files` against pytest's own collection of the same arguments: a suite inside
    another suite's folder (its case data), hidden folders and ``norecursedirs`` are not
    walked; a suite file or a test id names its suite."""
    from pytest_doceval.run.catalog import suite_files

    pytester.makefile(".toml", pyproject="[tool.doceval]\nsuites = ['.']\n")
    suite = '[suite]\nkind = "documents"\nsystems = ["saved"]\n'
    for folder in ("a", "a/case1", "b/c", ".hidden/s", "node_modules/s", "build/s", "d/e/f"):
        (pytester.path / folder).mkdir(parents=True, exist_ok=True)
        (pytester.path / folder / "suite.toml").write_text(suite)
    (pytester.path / "a" / "case1" / "truth.md").write_text("x")

    norecurse = pytester.parseconfig().getini("norecursedirs")  # pytest's own defaults

    def collected(*args: str) -> set[str]:
        result = pytester.runpytest("--doceval", "--co", "-q", "-p", "no:cacheprovider", *args)
        return {line.split("::")[0] for line in result.outlines if "suite.toml" in line}

    def told(*args: str) -> set[str]:
        files = suite_files(list(args), pytester.path, norecurse=norecurse)
        return {file.relative_to(pytester.path).as_posix() for file in files}

    assert told(".") == collected(".") == {"a/suite.toml", "b/c/suite.toml", "d/e/f/suite.toml"}
    assert told("b", "a/suite.toml::x[y]") == {"b/c/suite.toml", "a/suite.toml"}


@pytest.mark.parametrize("html", [False, True])
def test_a_recorded_row_keeps_its_metrics_only_for_pytest_html(tmp_path: Path, html: bool) -> None:
    """pytest keeps every test's report to the end of the run: once recorded, the report
    carries the row's metrics only while pytest-html's table will read them, and nothing else
    (200,000 rows' metrics held hundreds of MB)."""
    from pytest_doceval.rows import new_row

    controller = _controller(tmp_path, [], ahead=False, rows_read_later=html)
    row = new_row("s", "c1", "p", nodeid="s/suite.toml::c1[p]")
    row.update(outcome="passed", metrics={"cer": 0.25}, details={"big": "x" * 1000})
    kept = controller.add_row(tmp_path / "s" / "suite.toml", row)
    assert kept == ({"metrics": {"cer": 0.25}} if html else None)
    recorded = controller.record.rows(tmp_path / "s" / "suite.toml")  # the record is whole
    assert [r["metrics"] for r in recorded] == [{"cer": 0.25}]
    assert [r["details"] for r in recorded] == [{"big": "x" * 1000}]
    controller.record.discard()
