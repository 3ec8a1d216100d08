"""The doceval session: the wiring of one run, kept in ``config.stash`` from configure to the end.

It builds the run's parts once -- the store, the models, the suite catalogue, the baselines, the
planner of tests, and for its role the stage engine (a process that runs tests: a plain run or
an xdist worker) and the controller (a process that reports: a plain run or the xdist
controller) -- and holds nothing per test: a test's state is its `PlannedTest`, on its item.
The role's hooks (`session_hooks`) drive it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_doceval.config import ProjectConfig, StatsConfig
from pytest_doceval.errors import DocevalError
from pytest_doceval.kinds import CaseRef
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.run import shards
from pytest_doceval.run.analysis_cache import AnalysisCache
from pytest_doceval.run.case_gates import SuiteBaselines
from pytest_doceval.run.catalog import SuiteCatalog
from pytest_doceval.run.controller import Controller, partial_record
from pytest_doceval.run.planned import PlannedTest, Planner
from pytest_doceval.run.score_key import ScoreKeys
from pytest_doceval.run.stage_run import StageRun
from pytest_doceval.store import Store

if TYPE_CHECKING:
    from pytest_doceval.engine import ExecutorSpec

SESSION_KEY: pytest.StashKey[DocevalSession] = pytest.StashKey()


class Role(Enum):
    """What this process does in the run: plain runs and reports; an xdist worker runs the
    tests it is handed; the xdist controller hands them out and reports."""

    PLAIN = "plain"
    WORKER = "xdist worker"
    CONTROLLER = "xdist controller"

    @property
    def runs_tests(self) -> bool:
        return self is not Role.CONTROLLER

    @property
    def reports(self) -> bool:
        return self is not Role.WORKER

    @classmethod
    def of(cls, config: pytest.Config) -> Role:
        if hasattr(config, "workerinput"):
            return cls.WORKER
        processes = config.getoption("numprocesses", None)
        if processes and config.getoption("dist", "no") != "no":
            return cls.CONTROLLER
        return cls.PLAIN


@dataclass(frozen=True)
class Options:
    """Command-line options of a doceval run."""

    update: bool
    json_path: Path
    html_path: Path | None
    cache_dir: Path | None
    cache_mode: str
    executor: str
    stats: StatsConfig
    shard: tuple[int, int] | None
    shard_durations: tuple[Path, ...]  # reports whose recorded durations balance the shards
    limit: int | None = None  # the first N cases of each suite (run/limit.py)
    # Each test's metrics as its `user_properties`, for the one who reads them there: junitxml
    # (its <property> elements). Not otherwise: three kilobytes a test that 100,000 tests'
    # reports would keep to the end of the run.
    metrics_as_properties: bool = False


def parse_shard(text: str | None) -> tuple[int, int] | None:
    try:
        return shards.parse_shard(text)
    except ValueError as exc:
        raise pytest.UsageError(f"--doceval-shard {exc}") from None


class DocevalSession:
    """The run's parts (see the module docstring)."""

    def __init__(
        self,
        config: pytest.Config,
        project: ProjectConfig,
        options: Options,
        *,
        root: Path,
        role: Role,
        executor: ExecutorChoice | None = None,
    ) -> None:
        self.config = config
        self.project = project
        self.options = options
        self.role = role
        self.rootpath = root  # the doceval project's root: baselines and cache live here
        workerinput = getattr(config, "workerinput", None)
        # One store for outputs, responses, embeddings and scores; xdist workers share the run id.
        self.store = Store(
            options.cache_dir,
            options.cache_mode,
            run_id=workerinput["testrunuid"] if workerinput else None,
        )
        self.models = _model_runtime(config, root, self.store)
        self.catalog = SuiteCatalog(config, project, self.models)
        self.baselines = SuiteBaselines(root / project.baselines)
        # Reports, baselines and the store are never a score's inputs.
        not_inputs = [root / project.baselines, options.json_path]
        not_inputs += [p for p in (options.cache_dir, options.html_path) if p is not None]
        self.planner = Planner(
            suite=self.catalog.suite,
            baselines=self.baselines,
            score_keys=ScoreKeys(self.store, root, not_inputs=not_inputs),
            store=self.store,
            project_root=root,
            defaults=self.catalog.defaults,
        )
        # A shard run balances its cases by the durations of the last whole run (or none).
        self.shard_durations = (
            shards.load_durations(options.shard_durations) if options.shard else {}
        )
        self.shard_plan: shards.ShardPlan | None = None  # set once the tests are collected
        self.stages: StageRun | None = None
        if role.runs_tests:
            choice = executor or ExecutorChoice(options.executor)
            self.stages = StageRun(
                config,
                executor=choice.spec,
                store=self.store,
                models=self.models,
                publish_to=choice.publish_to,
            )
        self.controller: Controller | None = None
        if role.reports:
            self.controller = Controller(
                suite=self.catalog.suite,
                baselines=self.baselines,
                stats=options.stats,
                update=options.update,
                root=root,
                invoked_in=Path(config.invocation_params.dir),
                prepare_ahead=role is Role.CONTROLLER,
                analysis=AnalysisCache(self.store),
                record=partial_record(options.json_path),
                rows_read_later=bool(config.getoption("htmlpath", None)),  # pytest-html's
            )

    def plan(self, suite_file: Path, ref: CaseRef) -> PlannedTest:
        return self.planner.plan(suite_file, ref)

    def close(self, *, interrupted: bool) -> None:
        """Stop the engine and the models, and write the store's last rows."""
        if self.stages is not None:
            self.stages.close(interrupted=interrupted)
        self.models.close()
        self.store.close()


@dataclass(frozen=True)
class ExecutorChoice:
    """Where a process that runs tests runs its CPU stages: the ``--doceval-executor`` spec
    (``processes`` a pool of this process sized to the machine; in an xdist worker, the
    controller's shared pool) and, for an xdist worker, the file it publishes its state in."""

    text: str
    publish_to: Path | None = None
    shared_pool: str | None = None  # an xdist worker: the controller's pool's address

    @property
    def spec(self) -> ExecutorSpec:
        from pytest_doceval.engine import parse_executor

        spec = parse_executor(self.text)
        if self.shared_pool is not None and spec.kind == "processes":
            return parse_executor(f"shared:{self.shared_pool}")
        return spec


def _model_runtime(config: pytest.Config, root: Path, store: Store) -> ModelRuntime:
    """The run's models from ``[tool.doceval.models.*]`` (a bad table stops the run at once)."""
    from pytest_doceval.models.config import load_models

    pyproject = root / "pyproject.toml"
    try:
        configs = load_models(pyproject)
    except DocevalError as exc:
        raise pytest.UsageError(str(exc)) from None
    workerinput = getattr(config, "workerinput", None)
    return ModelRuntime(
        configs,
        store=store,
        workers=int(workerinput["workercount"]) if workerinput else 1,
        source=str(pyproject),
    )
