"""What the engine keeps of each planned stage (`Node`), what it tells of the run so far
(`Snapshot`), and how a stage's failure is worded for the tests that need it."""

from __future__ import annotations

import concurrent.futures
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_doceval.engine.stages import Stage
from pytest_doceval.errors import DocevalError, SystemRunError
from pytest_doceval.metrics.cost import StageCost


class StageFailed(SystemRunError):
    """A stage a test depends on failed (the message names the stage and the cause)."""


# States a stage ends in: done (its value held, or stored or released) or failed.
DONE = ("done", "stored", "released")
FINISHED = (*DONE, "failed")
# States a test waiting for a stage stops waiting in: finished, or dropped at the run's end.
SETTLED = (*FINISHED, "dropped")


# Slots, and no event of its own (a test waits on the engine's one condition): 100,000 tests
# plan four stages each, and every node lives to the end of the run.
@dataclass(slots=True)
class Node:
    stage: Stage
    # waiting | deferred | running | done | failed | dropped, and two kinds of done whose value
    # is not held: stored (in the store, read when asked) and released (taken by its test)
    state: str = "waiting"
    output: Any = None
    error: BaseException | None = None
    cached: bool = False
    stored: bool = False  # its output is in the store (found there, or kept there when made)
    cost: StageCost | None = None  # measured when computed, or read back with a stored output
    isolated: bool = False  # rerun alone after its process pool broke
    future: concurrent.futures.Future[Any] | None = None
    dependants: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def settled(self) -> bool:
        """Whether a test waiting for it stops waiting (`Engine.wait`, `Engine.output`)."""
        return self.state in SETTLED

    @property
    def counted(self) -> bool:
        """Whether progress lines count it: reading a saved output is not work to wait for."""
        return not getattr(self.stage, "free", False)


@dataclass
class Tally:
    """Stages counted for the progress lines and totals: those the engine holds, and those it
    forgot once their tests were over (`Engine.done_with`)."""

    total: int = 0
    done: int = 0
    cached: int = 0
    failed: int = 0

    def count(self, node: Node) -> None:
        if node.state == "dropped" or not node.counted:
            return
        self.total += 1
        self.done += node.state in DONE
        self.cached += node.cached
        self.failed += node.state == "failed"

    @classmethod
    def of(cls, nodes: Iterable[Node], start: Tally) -> Tally:
        tally = dataclasses.replace(start)
        for node in nodes:
            tally.count(node)
        return tally


@dataclass(frozen=True)
class Snapshot:
    """What the engine has done so far (for progress lines)."""

    total: int
    done: int
    cached: int
    failed: int
    in_flight: dict[str, int]  # model -> HTTP attempts on the wire (models/counts.py)
    cpu_seconds: float
    elapsed: float
    queued: dict[str, int] = field(default_factory=dict)  # model -> waited for, not on the wire
    # Stages the shared pool answered with the run it made for another xdist worker's ask:
    # their CPU time is in that worker's `cpu_seconds`, not in this one's.
    ran_for_another: int = 0
    # `total` projected over tests not planned yet (a plain run plans a window ahead)
    projected: bool = False

    @property
    def finished(self) -> int:
        return self.done + self.failed

    def eta(self) -> float | None:
        worked = self.finished - self.cached
        left = self.total - self.finished
        if worked <= 0 or left <= 0:
            return None
        return self.elapsed / worked * left


def needed(failed: Node) -> StageFailed:
    """The failure of a stage that needs the failed stage `failed`: its cause, and where."""
    error = failed.error
    assert error is not None
    cause = str(error) if isinstance(error, DocevalError) else describe(error)
    if isinstance(error, StageFailed):
        return error  # already says which stage failed, and why
    return StageFailed(f"{cause} (stage {failed.stage.label})")


def for_test(node: Node, asked_by: Stage) -> StageFailed:
    """The failure of `node` as the error of a test whose own stage of that key is `asked_by`:
    the cause, then the stage, both naming the test's own input. Two tests share a stage when
    their inputs are byte-identical (two copies of one damaged PDF in two cases): the stage
    ran for the first, and its message names the first one's file."""
    error = node.error
    assert error is not None
    cause = str(error) if isinstance(error, DocevalError) else describe(error)
    label = asked_by.label
    if asked_by is not node.stage:
        for theirs, own in zip(node.stage.inputs, asked_by.inputs, strict=False):
            cause = cause.replace(str(theirs), str(own))
    # The cause first (pytest's short summary cuts long lines), then where it happened -- the
    # file once: a cause that names the input is told which system read it, not the file again.
    if asked_by.system is not None and any(str(path) in cause for path in asked_by.inputs):
        label = asked_by.system
    return StageFailed(f"{cause} (stage {label})")


def describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
