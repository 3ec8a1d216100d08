"""StageRun, the process's engine as a run uses it: between two tests it asks the engine for a
snapshot (a walk over every planned stage) only when a status line is due, not after every
test (a run's cost then grew with the square of its stages)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pytest_doceval.run.stage_run import StageRun


class CountingEngine:
    def __init__(self) -> None:
        self.snapshots = 0

    def snapshot(self) -> Any:
        self.snapshots += 1
        return SimpleNamespace(finished=0, total=1)


def a_worker_stage_run() -> StageRun:
    # An xdist worker's: no terminal of its own, so nothing to register with pytest.
    config: Any = SimpleNamespace(workerinput={"workerid": "gw0"})
    return StageRun(config, executor="threads", store=None, models=None, suite=None)  # type: ignore[arg-type]


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
