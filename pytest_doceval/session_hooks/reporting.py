"""Hooks of a process that reports (a plain run, or the xdist controller): rows from the test
reports to the controller, and at the end the report, the suite gates, the baselines, the
terminal summary and pytest-html's columns."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_doceval.run.controller import Controller
from pytest_doceval.run.failure_sections import one_line_failures
from pytest_doceval.run.progress import Totals, summary_line
from pytest_doceval.session import DocevalSession

if TYPE_CHECKING:
    from pytest_doceval.rows import Row


class Reporting:
    def __init__(self, session: DocevalSession) -> None:
        assert session.controller is not None, "a process that reports has a controller"
        self.session = session
        self.controller: Controller = session.controller
        self.totals = Totals()  # of every engine of the run (a plain run's, or the workers')
        self.stayed_home: dict[str, str] = {}  # stage groups scored in a test's process, why
        self._suite_files: dict[str, Path] = {}
        self._paths: dict[str, Path] = {}

    def add_engine(self, totals: Mapping[str, Any], stayed_home: Mapping[str, str]) -> None:
        """A process that ran tests is done: its engine's totals and what stayed home."""
        self.totals.add(totals)
        self.stayed_home.update(stayed_home)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # The suites the run's arguments name are made (and the report's imports loaded) while
        # an xdist controller's workers start, not after their last test.
        from pytest_doceval.run.catalog import suite_files

        config = session.config
        invoked = Path(config.invocation_params.dir)
        norecurse = config.getini("norecursedirs")

        def found() -> list[Path]:
            files = suite_files(config.args, invoked, norecurse=norecurse)
            return [file.resolve() for file in files]

        self.controller.prepare_found(found)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        row = getattr(report, "doceval_row", None)
        if row is not None:
            file = getattr(report, "doceval_suite_file", None)
            suite_file = self._path(file) if file else self._suite_file(report.nodeid)
            # The row is on disk now; the report, which pytest keeps to the end of the run,
            # keeps only what is read of it later.
            report.doceval_row = self.controller.add_row(suite_file, row)  # type: ignore[attr-defined]
        elif report.failed and report.nodeid.split("::")[0].endswith("suite.toml"):
            # A broken suite, or an item whose xdist worker crashed: keep it in the report.
            self.controller.add_row(self._suite_file(report.nodeid), _lost_row(report))

    def _path(self, file: str) -> Path:
        """A suite file's `Path`, made once per file rather than once per test."""
        found = self._paths.get(file)
        if found is None:
            found = self._paths[file] = Path(file)
        return found

    def _suite_file(self, nodeid: str) -> Path:
        # Node ids are relative to pytest's rootdir (not the doceval project root); resolving
        # costs syscalls, once per suite file rather than once per test.
        relative = nodeid.split("::")[0]
        found = self._suite_files.get(relative)
        if found is None:
            rootpath: Path = self.session.config.rootpath
            found = self._suite_files[relative] = (rootpath / relative).resolve()
        return found

    @pytest.hookimpl(tryfirst=True)  # before pytest-html renders its summary
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        interrupted = session.exitstatus == pytest.ExitCode.INTERRUPTED
        self.session.close(interrupted=interrupted)  # a plain run's engine: stopped already
        stages = self.session.stages
        if stages is not None:
            self.add_engine(stages.totals_dict(), stages.stayed_home())
        lines = self.controller.summary_lines
        if self.totals.stages:
            lines.append(summary_line(self.totals))
        lines += [
            f"doceval: {group} was scored in the pytest process, not on the executor: {why}"
            for group, why in sorted(self.stayed_home.items())
        ]
        if (shortened := one_line_failures(session.config)) is not None:
            lines.append(shortened)
        failed = self._finish(interrupted)
        if failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        plan = self.session.shard_plan
        if (
            plan is not None
            and plan.empty
            and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED
        ):
            # A shard with none of the cases did its part (an empty report for the merge):
            # pytest's "no tests collected" would fail the CI job for it.
            session.exitstatus = pytest.ExitCode.OK

    def _finish(self, interrupted: bool) -> bool:
        """Aggregate, write report and baselines, apply suite gates. True if a gate failed."""
        from pytest_doceval.run import shards

        session = self.session
        shard, plan = session.options.shard, session.shard_plan
        ran = not session.config.getoption("collectonly", False)
        if plan is not None and ran and not plan.empty:
            self.controller.summary_lines.append(plan.line())  # every shard says how it was split
        try:
            return self.controller.finish(
                json_path=session.options.json_path,
                html_path=session.options.html_path,
                shard=None if shard is None else f"{shard[0]}/{shard[1]}",
                shard_basis=None if shard is None else shards.basis(session.shard_durations),
                empty_shard=plan.empty_line() if plan is not None and plan.empty and ran else None,
                interrupted=interrupted,
                limit=session.options.limit,
            )
        finally:
            session.store.close()  # the suite analyses it kept

    def pytest_report_header(self, config: pytest.Config) -> str:
        from pytest_doceval.run.header import SUITES_FROM_PROJECT, suites_line

        invoked = Path(config.invocation_params.dir)
        return suites_line(config.args, invoked, configured=SUITES_FROM_PROJECT in config.stash)

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        controller = self.controller
        if controller.report is None:
            hints = case_folder_hints(config)
            if hints:
                terminalreporter.section("doceval")
                for line in [*controller.summary_lines, *hints]:
                    terminalreporter.write_line(line, yellow=True)
            return
        from pytest_doceval.report.terminal import summary_lines

        terminalreporter.section("doceval")
        for line in summary_lines(controller.report):
            terminalreporter.write_line(line)
        for line in controller.summary_lines:
            terminalreporter.write_line(line)
        for failure in controller.gate_failures:
            terminalreporter.write_line(f"FAILED {failure}", red=True, bold=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        from pytest_doceval.report.pytest_html import header_cells

        cells[2:2] = header_cells(self.session.catalog.headline_columns())

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        from pytest_doceval.report.pytest_html import row_cells

        row = getattr(report, "doceval_row", None) or {}
        cells[2:2] = row_cells(self.session.catalog.headline_columns(), row.get("metrics", {}))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list[str]) -> None:
        from pytest_doceval.report.pytest_html import skip_log

        if report.skipped and not hasattr(report, "wasxfail"):
            skip_log(report.longrepr, data)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: Any
    ) -> None:
        report = self.controller.report
        if report is not None:
            from pytest_doceval.report.pytest_html import summary_html

            prefix.append(summary_html(report))


def case_folder_hints(config: pytest.Config) -> list[str]:
    """For a run that collected nothing: a case folder given as a path (the suite folder,
    with its suite.toml, is what pytest collects) gets told so."""
    hints = []
    invoked = Path(config.invocation_params.dir)
    for arg in config.args:
        path = invoked / arg.split("::")[0]
        if not path.is_dir() or next(path.rglob("suite.toml"), None) is not None:
            continue
        suite = next((p for p in path.parents if (p / "suite.toml").is_file()), None)
        if suite is not None:
            case = path.relative_to(suite).parts[0]
            # The suite as the user can type it where pytest was started (no machine's
            # absolute folders in a CI log).
            shown = os.path.relpath(suite, invoked)
            hints.append(
                f"hint: {arg} is a case folder of suite {shown}; a suite is collected from its "
                f"folder (suite.toml): pytest --doceval {shown} -k {case}"
            )
    return hints


def _lost_row(report: pytest.TestReport) -> Row:
    from pytest_doceval.rows import new_row, split_key

    path, _, name = report.nodeid.partition("::")
    case, system = split_key(name) if "[" in name else (name, "*")
    row = new_row(Path(path).parent.name, case, system, nodeid=report.nodeid)
    # pytest's own word for it: a failure while the test ran is "failed", in setup "error".
    row["outcome"] = "failed" if report.when == "call" else "error"
    row["message"] = str(report.longrepr)[-2000:]
    return row
