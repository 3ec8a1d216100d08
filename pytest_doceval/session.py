"""The doceval session: one object from configure to sessionfinish, kept in ``config.stash``.

Workers (pytest-xdist) and a plain run evaluate items through it; only the controller (or the
plain run) aggregates rows, writes the report and the baselines, and applies suite gates. Rows
reach the controller on the test reports, as builtin types only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_doceval.config import ProjectConfig, StatsConfig
from pytest_doceval.errors import DocevalError
from pytest_doceval.kinds import CaseRef, RunContext, Suite
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import Row
from pytest_doceval.run import shards
from pytest_doceval.run.analysis_cache import AnalysisCache
from pytest_doceval.run.case_gates import SuiteBaselines, case_gate_failures
from pytest_doceval.run.catalog import SuiteCatalog
from pytest_doceval.run.controller import Controller, partial_record
from pytest_doceval.run.progress import summary_line
from pytest_doceval.run.score_cache import ScoreCache
from pytest_doceval.run.stage_run import StageRun
from pytest_doceval.store import Store

if TYPE_CHECKING:
    from pytest_doceval.report.schema import Report

SESSION_KEY: pytest.StashKey[DocevalSession] = pytest.StashKey()


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
    shard_durations: Path  # the report whose recorded durations balance the shards


def parse_shard(text: str | None) -> tuple[int, int] | None:
    try:
        return shards.parse_shard(text)
    except ValueError as exc:
        raise pytest.UsageError(f"--doceval-shard {exc}") from None


class DocevalSession:
    """The run's lifecycle: what it is made of (catalogue, baselines, models, stage engine,
    controller) and the calls pytest's hooks make on it, each handed to the part that owns it."""

    def __init__(
        self, config: pytest.Config, project: ProjectConfig, options: Options, *, root: Path
    ) -> None:
        self.config = config
        self.project = project
        self.options = options
        self.rootpath = root  # the doceval project's root: baselines and cache live here
        workerinput = getattr(config, "workerinput", None)
        # One store for outputs, responses and embeddings; xdist workers share the run id.
        run_id = workerinput["testrunuid"] if workerinput else None
        self.cache = Store(options.cache_dir, options.cache_mode, run_id=run_id)
        self.models = _model_runtime(config, root, self.cache)
        self.catalog = SuiteCatalog(config, project, self.models)
        self.baselines = SuiteBaselines(root / project.baselines)
        self.controller = Controller(
            suite=self.catalog.suite,
            baselines=self.baselines,
            stats=options.stats,
            update=options.update,
            root=root,
            invoked_in=Path(config.invocation_params.dir),
            prepare_ahead=_is_xdist_controller(config),
            analysis=AnalysisCache(self.cache),
            record=partial_record(options.json_path),
        )
        # A result whose inputs, outputs and scoring code are unchanged is read, not scored.
        self.scores = ScoreCache(
            self.cache,
            root,
            not_inputs=[
                root / project.baselines,
                *([options.cache_dir] if options.cache_dir else []),
                options.json_path,
                *([options.html_path] if options.html_path else []),
            ],
        )
        # A shard run balances its cases by the durations of the last whole run (or none).
        self.shard_durations = (
            shards.load_durations(options.shard_durations) if options.shard else {}
        )
        self.shard_plan: shards.ShardPlan | None = None  # set once the tests are collected
        self.stages = StageRun(
            config,
            executor=options.executor,
            store=self.cache,
            models=self.models,
            suite=self.catalog.suite,
        )
        # node id -> its planning's score key, and whether a result was stored under it
        self._planned_keys: dict[str, tuple[str | None, bool]] = {}
        self.stages.result_stored = self._result_stored

    # -- suites and baselines -----------------------------------------------------------------

    def suite(self, file: Path) -> Suite:
        return self.catalog.suite(file)

    def headline_columns(self) -> list[str]:
        return self.catalog.headline_columns()

    def baseline_metrics(self, suite: Suite, ref: CaseRef) -> dict[str, float] | None:
        return self.baselines.metrics(suite, ref)

    # -- the stage engine (`self.stages`, run/stage_run.py: plan, wait, progress) ----------------

    def close_models(self, *, interrupted: bool = False) -> None:
        """Stop the engine and the models; one line of totals (a worker's go to the
        controller, which sums them)."""
        self.stages.close(interrupted=interrupted)
        totals = self.stages.totals
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput["doceval_engine"] = totals.to_dict()
        elif totals.stages:
            self.summary_lines.append(summary_line(totals))
        self.models.close()
        self.cache.close()  # the store's last batch of rows, before the process ends

    # -- one test -----------------------------------------------------------------------------

    def evaluate(self, suite: Suite, ref: CaseRef, nodeid: str = "") -> CaseResult:
        baseline = self.baselines.comparable(suite)
        previous = baseline.cache_key(ref.key) if baseline is not None else None
        metrics = baseline.metrics(ref.key) if baseline is not None else None
        plan = self.stages.take_plan(suite, ref, nodeid)
        key, stored = self._score_key(suite, ref, nodeid)
        result = self.scores.get(key) if stored else None
        if result is None:
            results = self.stages.results(plan, f"{suite.name}/{ref.key}")
            ctx = RunContext(self.cache, previous_cache_key=previous, baseline=metrics)
            result = suite.evaluate(ref, results, ctx)
            for metric in result.metrics:
                suite.metric_spec(metric)  # a kind must declare what it measures
            self.scores.put(key, result, row=f"{suite.name}/{ref.key}")
        cost = self.stages.cost(nodeid)
        if cost is not None:
            result.metrics.update(cost.metrics())
        return result

    def _score_key(self, suite: Suite, ref: CaseRef, nodeid: str) -> tuple[str | None, bool]:
        """The key of the test's stored result, and whether one may be stored under it. The
        key its planning made (`_result_stored`) is taken, not made again (a key hashes the
        result's inputs and the baseline's entry), and so is planning's look in the store:
        a result it did not find is not looked for again (a miss cost a read a test)."""
        planned = self._planned_keys.pop(nodeid, None)
        if planned is not None:
            return planned
        return self._make_score_key(suite, ref, self.stages.output_keys(nodeid)), True

    def _make_score_key(
        self, suite: Suite, ref: CaseRef, stage_keys: list[str] | None
    ) -> str | None:
        baseline = self.baselines.comparable(suite)
        return self.scores.key(
            suite,
            ref,
            stage_keys=stage_keys,
            previous_cache_key=baseline.cache_key(ref.key) if baseline is not None else None,
            baseline=baseline.metrics(ref.key) if baseline is not None else None,
        )

    def _result_stored(
        self, nodeid: str, suite: Suite, ref: CaseRef, stage_keys: list[str]
    ) -> bool:
        key = self._make_score_key(suite, ref, stage_keys)
        stored = self.scores.has(key)
        self._planned_keys[nodeid] = (key, stored)  # for the test's `_score_key`, which takes it
        return stored

    def gate_failures_for(self, suite: Suite, ref: CaseRef, result: CaseResult) -> list[str]:
        return case_gate_failures(suite, ref, result, self.baselines, updating=self.options.update)

    # -- the controller -----------------------------------------------------------------------

    def add_row(self, suite_file: Path, row: Row) -> None:
        self.controller.add_row(suite_file, row)

    def finish(self, *, interrupted: bool = False) -> bool:
        """Aggregate, write report and baselines, apply suite gates. True if a gate failed."""
        shard = self.options.shard
        plan = self.shard_plan
        ran = not self.config.getoption("collectonly", False)
        try:
            return self.controller.finish(
                json_path=self.options.json_path,
                html_path=self.options.html_path,
                shard=None if shard is None else f"{shard[0]}/{shard[1]}",
                shard_basis=None if shard is None else shards.basis(self.shard_durations),
                empty_shard=plan.empty_line() if plan is not None and plan.empty and ran else None,
                interrupted=interrupted,
            )
        finally:
            self.cache.close()  # the suite analyses it kept

    @property
    def report(self) -> Report | None:
        """The report written by `finish` (None before, or when no evaluation test ran)."""
        return self.controller.report

    @property
    def summary_lines(self) -> list[str]:
        return self.controller.summary_lines

    @property
    def gate_failures(self) -> list[str]:
        return self.controller.gate_failures


def _is_xdist_controller(config: pytest.Config) -> bool:
    """Whether this process hands the tests to xdist workers (and only collects their rows)."""
    if hasattr(config, "workerinput"):
        return False
    processes = config.getoption("numprocesses", None)
    return bool(processes) and config.getoption("dist", "no") != "no"


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
