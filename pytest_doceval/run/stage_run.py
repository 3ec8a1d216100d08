"""The stage engine of one run and what the user sees of it.

`StageRun` makes the process's engine on first use (its executor takes this process's share
of the cores), hands it the stages of the tests in pytest's order (`plan`), lets a test wait
for its own stages while saying how the run goes (`wait_for_stages`, `between_tests`), and at
the end stops the engine and keeps its totals (`close`). Under xdist each worker publishes its
engine's state for the controller, which sums the workers' in its status lines
(`configure_node`, `run/worker_progress.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_doceval.errors import DocevalError
from pytest_doceval.kinds import CaseRef, Suite
from pytest_doceval.run.progress import LIVE_EVERY, Progress, Totals, progress_every, start_line
from pytest_doceval.run.terminal_lines import TerminalLines, TerminalTurns, terminal_lines

if TYPE_CHECKING:
    from pytest_doceval.engine import Engine, Plan, Snapshot, StageResults
    from pytest_doceval.metrics.cost import StageCost
    from pytest_doceval.models.runtime import ModelRuntime
    from pytest_doceval.run.worker_progress import Gatherer, Publisher, WorkerState
    from pytest_doceval.store import Store


class StageRun:
    """One process's engine, its progress lines and its totals."""

    def __init__(
        self,
        config: pytest.Config,
        *,
        executor: str,
        store: Store,
        models: ModelRuntime,
        suite: Callable[[Path], Suite],
    ) -> None:
        self.config = config
        self.executor = executor
        self.store = store
        self.models = models
        self.suite = suite
        self.engine: Engine | None = None
        self.totals = Totals()
        # node id -> its plan (or why it has none), until its test gathers the results
        self._plans: dict[str, Plan | DocevalError] = {}
        self._stage_keys: dict[str, list[str]] = {}  # node id -> the keys its test waits for
        self._output_keys: dict[str, list[str]] = {}  # node id -> every key its stages declare
        # Whether a test's result is stored (its node id, suite, ref, its stages' keys): the
        # session's score cache. Such a test needs none of its scoring stages.
        self.result_stored: Callable[[str, Suite, CaseRef, list[str]], bool] | None = None
        self._progress: Progress | None = None
        self.progress_every = progress_every()
        self._lines = terminal_lines(config)
        if self._lines is not None:
            config.pluginmanager.register(TerminalTurns(self._lines), "doceval-terminal")
        self._gatherer: Gatherer | None = None  # the xdist controller's progress
        self._publisher: Publisher | None = None  # an xdist worker's
        self._start: tuple[Snapshot, int, int] | None = None  # its first plan's, for the start line

    def _engine(self) -> Engine:
        if self.engine is None:
            from pytest_doceval.engine import Engine, ExecutorSlot, parse_executor
            from pytest_doceval.engine.executors import cpu_count

            # xdist workers share the machine's cores: each pool takes its share of them.
            workers = max(1, cpu_count() // self.models.workers)
            slot = ExecutorSlot(parse_executor(self.executor, workers=workers))
            self.engine = Engine(slot, self.store, hub=self.models.hub, on_wire=self.models.on_wire)
        return self.engine

    # -- planning ------------------------------------------------------------------------------

    def plan(self, items: Sequence[pytest.Item], *, announce: bool = True) -> None:
        """Hand the stages of `items` (in their order) to the engine, which starts them at
        once; tests not planned yet only. A suite or case whose stages cannot be declared
        plans none: its test reports the cause."""
        planned = False
        for item in items:
            ref = getattr(item, "ref", None)
            if not isinstance(ref, CaseRef) or item.nodeid in self._stage_keys:
                continue
            try:
                suite = self.suite(item.path)
            except DocevalError:
                continue  # its test reports the cause
            self._plan_one(suite, ref, item.nodeid)
            planned = True
        if self.engine is None:
            self._publish()
            return
        # An xdist worker asks before every test; mostly nothing is new, and what follows
        # walks every planned stage (per test, a worker's cost grew with the square of its
        # tests). The start line and the worker's publishing come from the first plan.
        if not planned and self._start is not None:
            return
        cpu, model = self.engine.to_run()
        snapshot = self.engine.snapshot()
        if self._start is None:
            self._start = (snapshot, cpu, model)
        self._publish()
        if not announce:
            return
        if cpu or model:
            slot = self.engine.slot
            self.progress().say(
                start_line(
                    snapshot, cpu=cpu, model=model, executor=slot.spec.text, workers=slot.workers
                )
            )

    def _plan_one(self, suite: Suite, ref: CaseRef, nodeid: str) -> Plan | DocevalError:
        """Plan one test (a plan that cannot be made is kept as its test's error) and hand its
        stages to the engine -- without the ones only scoring needs when its result is
        stored: the stages making the output still report its cost."""
        from pytest_doceval.engine import Plan

        try:
            plan: Plan | DocevalError = suite.plan(ref)
        except DocevalError as exc:
            plan = exc
        self._plans[nodeid] = plan
        stages = plan.stages if isinstance(plan, Plan) else ()
        keys = plan.keys if isinstance(plan, Plan) else []
        self._output_keys[nodeid] = keys
        if stages and self._result_stored(nodeid, suite, ref, keys):
            stages = tuple(stage for stage in stages if not stage.scoring)
        self._stage_keys[nodeid] = self._engine().add(stages) if stages else []
        return plan

    def _result_stored(self, nodeid: str, suite: Suite, ref: CaseRef, keys: list[str]) -> bool:
        if self.result_stored is None:
            return False
        try:
            return self.result_stored(nodeid, suite, ref, keys)
        except DocevalError:
            return False  # an unreadable baseline: its test reports the cause

    def take_plan(self, suite: Suite, ref: CaseRef, nodeid: str) -> Plan:
        """Test `nodeid`'s plan (planned now if it was not), handed over once; the error of a
        plan that could not be made is raised here, as the test's."""
        plan = self._plans.pop(nodeid, None)
        if plan is None:
            plan = self._plan_one(suite, ref, nodeid)
            self._plans.pop(nodeid, None)
        if isinstance(plan, DocevalError):
            raise plan
        return plan

    def results(self, plan: Plan, case: str) -> StageResults:
        """The finished results `plan` names, waiting for them; a failed stage's error is
        raised here, as the test's."""
        from pytest_doceval.engine import NO_RESULTS
        from pytest_doceval.engine.plan import gather

        if not plan.stages:
            return NO_RESULTS
        engine = self._engine()
        engine.add(plan.stages)  # a stored result's scoring stages, if it is scored after all
        return gather(plan, engine.output, engine.knows, case)

    # -- waiting, and saying how it goes -------------------------------------------------------

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

    def wait_for_stages(self, nodeid: str) -> None:
        """Wait for the stages of test `nodeid`, saying how the run goes every few seconds."""
        keys = self._stage_keys.get(nodeid)
        if not keys or self.engine is None:
            return
        progress = self.progress()
        while not self.engine.wait(keys, timeout=max(0.05, progress.until_due())):
            progress.tick(self.engine.snapshot())

    def output_keys(self, nodeid: str) -> list[str] | None:
        """The keys of every stage test `nodeid` declared (None: it was not planned)."""
        return self._output_keys.get(nodeid)

    def cost(self, nodeid: str) -> StageCost | None:
        """What the stages of test `nodeid` cost to compute (None: it has none)."""
        keys = self._stage_keys.get(nodeid)
        if not keys or self.engine is None:
            return None
        return self.engine.cost(keys)

    def between_tests(self) -> None:
        """A status line when one is due. Asked after every test, so the snapshot (a walk over
        every planned stage) is made only then: made each time, a run's cost grew with the
        square of its stages."""
        progress = self.progress()
        if self.engine is not None and progress.until_due() == 0:
            progress.tick(self.engine.snapshot())

    # -- progress under xdist ------------------------------------------------------------------

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

    def _publish(self) -> None:
        """A worker given a folder publishes there from its first plan on."""
        workerinput = getattr(self.config, "workerinput", None)
        if self._publisher is not None or not workerinput:
            return
        from pytest_doceval.run.worker_progress import FOLDER_KEY, PUBLISH_EVERY, Publisher

        folder = workerinput.get(FOLDER_KEY)
        if folder:
            path = Path(folder) / f"{workerinput['workerid']}.json"
            every = min(PUBLISH_EVERY, self.progress_every / 2)
            self._publisher = Publisher(path, self._worker_state, every=every)
            self._publisher.start()

    def _worker_state(self) -> WorkerState | None:
        from pytest_doceval.run.worker_progress import WorkerState

        engine, start = self.engine, self._start
        if engine is None or start is None:
            return None
        slot = engine.slot
        return WorkerState(engine.snapshot(), *start, slot.spec.text, slot.workers)

    # -- the end -------------------------------------------------------------------------------

    def close(self, *, interrupted: bool) -> None:
        """Stop the progress lines and the engine, and add its totals. The tests are over:
        what is queued is dropped, what runs finishes (`Engine.close`); an interrupted run
        cancels it."""
        if self._publisher is not None:
            self._publisher.stop()
        if self._gatherer is not None:
            self._gatherer.stop()
        if self._lines is not None:
            self._lines.close()
        engine, self.engine = self.engine, None
        if engine is not None:
            engine.close(cancel=interrupted)
            start = self._start[0] if self._start is not None else None
            totals = Totals.of(engine.snapshot(), self.models.request_counts(), start)
            self.totals.add(totals.to_dict())

    def add_worker_totals(self, totals: Mapping[str, Any]) -> None:
        self.totals.add(totals)

    def node_down(self, worker: str) -> None:
        """An xdist worker finished: the controller's start line waits no more for it."""
        if self._gatherer is not None:
            self._gatherer.node_down(worker)
