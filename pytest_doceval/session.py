"""The doceval session: one object from configure to sessionfinish, kept in ``config.stash``.

Workers (pytest-xdist) and a plain run evaluate items through it; only the controller (or the
plain run) aggregates rows, writes the report and the baselines, and applies suite gates. Rows
reach the controller on the test reports, as builtin types only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_doceval.config import ProjectConfig, StatsConfig
from pytest_doceval.engine.store import Store
from pytest_doceval.errors import DocevalError
from pytest_doceval.kinds import CaseRef, RunContext, Suite
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.results import CaseResult
from pytest_doceval.rows import Row
from pytest_doceval.run.case_gates import SuiteBaselines, case_gate_failures
from pytest_doceval.run.catalog import SuiteCatalog
from pytest_doceval.run.controller import Controller
from pytest_doceval.run.progress import (
    LIVE_EVERY,
    Progress,
    Totals,
    progress_every,
    start_line,
    summary_line,
)
from pytest_doceval.run.terminal_lines import TerminalLines, TerminalTurns, terminal_lines

if TYPE_CHECKING:
    from pytest_doceval.engine import Engine
    from pytest_doceval.report.schema import Report
    from pytest_doceval.run.worker_progress import Gatherer, Publisher, WorkerState

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


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--doceval-shard {text!r}: expected K/N, e.g. 1/4") from None
    if not 1 <= k <= n:
        raise pytest.UsageError(f"--doceval-shard {text!r}: need 1 <= K <= N")
    return k, n


def in_shard(suite: str, case: str, shard: tuple[int, int]) -> bool:
    """Whole cases go to one shard (every system of a case together), by a stable hash."""
    digest = hashlib.sha256(f"{suite}/{case}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shard[1] == shard[0] - 1


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
        )
        self._engine: Engine | None = None
        self._stage_keys: dict[str, list[str]] = {}  # node id -> the keys its test waits for
        self._progress: Progress | None = None
        self.progress_every = progress_every()
        self._lines = terminal_lines(config)
        if self._lines is not None:
            config.pluginmanager.register(TerminalTurns(self._lines), "doceval-terminal")
        self._gatherer: Gatherer | None = None  # the xdist controller's progress
        self._publisher: Publisher | None = None  # an xdist worker's
        self.totals = Totals()

    # -- suites and baselines -----------------------------------------------------------------

    def suite(self, file: Path) -> Suite:
        return self.catalog.suite(file)

    def headline_columns(self) -> list[str]:
        return self.catalog.headline_columns()

    def baseline_metrics(self, suite: Suite, ref: CaseRef) -> dict[str, float] | None:
        return self.baselines.metrics(suite, ref)

    # -- the stage engine ---------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The process's stage engine (made on first use)."""
        if self._engine is None:
            from pytest_doceval.engine import Engine, ExecutorSlot, parse_executor
            from pytest_doceval.engine.executors import cpu_count

            # xdist workers share the machine's cores: each pool takes its share of them.
            workers = max(1, cpu_count() // self.models.workers)
            slot = ExecutorSlot(parse_executor(self.options.executor, workers=workers))
            self._engine = Engine(slot, self.cache, hub=self.models.hub)
        return self._engine

    def plan(self, items: Sequence[pytest.Item], *, announce: bool = True) -> None:
        """Hand the stages of `items` (in their order) to the engine, which starts them at
        once; tests not planned yet only. A suite or case whose stages cannot be declared
        plans none: its test reports the cause."""
        for item in items:
            ref = getattr(item, "ref", None)
            if not isinstance(ref, CaseRef) or item.nodeid in self._stage_keys:
                continue
            try:
                stages = self.suite(item.path).stages(ref, RunContext(self.cache))
            except DocevalError:
                stages = ()
            self._stage_keys[item.nodeid] = []
            if stages:
                self._stage_keys[item.nodeid] = self.engine.add(stages)
        self._publish_progress()
        if not announce or self._engine is None:
            return
        cpu, model = self._engine.to_run()
        if cpu or model:
            slot = self._engine.slot
            snapshot = self._engine.snapshot()
            self.progress().say(
                start_line(
                    snapshot, cpu=cpu, model=model, executor=slot.spec.text, workers=slot.workers
                )
            )

    def progress(self) -> Progress:
        if self._progress is None:
            lines = self._lines
            if lines is None:
                self._progress = Progress(None, every=self.progress_every)
            else:
                every = self._status_every(lines)
                self._progress = Progress(
                    lines.write, show=lines.show, every=every, live=lines.live
                )
        return self._progress

    def _status_every(self, lines: TerminalLines) -> float:
        """A live line moves about once a second; lines that stay come every interval."""
        return min(self.progress_every, LIVE_EVERY) if lines.live else self.progress_every

    # -- progress under xdist -----------------------------------------------------------------

    def configure_node(self, workerinput: dict[str, Any]) -> None:
        """The controller tells a worker where to publish its engine's state."""
        from pytest_doceval.run.worker_progress import FOLDER_KEY, Gatherer

        if self._lines is None:
            return
        if self._gatherer is None:
            lines = self._lines
            self._gatherer = Gatherer(
                lines.write, lines.show, every=self._status_every(lines), live=lines.live
            )
        workerinput[FOLDER_KEY] = self._gatherer.folder_for_worker()

    def _publish_progress(self) -> None:
        """A worker given a folder publishes there from its first plan on."""
        workerinput = getattr(self.config, "workerinput", None)
        if self._publisher is not None or not workerinput:
            return
        from pytest_doceval.run.worker_progress import (
            FOLDER_KEY,
            PUBLISH_EVERY,
            Publisher,
        )

        folder = workerinput.get(FOLDER_KEY)
        if folder:
            path = Path(folder) / f"{workerinput['workerid']}.json"
            every = min(PUBLISH_EVERY, self.progress_every / 2)
            self._publisher = Publisher(path, self._worker_state, every=every)
            self._publisher.start()

    def _worker_state(self) -> WorkerState | None:
        from pytest_doceval.run.worker_progress import WorkerState

        engine = self._engine
        if engine is None:
            return None
        cpu, model = engine.to_run()
        slot = engine.slot
        return WorkerState(engine.snapshot(), cpu, model, slot.spec.text, slot.workers)

    def _stop_progress(self) -> None:
        if self._publisher is not None:
            self._publisher.stop()
        if self._gatherer is not None:
            self._gatherer.stop()
        if self._lines is not None:
            self._lines.close()

    def wait_for_stages(self, nodeid: str) -> None:
        """Wait for the stages of test `nodeid`, saying how the run goes every few seconds."""
        keys = self._stage_keys.get(nodeid)
        if not keys or self._engine is None:
            return
        progress = self.progress()
        while not self._engine.wait(keys, timeout=max(0.05, progress.until_due())):
            progress.tick(self._engine.snapshot())

    def between_tests(self) -> None:
        if self._engine is not None:
            self.progress().tick(self._engine.snapshot())

    def close_models(self, *, interrupted: bool = False) -> None:
        """Stop the engine and the models; one line of totals. The tests are over: what is
        queued is dropped, what runs finishes (`Engine.close`); an interrupted run cancels it."""
        self._stop_progress()
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.close(cancel=interrupted)
            self.totals.add(Totals.of(engine.snapshot(), self.models.request_counts()).to_dict())
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # the controller sums the workers' (`add_worker_totals`)
            workeroutput["doceval_engine"] = self.totals.to_dict()
        elif self.totals.stages:
            self.summary_lines.append(summary_line(self.totals))
        self.models.close()

    def add_worker_totals(self, totals: Mapping[str, Any]) -> None:
        self.totals.add(totals)

    # -- one test -----------------------------------------------------------------------------

    def evaluate(self, suite: Suite, ref: CaseRef) -> CaseResult:
        baseline = self.baselines.comparable(suite)
        previous = baseline.cache_key(ref.key) if baseline is not None else None
        metrics = baseline.metrics(ref.key) if baseline is not None else None
        ctx = RunContext(
            self.cache, previous_cache_key=previous, baseline=metrics, engine=self._engine
        )
        result = suite.evaluate(ref, ctx)
        for metric in result.metrics:
            suite.metric_spec(metric)  # a kind must declare what it measures
        return result

    def gate_failures_for(self, suite: Suite, result: CaseResult) -> list[str]:
        return case_gate_failures(suite, result, self.baselines, updating=self.options.update)

    # -- the controller -----------------------------------------------------------------------

    def add_row(self, suite_file: Path, row: Row) -> None:
        self.controller.add_row(suite_file, row)

    def finish(self, *, interrupted: bool = False) -> bool:
        """Aggregate, write report and baselines, apply suite gates. True if a gate failed."""
        return self.controller.finish(
            json_path=self.options.json_path,
            html_path=self.options.html_path,
            shard=self.options.shard,
            interrupted=interrupted,
        )

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
