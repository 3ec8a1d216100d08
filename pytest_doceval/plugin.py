"""pytest hooks of pytest-doceval (entry point ``pytest11: doceval``).

Import-light and inert without ``--doceval``: the plugin loads wherever it is installed, so
nothing heavy is imported and nothing is collected unless a run asks for evaluation.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_doceval.rows import Row


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_doceval import hooks

    pluginmanager.add_hookspecs(hooks)


# Reports a run writes when no path is given, in the project root (where baselines go).
JSON_REPORT, HTML_REPORT = "doceval-report.json", "doceval-report.html"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("doceval", "document-AI evaluation (pytest-doceval)")
    group.addoption(
        "--doceval",
        action="store_true",
        help="collect the evaluation suites (suite.toml): one test per (case, system)",
    )
    group.addoption(
        "--doceval-update",
        action="store_true",
        help="accept today's numbers as the new baselines (written atomically)",
    )
    group.addoption(
        "--doceval-json",
        metavar="PATH",
        default=None,
        help=f"where to write the JSON report (default: {JSON_REPORT} in the project root, "
        "beside the baselines)",
    )
    group.addoption(
        "--doceval-html",
        metavar="PATH",
        default=None,
        help="where to write the self-contained HTML report ('' to skip; default: "
        f"{HTML_REPORT} in the project root)",
    )
    group.addoption(
        "--doceval-cache-dir",
        metavar="DIR",
        default=None,
        help="the store's folder (default: [tool.doceval] cache, '.doceval-cache')",
    )
    group.addoption(
        "--doceval-cache",
        choices=("off", "read", "write", "rw"),
        default=None,
        help="the store of outputs, model responses and embeddings: off, read (use, never "
        "store), write (recompute and store) or rw (default)",
    )
    group.addoption(
        "--doceval-no-cache",
        action="store_true",
        help="the same as --doceval-cache=off: re-run every parser and model",
    )
    group.addoption(
        "--doceval-executor",
        metavar="SPEC",
        default=None,
        help="where CPU stages (parsing, OCR) run: processes (default: one per core), threads, "
        "or dask:tcp://HOST:PORT (a Dask cluster; [tool.doceval] executor)",
    )
    group.addoption(
        "--doceval-bootstrap",
        type=int,
        metavar="N",
        default=None,
        help="bootstrap resamples for confidence intervals (default 1000)",
    )
    group.addoption(
        "--doceval-seed", type=int, metavar="SEED", default=None, help="bootstrap seed (default 0)"
    )
    group.addoption(
        "--doceval-shard",
        metavar="K/N",
        default=None,
        help="run the K-th of N deterministic shards of the cases (merge with `doceval merge`)",
    )


# Options that mean nothing without --doceval: given alone, they are a mistake worth saying.
_NEEDS_DOCEVAL = (
    ("--doceval-update", "doceval_update"),
    ("--doceval-shard", "doceval_shard"),
    ("--doceval-bootstrap", "doceval_bootstrap"),
    ("--doceval-seed", "doceval_seed"),
    ("--doceval-no-cache", "doceval_no_cache"),
    ("--doceval-cache", "doceval_cache"),
    ("--doceval-cache-dir", "doceval_cache_dir"),
    ("--doceval-executor", "doceval_executor"),
)


def _check_numbers(config: pytest.Config) -> None:
    """Refuse bad numeric options before anything runs (not after every test has)."""
    resamples = config.getoption("doceval_bootstrap")
    if resamples is not None and resamples < 100:
        raise pytest.UsageError(
            f"--doceval-bootstrap {resamples}: need at least 100 resamples (default 1000)"
        )
    seed = config.getoption("doceval_seed")
    if seed is not None and seed < 0:
        raise pytest.UsageError(f"--doceval-seed {seed}: a seed is a whole number >= 0")


def lead_with_cause(message: str, rootpath: Path) -> str:
    """``path: cause`` becomes ``cause (path)``, paths relative to the rootdir: pytest's short
    summary line already starts with the test id, and 80 columns should still show why."""
    message = message.replace(f"{rootpath}{os.sep}", "")
    first, newline, rest = message.partition("\n")
    where, sep, cause = first.partition(": ")
    if sep and cause and " " not in where and ("/" in where or "." in where):
        first = f"{cause} ({where})"
    return first + newline + rest


def _session(config: pytest.Config) -> Any:
    from pytest_doceval.session import SESSION_KEY

    return config.stash.get(SESSION_KEY, None)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    if config.getoption("doceval", False):
        # Registered before pytest's own clean-ups, so it runs after them (see `_freeze_gc`).
        config.add_cleanup(_unfreeze_gc)


def _freeze_gc() -> None:
    """At the end of a run pytest collects garbage five times over (to surface unraisable
    exceptions), and each pass walks every live object: the items, reports and rows of a big
    suite, ~0.7 ms a test. One collection here frees what is garbage (its unraisable
    exceptions still reach pytest's hook); freezing the survivors makes pytest's passes skip
    them. Undone after pytest's clean-up, so an in-process run (pytester) leaks nothing."""
    gc.collect()
    gc.freeze()


def _unfreeze_gc() -> None:
    gc.unfreeze()


# Tests between two freezes of what is alive (see `SessionHooks.pytest_runtest_logfinish`).
FREEZE_EVERY = 1000


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("doceval", False):
        given = [flag for flag, dest in _NEEDS_DOCEVAL if config.getoption(dest, None)]
        if given:
            raise pytest.UsageError(
                f"{', '.join(given)} only applies to an evaluation run: add --doceval "
                f"(pytest --doceval {' '.join(given)})"
            )
        return
    _check_numbers(config)
    from pytest_doceval.config import ProjectConfig, StatsConfig, find_project_root
    from pytest_doceval.errors import DocevalError
    from pytest_doceval.session import SESSION_KEY, DocevalSession, Options, parse_shard

    invoked = Path(config.invocation_params.dir)
    root = find_project_root(*_given_paths(config), config.rootpath, invoked)
    try:
        project = ProjectConfig.load(root)
    except DocevalError as exc:
        raise pytest.UsageError(str(exc)) from None
    cache_dir = Path(config.getoption("doceval_cache_dir") or root / project.cache)
    html = config.getoption("doceval_html")
    options = Options(
        update=config.getoption("doceval_update"),
        json_path=invoked / (config.getoption("doceval_json") or root / JSON_REPORT),
        html_path=None if html == "" else invoked / (html or root / HTML_REPORT),
        cache_dir=cache_dir,
        cache_mode="off"
        if config.getoption("doceval_no_cache")
        else config.getoption("doceval_cache") or "rw",
        stats=StatsConfig(
            resamples=config.getoption("doceval_bootstrap") or project.bootstrap_resamples,
            confidence=project.confidence,
            seed=(
                config.getoption("doceval_seed")
                if config.getoption("doceval_seed") is not None
                else project.seed
            ),
        ),
        executor=_executor(config.getoption("doceval_executor") or project.executor),
        shard=parse_shard(config.getoption("doceval_shard")),
    )
    session = DocevalSession(config, project, options, root=root)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(SessionHooks(session), "doceval-session")
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # `pytest --doceval` with no paths runs the evaluation suites, not the test paths.
        suites = [str(root / p) for p in project.suites if (root / p).exists()]
        if suites:
            config.args = suites


def _given_paths(config: pytest.Config) -> list[Path]:
    """The existing paths given on the command line, first: the doceval project is the one of
    the suites asked for. (pytest's rootdir can be elsewhere: it is fixed before plugins load,
    so it reads ``--doceval-html ''``'s empty value as a path, the current folder.)"""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return []
    invoked = Path(config.invocation_params.dir)
    paths = [invoked / arg.split("::")[0] for arg in config.args if arg]
    return [p.resolve() for p in paths if p.exists()]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name != "suite.toml" or _session(parent.config) is None:
        return None
    from pytest_doceval.items import SuiteFile

    return SuiteFile.from_parent(parent, path=file_path)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not getattr(item, "is_doceval_item", False):
        return report
    from pytest_doceval.errors import DocevalError

    if call.excinfo is not None and isinstance(call.excinfo.value, DocevalError):
        # The cause first, not a traceback into the plugin: pytest's short summary already
        # leads with the test id, and a gate or input error names its case or file. A user's
        # parser that raised keeps its own traceback under --tb=long.
        error = call.excinfo.value
        report.longrepr = lead_with_cause(str(error), item.config.rootpath)
        cause = error.__cause__
        if (
            cause is not None
            and not isinstance(cause, DocevalError)
            and item.config.getoption("tbstyle", "auto") == "long"
        ):
            import traceback

            trace = "".join(traceback.format_exception(cause))
            report.longrepr = f"{report.longrepr}\n\n{trace}"
    if call.when == "teardown":  # the row went with the setup or call report
        return report
    row = getattr(item, "doceval_row", None)
    if row is None:  # a suite that could not be loaded: logged as a lost row
        return report
    if call.when == "setup" and (report.failed or report.skipped):
        row["outcome"] = "skipped" if report.skipped else "error"
        row["message"] = str(call.excinfo.value) if call.excinfo else None
    elif call.when == "call":
        row["outcome"] = report.outcome
        if report.failed:
            row["message"] = str(call.excinfo.value) if call.excinfo else str(report.longrepr)
    else:
        return report  # only the report that ends a test carries its row
    report.doceval_row = row  # type: ignore[attr-defined]
    # The suite file itself, not a node id pytest made relative to a rootdir that may not hold it.
    report.doceval_suite_file = str(item.path)  # type: ignore[attr-defined]
    return report


def _executor(text: str) -> str:
    """The executor spec, checked now: a typo is a usage error, not a failure of every test."""
    from pytest_doceval.engine.executors import parse_executor
    from pytest_doceval.errors import DocevalError

    try:
        return parse_executor(text).text
    except DocevalError as exc:
        raise pytest.UsageError(f"--doceval-executor / [tool.doceval] executor: {exc}") from None


def _worker_queue(
    item: pytest.Item, nextitem: pytest.Item | None, seen: set[int]
) -> list[pytest.Item]:
    """An xdist worker's test now, next and what was queued since the last call (xdist's
    queue of item indices; `seen` holds the indices already returned). New tests are appended
    at the queue's end, so it is read from the end back to the first one seen: reading the
    whole queue for every test was quadratic once work stealing gave each worker its whole
    share (35,000 tests) at once."""
    queued: list[pytest.Item] = [item] + ([nextitem] if nextitem is not None else [])
    items = item.session.items
    for plugin in item.config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if torun is not None and hasattr(torun, "lock"):
            fresh: list[int] = []
            with torun.lock() as indices:
                for index in reversed(indices):
                    if index in seen:
                        break
                    if isinstance(index, int):
                        fresh.append(index)
            seen.update(fresh)
            queued += [items[i] for i in reversed(fresh)]
            break
    return queued


class SessionHooks:
    """Hooks bound to one doceval session, registered only for runs with ``--doceval``."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._is_suite_dir: dict[Path, bool] = {}
        self._suite_files: dict[str, Path] = {}
        self._tests = 0
        self._queued: set[int] = set()  # an xdist worker's queue indices handed to the engine

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

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        row = getattr(report, "doceval_row", None)
        if row is not None:
            file = getattr(report, "doceval_suite_file", None)
            self.session.add_row(Path(file) if file else self._suite_file(report.nodeid), row)
        elif report.failed and report.nodeid.split("::")[0].endswith("suite.toml"):
            # A broken suite, or an item whose xdist worker crashed: keep it in the report.
            self.session.add_row(self._suite_file(report.nodeid), _lost_row(report))

    @pytest.hookimpl(trylast=True)  # the start line after pytest's "collected N items"
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        gc.freeze()  # see pytest_runtest_logfinish
        # An xdist worker plans only the tests it is given (`pytest_runtest_protocol`).
        if not _is_worker(session.config):
            self.session.plan(session.items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        if _is_worker(item.config):
            self.session.plan(_worker_queue(item, nextitem, self._queued), announce=False)

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
        self.session.configure_node(node.workerinput)

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's: a worker finished
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        totals = getattr(node, "workeroutput", {}).get("doceval_engine")
        if totals:
            self.session.add_worker_totals(totals)

    @pytest.hookimpl(trylast=True)  # a progress line after pytest's own writes, not on them
    def pytest_runtest_logfinish(self) -> None:
        """Freeze what is alive every FREEZE_EVERY tests. A big suite keeps every item, row
        and report to the end, and Python's full garbage collections, each a walk over all of
        them, ran every time the heap grew by a quarter: about a third of the run time of
        7,000 facts. Frozen objects are skipped by the collector (cycles among them that die
        are freed after the run, when `_unfreeze_gc` thaws them)."""
        self._tests += 1
        if self._tests % FREEZE_EVERY == 0:
            gc.freeze()
        self.session.between_tests()  # a progress line, when one is due

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

    def pytest_unconfigure(self) -> None:
        _freeze_gc()

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
    for arg in config.args:
        path = Path(config.invocation_params.dir) / arg.split("::")[0]
        if not path.is_dir() or next(path.rglob("suite.toml"), None) is not None:
            continue
        suite = next((p for p in path.parents if (p / "suite.toml").is_file()), None)
        if suite is not None:
            case = path.relative_to(suite).parts[0]
            hints.append(
                f"hint: {arg} is a case folder of suite {suite}; a suite is collected from its "
                f"folder (suite.toml): pytest --doceval {suite} -k {case}"
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
