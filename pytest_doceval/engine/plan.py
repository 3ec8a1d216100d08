"""A test's plan: the only description of how its output is made.

A kind returns one `Plan` per test (`Suite.plan`): the stages that make what it scores, in
dependency order, and which of their results it scores, by name (``"output"``, ``"stage1"``,
``"vectors"`` ...). The framework runs the plan -- the run's `Engine`, or `run_plan` for a test
evaluated on its own -- and the kind's ``evaluate`` receives the finished values
(`StageResults`), never keys: it scores them and computes nothing the plan did not say. A
result whose stage was never planned is a `StageNotPlanned` error of the test, naming the case
and the stage; nothing is recomputed in its place.

A saved output (a file a system wrote earlier) is a stage too (`saved_output_stage`): free, run
in the test's own thread when asked for, its key made from the file's path and digest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_doceval.engine.stages import CpuStage, Stage, StageInfo, info_of
from pytest_doceval.errors import CaseInputError, DocevalError
from pytest_doceval.files import read_text
from pytest_doceval.store import cache_key, file_digest

if TYPE_CHECKING:
    from pytest_doceval.models.hub import Hub
    from pytest_doceval.store import Store


class StageNotPlanned(DocevalError):
    """A test asked for a result its plan's stages were not run for."""


@dataclass(frozen=True)
class Plan:
    """The stages of one test (each after the ones it needs) and its named results."""

    stages: tuple[Stage, ...] = ()
    results: Mapping[str, str] = field(default_factory=dict)  # name -> key of one of `stages`

    def __post_init__(self) -> None:
        keys = {stage.key for stage in self.stages}
        stray = [name for name, key in self.results.items() if key not in keys]
        if stray:  # a kind's bug, not the user's input
            raise ValueError(f"plan result {stray[0]!r} names no stage of the plan")

    @property
    def keys(self) -> list[str]:
        return [stage.key for stage in self.stages]

    def stage(self, name: str) -> Stage:
        return self.stage_of(self.results[name])

    def stage_of(self, key: str) -> Stage:
        return next(stage for stage in self.stages if stage.key == key)


@dataclass(frozen=True)
class StageResults:
    """What a test's ``evaluate`` receives: each named result's value, and the stage that made
    it (its key and fingerprint say which output was scored)."""

    outputs: Mapping[str, Any]
    stages: Mapping[str, StageInfo] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.outputs[name]

    def __contains__(self, name: object) -> bool:
        return name in self.outputs

    def get(self, name: str, default: Any = None) -> Any:
        return self.outputs.get(name, default)

    def key(self, name: str) -> str:
        return self.stages[name].key

    def fingerprint(self, name: str) -> Mapping[str, Any] | None:
        return self.stages[name].fingerprint


NO_RESULTS = StageResults({})


def gather(
    plan: Plan, output: Callable[[str, Stage], Any], known: Callable[[str], bool], case: str
) -> StageResults:
    """The plan's named results from a runner: `output(key, stage)` waits for a stage's value
    (raising its failure, worded for the plan's own `stage`), `known(key)` says whether the
    runner was given that stage."""
    values: dict[str, Any] = {}
    stages: dict[str, StageInfo] = {}
    for name in plan.results:
        stage = plan.stage(name)
        if not known(stage.key):
            raise StageNotPlanned(
                f"{case}: stage {stage.label} was never planned (its result {name!r} is what "
                "this test scores); nothing is computed in its place"
            )
        values[name], stages[name] = output(stage.key, stage), info_of(stage)
    return StageResults(values, stages)


def run_plan(
    plan: Plan, store: Store, *, case: str, hub: Callable[[], Hub] | None = None
) -> StageResults:
    """Run `plan` on its own (a unit test, a test evaluated outside a run) and gather its
    results: the same stage objects, in a one-thread engine of their own, stored outputs read
    from `store`; `hub` gives the model hub for model stages."""
    from pytest_doceval.engine.engine import Engine
    from pytest_doceval.engine.executors import ExecutorSlot, parse_executor

    if not plan.stages:
        return NO_RESULTS
    engine = Engine(ExecutorSlot(parse_executor("threads", workers=1)), store, hub=hub)
    try:
        engine.add(plan.stages)
        return gather(plan, engine.output, engine.knows, case)
    finally:
        engine.close()


def read_saved_output(path: Path, what: str) -> str:
    """A saved output's text. Module-level: a stage's call is pickled by name."""
    return read_text(path, what)


def saved_output_stage(
    path: Path,
    *,
    what: str,
    label: str,
    read: Callable[..., Any] = read_saved_output,
    args: tuple[Any, ...] | None = None,
) -> CpuStage:
    """The stage reading a saved output: its key is the file's path and content, so an edited
    file is a new output. A missing file is a `CaseInputError` naming it and `what` it is.
    ``read(*args)`` reads it (default: its UTF-8 text, ``args`` ``(path, what)``)."""
    try:
        digest = file_digest(path)
    except FileNotFoundError:
        raise CaseInputError(f"{path}: missing {what}") from None
    except OSError as exc:
        raise CaseInputError(f"{path}: {what} cannot be read ({exc.strerror or exc})") from None
    return CpuStage(
        key=cache_key({"saved": str(path)}, digest),
        label=label,
        call=read,
        args=(path, what) if args is None else args,
        free=True,
        saved_file=path,
        inputs=(path,),
    )
