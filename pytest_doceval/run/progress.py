"""Progress lines of the engine: a user must see that a long cold run is working.

Lines start with ``doceval:``. One when the work starts (with the totals), then one every
`every` seconds while a test waits for its stages or between tests: stages done/total, model
requests in flight per model, errors so far, elapsed time and an ETA. At the end one line of
totals. They are written by the main thread through pytest's terminal reporter with capture
suspended (`terminal_writer`), as pytest's live logging does: a background thread's
writes are swallowed by capture and break pytest's progress line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import pytest

from pytest_doceval.engine import Snapshot

Write = Callable[[str], None]


def _seconds(value: float) -> str:
    if value < 90:
        return f"{value:.0f} s"
    minutes, seconds = divmod(int(value), 60)
    if minutes < 90:
        return f"{minutes} min {seconds:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def status_line(snapshot: Snapshot) -> str:
    in_flight = ", ".join(f"{model} {n}" for model, n in sorted(snapshot.in_flight.items()))
    eta = snapshot.eta()
    parts = [
        f"doceval: {snapshot.finished}/{snapshot.total} stages done",
        f"requests in flight: {in_flight or 'none'}",
        f"{snapshot.failed} error(s)",
        f"{_seconds(snapshot.elapsed)} elapsed",
    ]
    if eta is not None:
        parts.append(f"ETA {_seconds(eta)}")
    return ", ".join(parts)


def start_line(snapshot: Snapshot, *, cpu: int, model: int, executor: str, workers: int) -> str:
    return (
        f"doceval: {snapshot.finished}/{snapshot.total} stages done at start (from the cache); "
        f"{cpu} CPU stage(s) on {executor} x{workers} and {model} model stage(s) to run"
    )


@dataclass
class Totals:
    """What a run's engines did, summed over xdist workers (builtin types only: a worker's
    crosses to the controller in ``workeroutput``)."""

    stages: int = 0
    finished: int = 0
    cached: int = 0
    failed: int = 0
    cpu_seconds: float = 0.0
    requests: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, snapshot: Snapshot, requests: Mapping[str, int]) -> Totals:
        return cls(
            snapshot.total,
            snapshot.finished,
            snapshot.cached,
            snapshot.failed,
            snapshot.cpu_seconds,
            dict(requests),
        )

    def add(self, other: Mapping[str, Any]) -> None:
        for name in ("stages", "finished", "cached", "failed", "cpu_seconds"):
            setattr(self, name, getattr(self, name) + other.get(name, 0))
        for source, count in other.get("requests", {}).items():
            self.requests[source] = self.requests.get(source, 0) + count

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summary_line(totals: Totals) -> str:
    requests = totals.requests
    return (
        f"doceval: {totals.finished}/{totals.stages} stages ({totals.cached} from the "
        f"cache, {totals.failed} failed); model requests: {requests.get('model', 0)} sent, "
        f"{requests.get('cache', 0)} answered from the cache, {requests.get('peer', 0)} from "
        f"other workers, {requests.get('failed', 0)} failed; CPU stage time "
        f"{totals.cpu_seconds:.1f} s"
    )


class Progress:
    """Decides when a status line is due; `write` is None where nothing can be shown."""

    def __init__(
        self,
        write: Write | None,
        *,
        every: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.write = write
        self.every = every
        self.clock = clock
        self._due = clock() + every

    def say(self, line: str) -> None:
        if self.write is not None:
            self.write(line)
        self._due = self.clock() + self.every

    def until_due(self) -> float:
        return max(0.0, self._due - self.clock())

    def tick(self, snapshot: Snapshot) -> None:
        """A status line if one is due and work is left."""
        if self.clock() >= self._due and snapshot.finished < snapshot.total:
            self.say(status_line(snapshot))


def terminal_writer(config: pytest.Config) -> Write | None:
    """Where progress lines go: the terminal of a plain run, written with capture
    suspended (as pytest's live logging writes); nowhere in an xdist worker, whose output
    is not shown."""
    if hasattr(config, "workerinput"):
        return None
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return None
    capture = config.pluginmanager.get_plugin("capturemanager")

    def emit(line: str) -> None:
        # Under -q the dots line has no path, and write_line would not start a new line.
        if getattr(reporter, "_width_of_current_line", 0):
            reporter.write("\n")
        reporter.write_line(line)

    def write(line: str) -> None:
        if capture is None:
            emit(line)
            return
        with capture.global_and_fixture_disabled():
            emit(line)

    return write
