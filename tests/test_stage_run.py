"""StageRun, the process's engine as a run uses it: between two tests it asks the engine for a
snapshot (a walk over every planned stage) only when a status line is due, not after every
test (a run's cost then grew with the square of its stages)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pytest_doceval.engine import parse_executor
from pytest_doceval.run.stage_run import StageRun


class CountingEngine:
    def __init__(self, finished: int = 0) -> None:
        self.snapshots = 0
        self.finished = finished

    def snapshot(self) -> Any:
        self.snapshots += 1
        return SimpleNamespace(finished=self.finished, total=1)

    def to_run(self) -> tuple[int, int]:
        self.snapshots += 1  # a walk over every planned stage too
        return 0, 0

    def hold(self, keys: Any) -> None:
        list(keys)


def a_worker_stage_run() -> StageRun:
    # An xdist worker's: no terminal of its own, so nothing to register with pytest.
    config: Any = SimpleNamespace(workerinput={"workerid": "gw0"})
    return StageRun(config, executor=parse_executor("threads"), store=None, models=None)  # type: ignore[arg-type]


def test_between_tests_snapshots_only_when_a_line_is_due() -> None:
    run = a_worker_stage_run()
    engine = CountingEngine()
    run.engine = engine  # type: ignore[assignment]
    clock = [0.0]
    progress = run.progress()
    progress.clock = lambda: clock[0]
    progress.say("start")  # the next line is due `every` seconds from now
    for _ in range(1000):
        run.between_tests()
    assert engine.snapshots == 0
    clock[0] += progress.every
    run.between_tests()
    assert engine.snapshots == 1


def test_once_all_is_done_a_status_look_waits_an_interval_too() -> None:
    run = a_worker_stage_run()
    engine = CountingEngine(finished=1)  # every stage finished: no line to show
    run.engine = engine  # type: ignore[assignment]
    clock = [0.0]
    progress = run.progress()
    progress.clock = lambda: clock[0]
    progress.say("start")
    clock[0] += progress.every
    for _ in range(1000):
        run.between_tests()
    assert engine.snapshots == 1


def test_a_worker_asking_to_plan_nothing_new_walks_no_stage() -> None:
    """An xdist worker plans its queue before every test; when nothing is new (most tests),
    the engine is not walked for the start line again."""
    run = a_worker_stage_run()
    engine = CountingEngine()
    run.engine = engine  # type: ignore[assignment]
    engine.add = lambda stages: [stage.key for stage in stages]  # type: ignore[attr-defined]
    run._publisher = SimpleNamespace()  # type: ignore[assignment]  # already publishing
    run.add([], announce=False)  # the first plan: the start state
    first = engine.snapshots
    assert first == 2
    test: Any = SimpleNamespace(stages=(SimpleNamespace(key="k"),))
    for _ in range(100):
        run.add([], announce=False)
        run.add([test], announce=False)  # more tests: their stages, and no walk
    assert engine.snapshots == first


def test_the_lines_project_the_stages_over_the_tests_not_planned_yet() -> None:
    """A plain run plans a window of tests ahead: a status line counts the stages of the tests
    planned so far at their stages per test for the rest, and marks the total as projected."""
    from pytest_doceval.engine.nodes import Snapshot
    from pytest_doceval.run.progress import status_line

    run = a_worker_stage_run()
    counted = Snapshot(
        total=8, done=2, cached=0, failed=0, in_flight={}, cpu_seconds=0.0, elapsed=1.0
    )
    engine: Any = SimpleNamespace(snapshot=lambda: counted, hold=lambda keys: list(keys))
    run._tests_planned = 4  # 2 stages a test
    assert run._snapshot(engine) is counted  # nothing left to plan: the engine's count
    run.unplanned = 6
    projected = run._snapshot(engine)
    assert (projected.total, projected.done, projected.projected) == (8 + 6 * 2, 2, True)
    assert status_line(projected).startswith("doceval: 2/~20 stages done")
    assert status_line(counted).startswith("doceval: 2/8 stages done")
