"""The hooks of one doceval run: registered by the plugin (`plugin.pytest_configure`) only
when ``--doceval`` is given, so a plain pytest run never imports this module.

They hand pytest's events to the `DocevalSession`: collection (a suite's case folders are data,
not tests), planning the stages of the tests in order (an xdist worker plans what it is given,
as it is given), rows from test reports, xdist's scheduling and workers, progress lines between
tests, and at the end the report, the terminal summary and pytest-html's columns.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_doceval.rows import Row


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# Tests between two freezes of what is alive (see `SessionHooks.pytest_runtest_logfinish`).
FREEZE_EVERY = 1000


def freeze_gc() -> None:
    """At the end of a run pytest collects garbage five times over (to surface unraisable
    exceptions), and each pass walks every live object: the items, reports and rows of a big
    suite, ~0.7 ms a test. One collection here frees what is garbage (its unraisable
    exceptions still reach pytest's hook); freezing the survivors makes pytest's passes skip
    them. Undone after pytest's clean-up, so an in-process run (pytester) leaks nothing."""
    gc.collect()
    gc.freeze()


def _worker_queue(
    item: pytest.Item, nextitem: pytest.Item | None, seen: set[int]
) -> list[pytest.Item]:
    """An xdist worker's test now, next and what was queued since the last call (xdist's
    queue of item indices; `seen` holds the indices already returned). New tests are appended
    at the queue's end, so it is read from the end back to the first one seen: reading the
    whole queue for every test was quadratic once work stealing gave each worker its whole
    share (35,000 tests) at once."""
    queued: list[pytest.Item] = [item] + ([nextitem] if nextitem is not None else [])
    torun = _xdist_queue(item.config)
    if torun is not None:
        fresh: list[int] = []
        with torun.lock() as indices:
            for index in reversed(indices):
                if index in seen:
                    break
                if isinstance(index, int):
                    fresh.append(index)
        seen.update(fresh)
        items = item.session.items
        queued += [items[i] for i in reversed(fresh)]
    return queued


_XDIST_QUEUE: pytest.StashKey[Any] = pytest.StashKey()


def _xdist_queue(config: pytest.Config) -> Any:
    """xdist's queue of this worker's item indices (its worker plugin's ``torun``), found
    once: looking through every plugin for it, for every test, was a cost of its own."""
    if _XDIST_QUEUE not in config.stash:
        found = None
        for plugin in config.pluginmanager.get_plugins():
            torun = getattr(plugin, "torun", None)
            if torun is not None and hasattr(torun, "lock"):
                found = torun
                break
        config.stash[_XDIST_QUEUE] = found
    return config.stash[_XDIST_QUEUE]


class SessionHooks:
    """Hooks bound to one doceval session, registered only for runs with ``--doceval``."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._is_suite_dir: dict[Path, bool] = {}
        self._suite_files: dict[str, Path] = {}
        self._paths: dict[str, Path] = {}
        self._tests = 0
        self._queued: set[int] = set()  # an xdist worker's queue indices handed to the engine
        self._worker = _is_worker(session.config)

    def _holds_suite(self, folder: Path) -> bool:
        found = self._is_suite_dir.get(folder)
        if found is None:
            found = self._is_suite_dir[folder] = (folder / "suite.toml").is_file()
        return found

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        """A suite's folders (its cases, their outputs, a system's saved pages) are data the
        suite reads, not tests: pytest need not walk them. Walking thousands of case folders
        was most of the collection time of a big suite."""
        if self._holds_suite(collection_path.parent) and collection_path.is_dir():
            return True
        return None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # An xdist controller collects nothing: the suites its workers will run are the ones
        # the arguments name, made (and the report's imports loaded) while the workers start.
        config = session.config
        if not self._worker:
            from pytest_doceval.run.catalog import suite_files

            invoked = Path(config.invocation_params.dir)
            norecurse = config.getini("norecursedirs")

            def found() -> list[Path]:
                files = suite_files(config.args, invoked, norecurse=norecurse)
                return [file.resolve() for file in files]

            self.session.controller.prepare_found(found)

    def pytest_report_header(self, config: pytest.Config) -> str:
        from pytest_doceval.run.header import SUITES_FROM_PROJECT, suites_line

        invoked = Path(config.invocation_params.dir)
        return suites_line(config.args, invoked, configured=SUITES_FROM_PROJECT in config.stash)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self._worker:  # its rows travel on the reports; the controller keeps them
            return
        row = getattr(report, "doceval_row", None)
        if row is not None:
            file = getattr(report, "doceval_suite_file", None)
            self.session.add_row(self._path(file) if file else self._suite_file(report.nodeid), row)
        elif report.failed and report.nodeid.split("::")[0].endswith("suite.toml"):
            # A broken suite, or an item whose xdist worker crashed: keep it in the report.
            self.session.add_row(self._suite_file(report.nodeid), _lost_row(report))

    # First: the split is of every case, before -k or -m deselect any (the same in every shard).
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self.session.options.limit is not None:  # a smoke run: the first N cases of each suite
            from pytest_doceval.run.limit import first_cases

            kept, limited = first_cases(items, _case_of, self.session.options.limit)
            if limited:
                config.hook.pytest_deselected(items=limited)
                items[:] = kept
        shard = self.session.options.shard
        if shard is None:
            return
        from pytest_doceval.run.shards import select

        kept, dropped, plan = select(items, _case_of, shard, self.session.shard_durations)
        self.session.shard_plan = plan
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:  # the xdist controller collects nothing: it is told
            workeroutput["doceval_shard"] = plan.to_dict()
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    @pytest.hookimpl(trylast=True)  # the start line after pytest's "collected N items"
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        gc.freeze()  # see pytest_runtest_logfinish
        # An xdist worker plans only the tests it is given (`pytest_runtest_protocol`).
        if not _is_worker(session.config):
            self.session.stages.plan(session.items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        if _is_worker(item.config):
            self.session.stages.plan(_worker_queue(item, nextitem, self._queued), announce=False)

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: how tests go out to workers
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``--dist load`` (xdist's default under ``-n``) becomes work stealing: each worker
        gets its whole share of the tests at once, so its engine plans all their stages at the
        start (load scheduling hands out two or three tests at a time, and a worker's requests
        went out in trickles); a worker that runs out takes half of another's queue. Any other
        ``--dist`` is kept."""
        if config.getoption("dist") != "load":
            return None
        from xdist.scheduler import WorkStealingScheduling

        return WorkStealingScheduling(config, log)

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: a worker is being set up
    def pytest_configure_node(self, node: Any) -> None:
        self.session.stages.configure_node(node.workerinput)

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: a worker finished
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        totals = getattr(node, "workeroutput", {}).get("doceval_engine")
        if totals:
            self.session.stages.add_worker_totals(totals)
        self.session.stages.node_down(str(node.workerinput["workerid"]))
        plan = getattr(node, "workeroutput", {}).get("doceval_shard")
        if plan:
            from pytest_doceval.run.shards import ShardPlan

            self.session.shard_plan = ShardPlan.from_dict(plan)

    @pytest.hookimpl(trylast=True)  # a progress line after pytest's own writes, not on them
    def pytest_runtest_logfinish(self) -> None:
        """Freeze what is alive every FREEZE_EVERY tests. A big suite keeps every item, row
        and report to the end, and Python's full garbage collections, each a walk over all of
        them, ran every time the heap grew by a quarter: about a third of the run time of
        7,000 facts. Frozen objects are skipped by the collector (cycles among them that die
        are freed after the run, when the plugin's `_unfreeze_gc` thaws them)."""
        self._tests += 1
        if self._tests % FREEZE_EVERY == 0:
            gc.freeze()
        self.session.stages.between_tests()  # a progress line, when one is due

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
        self.session.close_models(interrupted=interrupted)
        if _is_worker(session.config):
            return
        if (
            self.session.finish(interrupted=interrupted)
            and session.exitstatus == pytest.ExitCode.OK
        ):
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

    def pytest_unconfigure(self) -> None:
        freeze_gc()

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if _is_worker(config):
            return
        if self.session.report is None:
            hints = case_folder_hints(config)
            if hints:
                terminalreporter.section("doceval")
                for line in [*self.session.summary_lines, *hints]:
                    terminalreporter.write_line(line, yellow=True)
            return
        from pytest_doceval.report.terminal import summary_lines

        terminalreporter.section("doceval")
        for line in summary_lines(self.session.report):
            terminalreporter.write_line(line)
        for line in self.session.summary_lines:
            terminalreporter.write_line(line)
        for failure in self.session.gate_failures:
            terminalreporter.write_line(f"FAILED {failure}", red=True, bold=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        from pytest_doceval.report.pytest_html import header_cells

        cells[2:2] = header_cells(self.session.headline_columns())

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        from pytest_doceval.report.pytest_html import row_cells

        row = getattr(report, "doceval_row", None) or {}
        cells[2:2] = row_cells(self.session.headline_columns(), row.get("metrics", {}))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list[str]) -> None:
        from pytest_doceval.report.pytest_html import skip_log

        if report.skipped and not hasattr(report, "wasxfail"):
            skip_log(report.longrepr, data)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: Any
    ) -> None:
        report = getattr(self.session, "report", None)
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


def _case_of(item: pytest.Item) -> tuple[str, str] | None:
    """The (suite, case) an item belongs to, for shards: a case's every system together; a
    broken suite's error item is a case of its own."""
    ref = getattr(item, "ref", None)
    if getattr(item, "is_doceval_item", False):
        return (item.path.parent.name, ref.case if ref is not None else "")
    return None


def _lost_row(report: pytest.TestReport) -> Row:
    from pytest_doceval.rows import new_row, split_key

    path, _, name = report.nodeid.partition("::")
    case, system = split_key(name) if "[" in name else (name, "*")
    row = new_row(Path(path).parent.name, case, system, nodeid=report.nodeid)
    # pytest's own word for it: a failure while the test ran is "failed", in setup "error".
    row["outcome"] = "failed" if report.when == "call" else "error"
    row["message"] = str(report.longrepr)[-2000:]
    return row
