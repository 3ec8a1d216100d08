"""Progress under pytest-xdist: the workers' engines, summed on the controller's terminal.

A worker's output is never shown, and pytest-xdist carries nothing from a worker to the
controller while a test runs (its events are a fixed set; ``workeroutput`` arrives when the
worker is done). So each worker *publishes* its engine's state, about once a second from a
daemon thread, as a JSON file written atomically to a folder the controller made and handed to
the workers in ``workerinput`` (`Publisher`). The controller's daemon thread (`Gatherer`)
reads the folder, writes the start line once every worker has planned or finished (a worker
that is neither after `START_WAIT` seconds is left out), then a status line of the summed
state every interval; the folder goes at the end. The start line sums what each worker had
right after its first plan, whenever the controller reads it: on a busy machine one worker can
plan seconds after the other has finished stages.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pytest_doceval.atomic import write_json_atomic
from pytest_doceval.engine import Snapshot
from pytest_doceval.run.progress import Progress, Write, start_line, summed

FOLDER_KEY = "doceval_progress_dir"  # in ``workerinput``: where a worker publishes
PUBLISH_EVERY = 1.0  # at most; faster when the status lines are more often
POLL = 0.2  # how often the controller looks before the start line
# How long the start line waits for a worker that has neither planned nor finished: a condition
# (every worker planned) decides, this only bounds a worker stuck before its first test.
START_WAIT = 60.0


@dataclass(frozen=True)
class WorkerState:
    """One worker's engine as the controller needs it (builtin types on the wire): its state
    now, and at its first plan (what the start line sums)."""

    snapshot: Snapshot
    start: Snapshot  # right after the worker's first plan
    cpu: int  # CPU stages to run at the first plan
    model: int  # model stages to run at the first plan
    executor: str
    workers: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkerState:
        return cls(
            Snapshot(**data["snapshot"]),
            Snapshot(**data["start"]),
            int(data["cpu"]),
            int(data["model"]),
            str(data["executor"]),
            int(data["workers"]),
        )


def read_states(folder: Path) -> list[WorkerState]:
    """The states the workers published so far (one file each; a file being replaced is read
    whole, old or new: writes are atomic)."""
    states = []
    for path in sorted(folder.glob("*.json")):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            states.append(WorkerState.from_dict(json.loads(path.read_text(encoding="utf-8"))))
    return states


class Publisher:
    """A worker's side: `state()` written to `path` now and then every `every` seconds."""

    def __init__(
        self, path: Path, state: Callable[[], WorkerState | None], *, every: float
    ) -> None:
        self.path = path
        self.state = state
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="doceval-progress", daemon=True)

    def start(self) -> None:
        self.publish()
        self._thread.start()

    def publish(self) -> None:
        state = self.state()
        if state is not None:
            with contextlib.suppress(OSError):  # progress must never fail a test
                write_json_atomic(self.path, state.to_dict())

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.publish()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


class Gatherer:
    """The controller's side: a folder for the workers, and a thread that writes the summed
    lines (`write` for the start line, `show` for status lines)."""

    def __init__(
        self,
        write: Write,
        show: Write,
        *,
        every: float,
        live: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="doceval-progress-"))
        self.expected = 0  # workers told where to publish
        self.finished: set[str] = set()  # workers that went down (xdist's testnodedown)
        self.progress = Progress(write, show=show, every=every, clock=clock, live=live)
        self.every = every
        self.clock = clock
        self._first_seen: float | None = None
        self._started = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="doceval-progress", daemon=True)

    def folder_for_worker(self) -> str:
        """For ``workerinput`` of one more worker; the thread starts with the first."""
        self.expected += 1
        if not self._thread.is_alive() and not self._stop.is_set():
            self._thread.start()
        return str(self.folder)

    def node_down(self, worker: str) -> None:
        """Worker `worker` is done: the start line waits no more for it."""
        self.finished.add(worker)

    def look(self) -> None:
        """One look at what the workers published: the start line when it is time, else a
        status line when one is due."""
        states = read_states(self.folder)
        if not states:
            return
        if self._started:
            self.progress.tick(summed(state.snapshot for state in states))
            return
        if self._first_seen is None:
            self._first_seen = self.clock()
        published = {path.stem for path in self.folder.glob("*.json")}
        waiting = self.expected - len(states) - len(self.finished - published)
        if waiting > 0 and self.clock() - self._first_seen < START_WAIT:
            return  # some worker has not planned yet: its stages would be missing
        self._started = True
        cpu = sum(state.cpu for state in states)
        model = sum(state.model for state in states)
        if cpu or model:
            first = states[0]
            self.progress.say(
                start_line(
                    summed(state.start for state in states),
                    cpu=cpu,
                    model=model,
                    executor=first.executor,
                    workers=first.workers,
                    nodes=len(states),
                )
            )

    def _run(self) -> None:
        while not self._stop.wait(max(POLL, self.progress.until_due()) if self._started else POLL):
            with contextlib.suppress(Exception):  # progress must never break the run
                self.look()

    def stop(self) -> None:
        """Stop the thread and remove the folder."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        shutil.rmtree(self.folder, ignore_errors=True)
