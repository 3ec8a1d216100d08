"""The stage engine of one process that runs tests (a plain run, or an xdist worker), and what
the user sees of it.

`StageRun` makes the process's engine on first use, hands it each planned test's stages in
pytest's order (`add`), gives a test its score once its stages are done -- saying how the run
goes meanwhile (`score`, `between_tests`) -- and at the end stops the engine and keeps its
totals (`close`). An xdist worker publishes its engine's state for the controller, which sums
the workers' in its status lines (`run/worker_progress.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_doceval.engine.nodes import StageFailed
from pytest_doceval.results import CaseResult
from pytest_doceval.run.planned import PlannedTest
from pytest_doceval.run.progress import LIVE_EVERY, Progress, Totals, progress_every, start_line
from pytest_doceval.run.terminal_lines import TerminalLines, TerminalTurns, terminal_lines

if TYPE_CHECKING:
    from pytest_doceval.engine import Engine, ExecutorSpec, Snapshot
    from pytest_doceval.models.runtime import ModelRuntime
    from pytest_doceval.run.worker_progress import Publisher, WorkerState
    from pytest_doceval.store import Store


class StageRun:
    """One process's engine, its progress lines and its totals. `executor` is where its CPU
    stages run (a process pool of this process, the xdist controller's shared pool, a Dask
    cluster); `publish_to` the file an xdist worker publishes its state in (None: it does
    not)."""

    def __init__(
        self,
        config: pytest.Config,
        *,
        executor: ExecutorSpec,
        store: Store,
        models: ModelRuntime,
        publish_to: Path | None = None,
    ) -> None:
        self.config = config
        self.executor = executor
        self.store = store
        self.models = models
        self.engine: Engine | None = None
        self.totals = Totals()
        self._progress: Progress | None = None
        self.progress_every = progress_every()
        self._lines = terminal_lines(config)
        if self._lines is not None:
            config.pluginmanager.register(TerminalTurns(self._lines), "doceval-terminal")
        self._publish_to = publish_to
        self._publisher: Publisher | None = None
        self._start: tuple[Snapshot, int, int] | None = None  # its first plan's, for the start line
        # The tests whose stages the engine keeps for them (`_hold`): id() of each PlannedTest,
        # alive on its item until `done`.
        self._held: set[int] = set()
        self._tests_planned = 0
        # Tests of this run not planned yet (a plain run plans a window ahead): the lines
        # project the stage counts over them.
        self.unplanned = 0

    def _engine(self) -> Engine:
        if self.engine is None:
            from pytest_doceval.engine import Engine, ExecutorSlot
            from pytest_doceval.engine.placement import Placement

            slot = ExecutorSlot(self.executor)
            # xdist workers score in parallel themselves: the pool adds cores only beyond theirs
            # (each worker's share of it).
            placement = Placement(
                workers=max(1, slot.workers // self.models.workers),
                remote=slot.spec.kind == "dask",
            )
            self.engine = Engine(
                slot,
                self.store,
                hub=self.models.hub,
                on_wire=self.models.on_wire,
                placement=placement,
            )
        return self.engine

    # -- planning ------------------------------------------------------------------------------

    def add(self, planned: list[PlannedTest], *, announce: bool = True) -> None:
        """Hand the stages of `planned` tests (in their order) to the engine, which starts
        them at once."""
        stages = [stage for test in planned for stage in test.stages]
        if not stages and self._start is not None:
            return
        engine = self._engine()
        engine.add(stages)
        self._hold(engine, planned)
        if self._start is not None and not announce:
            return  # an xdist worker, handed a few more tests: a walk over every stage is waste
        cpu, model = engine.to_run()
        snapshot = engine.snapshot()
        if self._start is None:
            self._start = (snapshot, cpu, model)
            self._publish()
        if announce and (cpu or model):
            slot = engine.slot
            line = start_line(
                snapshot, cpu=cpu, model=model, executor=slot.spec.text, workers=slot.workers
            )
            if self.unplanned:
                line += (
                    f"; the first {self._tests_planned:,} of "
                    f"{self._tests_planned + self.unplanned:,} tests planned, the rest as the "
                    "run reaches them"
                )
            self.progress().say(line)

    # -- one test ------------------------------------------------------------------------------

    def score(self, planned: PlannedTest) -> CaseResult:
        """Test `planned`'s score, once its stages are done (saying how the run goes every few
        seconds meanwhile), with what making its output cost; a failed stage's error, or the
        plan's own, is raised here, as the test's."""
        if planned.error is not None:
            raise planned.error
        score = planned.score
        assert score is not None
        engine = self._engine()
        keys = engine.add(planned.stages)  # no-op for a test planned before (each key once)
        self._hold(engine, [planned])
        progress = self.progress()
        while not engine.wait(keys, timeout=max(0.05, progress.until_due())):
            progress.tick(self._snapshot(engine))
        try:
            result: CaseResult = engine.output(score.key, score)
        except StageFailed:
            # A stage it needs failed: told in this test's own words (its own input's name;
            # the stage may have run for another test, on a byte-identical input).
            for stage in planned.outputs:  # in plan order: the first to fail is the cause
                engine.output(stage.key, stage)
            raise
        engine.release(score.key)
        cost = engine.cost(planned.output_keys) if planned.outputs else None
        if cost is not None:
            result.metrics.update(cost.metrics())
        return result

    def _hold(self, engine: Engine, planned: list[PlannedTest]) -> None:
        """Have the engine keep the stages of `planned` tests until each is over (`done`)."""
        new = [test for test in planned if id(test) not in self._held]
        self._held.update(id(test) for test in new)
        self._tests_planned += len(new)
        engine.hold(stage.key for test in new for stage in test.stages)

    def done(self, planned: PlannedTest) -> None:
        """Test `planned` is over: the engine may forget the stages only it needed."""
        if self.engine is not None and id(planned) in self._held:
            self._held.discard(id(planned))
            self.engine.done_with([stage.key for stage in planned.stages])

    # -- saying how it goes --------------------------------------------------------------------

    def progress(self) -> Progress:
        if self._progress is None:
            lines = self._lines
            if lines is None:
                self._progress = Progress(None, every=self.progress_every)
            else:
                every = status_every(lines, self.progress_every)
                self._progress = Progress(
                    lines.write, show=lines.show, every=every, live=lines.live
                )
        return self._progress

    def between_tests(self) -> None:
        """A status line when one is due. Asked after every test, so the snapshot (a walk over
        every planned stage) is made only then: made each time, a run's cost grew with the
        square of its stages."""
        progress = self.progress()
        if self.engine is not None and progress.until_due() == 0:
            progress.tick(self._snapshot(self.engine))

    def _snapshot(self, engine: Engine) -> Snapshot:
        """The engine's snapshot, its stages projected over the tests not planned yet (at the
        planned tests' stages per test)."""
        snapshot = engine.snapshot()
        if not self.unplanned or not self._tests_planned:
            return snapshot
        more = round(snapshot.total / self._tests_planned * self.unplanned)
        return dataclasses.replace(snapshot, total=snapshot.total + more, projected=True)

    def stayed_home(self) -> Mapping[str, str]:
        """Stage groups (a suite's scores) that ran in this process because their code could
        not run on the executor, and why."""
        return {} if self.engine is None else dict(self.engine.stayed_home)

    def _publish(self) -> None:
        """An xdist worker given a folder publishes there from its first plan on."""
        if self._publisher is not None or self._publish_to is None:
            return
        from pytest_doceval.run.worker_progress import PUBLISH_EVERY, Publisher

        every = min(PUBLISH_EVERY, self.progress_every / 2)
        self._publisher = Publisher(self._publish_to, self._worker_state, every=every)
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
        if self._lines is not None:
            self._lines.close()
        engine, self.engine = self.engine, None
        if engine is not None:
            engine.close(cancel=interrupted)
            start = self._start[0] if self._start is not None else None
            totals = Totals.of(engine.snapshot(), self.models.request_counts(), start)
            self.totals.add(totals.to_dict())

    def totals_dict(self) -> dict[str, Any]:
        return self.totals.to_dict()


def status_every(lines: TerminalLines, every: float) -> float:
    """A live line moves about once a second; lines that stay come every interval."""
    return min(every, LIVE_EVERY) if lines.live else every
