"""pytest hooks of pytest-doceval (entry point ``pytest11: doceval``).

Import-light and inert without ``--doceval``: the plugin loads wherever it is installed, so
nothing heavy is imported and nothing is collected unless a run asks for evaluation.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_doceval.session import DocevalSession, ExecutorChoice


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
        help="the store of outputs, model responses, embeddings and results: off, read (use, never "
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
        help="run the K-th of N deterministic shards of the cases (merge with `doceval merge`), "
        "balanced by the case durations of the last report of a whole run, if there is one",
    )
    group.addoption(
        "--doceval-limit",
        type=int,
        metavar="N",
        default=None,
        help="a smoke run: only the first N cases of each suite (every system of each); the "
        "report says so, and no baseline is updated",
    )
    group.addoption(
        "--doceval-shard-durations",
        metavar="REPORT",
        default=None,
        help="the report (a whole run's, or a merge of shards) whose durations balance the "
        "shards (default: the JSON report's path)",
    )


# Options that mean nothing without --doceval: given alone, they are a mistake worth saying.
_NEEDS_DOCEVAL = (
    ("--doceval-update", "doceval_update"),
    ("--doceval-limit", "doceval_limit"),
    ("--doceval-shard", "doceval_shard"),
    ("--doceval-shard-durations", "doceval_shard_durations"),
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
    from pytest_doceval.run.limit import check_limit

    try:
        check_limit(config.getoption("doceval_limit"), update=config.getoption("doceval_update"))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def lead_with_cause(message: str, *roots: Path) -> str:
    """``path: cause`` becomes ``cause (path)``, paths relative to `roots` (the doceval
    project's, pytest's rootdir): pytest's short summary line already starts with the test
    id, and 80 columns should still show why."""
    from pytest_doceval.errors import relative_paths

    message = relative_paths(message, *roots)
    first, newline, rest = message.partition("\n")
    where, sep, cause = first.partition(": ")
    if sep and cause and " " not in where and ("/" in where or "." in where):
        first = f"{cause} ({where})"
    return first + newline + rest


def _session(config: pytest.Config) -> DocevalSession | None:
    from pytest_doceval.session import SESSION_KEY

    return config.stash.get(SESSION_KEY, None)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    if config.getoption("doceval", False):
        # Registered before pytest's own clean-ups, so it runs after them (see
        # `session_hooks.freeze_gc`).
        config.add_cleanup(_unfreeze_gc)


def _unfreeze_gc() -> None:
    gc.unfreeze()


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
    from pytest_doceval.run import header
    from pytest_doceval.run.shards import durations_reports
    from pytest_doceval.session import (
        SESSION_KEY,
        DocevalSession,
        Options,
        Role,
        parse_shard,
    )

    invoked = Path(config.invocation_params.dir)
    root = find_project_root(*_given_paths(config), config.rootpath, invoked)
    try:
        project = ProjectConfig.load(root)
    except DocevalError as exc:
        raise pytest.UsageError(str(exc)) from None
    cache_dir = Path(config.getoption("doceval_cache_dir") or root / project.cache)
    html = config.getoption("doceval_html")
    json_path = invoked / (config.getoption("doceval_json") or root / JSON_REPORT)
    durations = config.getoption("doceval_shard_durations")
    options = Options(
        update=config.getoption("doceval_update"),
        json_path=json_path,
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
        shard_durations=durations_reports(
            invoked / durations if durations else None, json_path, root / JSON_REPORT
        ),
        limit=config.getoption("doceval_limit"),
        metrics_as_properties=bool(config.getoption("xmlpath", None)),  # junitxml's --junitxml
    )
    role = Role.of(config)
    session = DocevalSession(
        config,
        project,
        options,
        root=root,
        role=role,
        executor=_worker_executor(config, options.executor),
    )
    config.stash[SESSION_KEY] = session
    from pytest_doceval.session_hooks import register

    register(config, session)
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # `pytest --doceval` with no paths runs the evaluation suites, not the test paths.
        suites = _suite_paths(project, root)
        if suites:
            config.args = suites
            # They are the run's arguments now: pytest's header names no testpaths (run/header.py).
            config.args_source = pytest.Config.ArgsSource.ARGS
            config.stash[header.SUITES_FROM_PROJECT] = True


def _suite_paths(project: Any, root: Path) -> list[str]:
    """The existing folders of ``[tool.doceval] suites``: what ``pytest --doceval`` without
    paths evaluates."""
    return [str(root / p) for p in project.suites if (root / p).exists()]


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """`pytest --doceval` without paths: let pytest find its first conftest files from the
    suites, not from ``testpaths``, so the main job never imports the project's own test suite
    (its ``tests/conftest.py`` and what that imports). `pytest_configure` sets the real
    arguments; a project whose configuration does not load is reported there."""
    namespace = early_config.known_args_namespace
    if not getattr(namespace, "doceval", False) or getattr(namespace, "file_or_dir", None):
        return
    from pytest_doceval.config import ProjectConfig, find_project_root
    from pytest_doceval.errors import DocevalError

    root = find_project_root(early_config.rootpath, Path(early_config.invocation_params.dir))
    try:
        suites = _suite_paths(ProjectConfig.load(root), root)
    except DocevalError:
        return
    if suites:
        namespace.file_or_dir = suites


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


_KEYWORDS: pytest.StashKey[Any] = pytest.StashKey()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not getattr(item, "is_doceval_item", False):
        return report
    # pytest gives each of a test's three reports a copy of its keywords, kept to the end of the
    # run: one dict for the three (they are equal) is 0.5 KB a test less at 200,000 tests.
    keywords = item.stash.get(_KEYWORDS, None)
    if keywords is not None and keywords == report.keywords:
        report.keywords = keywords
    else:
        item.stash[_KEYWORDS] = report.keywords
    from pytest_doceval.errors import DocevalError, relative_paths

    session = _session(item.config)
    roots = (item.config.rootpath, *([session.rootpath] if session is not None else []))

    if call.excinfo is not None and isinstance(call.excinfo.value, DocevalError):
        # The cause first, not a traceback into the plugin: pytest's short summary already
        # leads with the test id, and a gate or input error names its case or file. A user's
        # parser that raised keeps its own traceback under --tb=long.
        error = call.excinfo.value
        report.longrepr = lead_with_cause(str(error), *roots)
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
        row["message"] = relative_paths(str(call.excinfo.value), *roots) if call.excinfo else None
    elif call.when == "call":
        row["outcome"] = report.outcome
        if report.failed:
            failure = str(call.excinfo.value) if call.excinfo else str(report.longrepr)
            row["message"] = relative_paths(failure, *roots)
    else:
        return report  # only the report that ends a test carries its row
    report.doceval_row = row  # type: ignore[attr-defined]
    # The suite file itself, not a node id pytest made relative to a rootdir that may not hold it.
    report.doceval_suite_file = sys.intern(str(item.path))  # type: ignore[attr-defined]
    return report


# xdist carries a test's report to the controller through execnet's serialiser, which walks it
# object by object in Python (a row's metrics, counts and views; keywords, properties,
# sections): most of what a warm `-n 2` run's workers and controller spent per test beyond the
# test itself. An xdist worker sends a test's report as one JSON text instead (json's C code on
# both sides); pytest's own report serialisation (`_report_to_json`) makes it of builtin
# types, as the row is by contract. Only on the wire from a worker: a plain run's reports
# (pytest-reportlog writes them) keep pytest's form.
_REPORT_AS_JSON = "doceval_report_json"
_TUPLES = ("location",)  # JSON has no tuples; pytest's report fields that are tuples
_TUPLE_LISTS = ("sections", "user_properties")  # lists of tuples


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(
    config: pytest.Config, report: Any
) -> Generator[None, dict[str, Any] | None, dict[str, Any] | None]:
    data = yield
    if data is None or data.get("$report_type") != "TestReport":
        return data
    if not hasattr(config, "workerinput") or _session(config) is None:
        return data
    import json

    fields = {k: v for k, v in data.items() if k != "$report_type"}
    try:
        text = json.dumps(fields, ensure_ascii=False)
    except (TypeError, ValueError):  # a plugin's attribute json cannot write: sent as it is
        return data
    return {"$report_type": data["$report_type"], _REPORT_AS_JSON: text}


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(
    config: pytest.Config, data: dict[str, Any]
) -> Generator[None, Any, Any]:
    text = data.pop(_REPORT_AS_JSON, None)
    if text is not None:
        import json

        fields = json.loads(text)
        for name in _TUPLES:
            if isinstance(fields.get(name), list):
                fields[name] = tuple(fields[name])
        for name in _TUPLE_LISTS:
            if isinstance(fields.get(name), list):
                fields[name] = [tuple(v) if isinstance(v, list) else v for v in fields[name]]
        data.update(fields)
    return (yield)


def _worker_executor(config: pytest.Config, executor: str) -> ExecutorChoice | None:
    """An xdist worker's executor: the controller's shared pool (for ``processes``) and where
    it publishes its progress, as its ``workerinput`` says; None elsewhere."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    from pytest_doceval.run.worker_progress import FOLDER_KEY
    from pytest_doceval.session import ExecutorChoice
    from pytest_doceval.session_hooks.controlling import POOL_KEY

    folder = workerinput.get(FOLDER_KEY)
    return ExecutorChoice(
        executor,
        publish_to=Path(folder) / f"{workerinput['workerid']}.json" if folder else None,
        shared_pool=workerinput.get(POOL_KEY),
    )


def _executor(text: str) -> str:
    """The executor spec, checked now: a typo is a usage error, not a failure of every test."""
    from pytest_doceval.engine.executors import parse_executor
    from pytest_doceval.errors import DocevalError

    try:
        return parse_executor(text).text
    except DocevalError as exc:
        raise pytest.UsageError(f"--doceval-executor / [tool.doceval] executor: {exc}") from None
