"""Progress lines of the engine: a user must see that a long cold run is working.

Lines start with ``doceval:``. One when the work starts (with the totals), then a status line
every `every` seconds while a test waits for its stages or between tests: stages done/total,
model requests in flight per model, errors so far, elapsed time and an ETA. At the end one
line of totals. Where they go and how (one live line on a TTY, stacked lines elsewhere) is
`run/terminal_lines.py`; under xdist the controller sums the workers' snapshots
(`run/worker_progress.py`).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import pytest

from pytest_doceval.engine import Snapshot
from pytest_doceval.engine.executors import SHARED_POOL
from pytest_doceval.models.counts import describe as describe_requests

# One home for the interval: seconds between status lines, unless DOCEVAL_PROGRESS_EVERY says.
DEFAULT_EVERY = 10.0
EVERY_VARIABLE = "DOCEVAL_PROGRESS_EVERY"
# A live line (a TTY) is rewritten in place, so it can afford to move about once a second.
LIVE_EVERY = 1.0


def progress_every(environ: Mapping[str, str] | None = None) -> float:
    """Seconds between status lines: ``DOCEVAL_PROGRESS_EVERY`` (a positive number) or 10."""
    text = (os.environ if environ is None else environ).get(EVERY_VARIABLE, "").strip()
    if not text:
        return DEFAULT_EVERY
    try:
        every = float(text)
    except ValueError:
        every = -1.0
    if not every > 0 or every == float("inf"):
        raise pytest.UsageError(
            f"{EVERY_VARIABLE}={text!r}: expected a positive number of seconds (default "
            f"{DEFAULT_EVERY:g})"
        )
    return every


def summed(snapshots: Iterable[Snapshot]) -> Snapshot:
    """The snapshots of several engines (xdist workers) as one: counts add up; the elapsed
    time is the longest, so the ETA is the whole run's work rate applied to what is left."""
    parts = list(snapshots)
    in_flight: Counter[str] = Counter()
    queued: Counter[str] = Counter()
    for part in parts:
        in_flight.update(part.in_flight)
        queued.update(part.queued)
    return Snapshot(
        total=sum(p.total for p in parts),
        done=sum(p.done for p in parts),
        cached=sum(p.cached for p in parts),
        failed=sum(p.failed for p in parts),
        in_flight={model: n for model, n in in_flight.items() if n},
        cpu_seconds=sum(p.cpu_seconds for p in parts),
        elapsed=max((p.elapsed for p in parts), default=0.0),
        queued={model: n for model, n in queued.items() if n},
    )


Write = Callable[[str], None]


def _seconds(value: float) -> str:
    if value < 90:
        return f"{value:.0f} s"
    minutes, seconds = divmod(int(value), 60)
    if minutes < 90:
        return f"{minutes} min {seconds:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


class Eta:
    """The ETA of a run's status lines. The run's rate (`Snapshot.eta`: elapsed time per stage
    worked, times the stages left) is taken when a stage finishes, and counted down from then
    on, never below 0: taken afresh at every line, it grew with the elapsed time while one long
    stage ran (nothing finishing, the rate falling), announcing a later end the longer the run
    worked towards it."""

    def __init__(self) -> None:
        self._finished = -1  # stages finished when the estimate was taken
        self._estimate: float | None = None
        self._at = 0.0  # the run's elapsed seconds then

    def __call__(self, snapshot: Snapshot) -> float | None:
        if snapshot.finished != self._finished:
            self._finished = snapshot.finished
            self._estimate = snapshot.eta()
            self._at = snapshot.elapsed
            return self._estimate
        if self._estimate is None:
            return None
        return max(0.0, self._estimate - (snapshot.elapsed - self._at))


def _at_work(snapshot: Snapshot) -> str:
    """What the run waits for: the model requests in flight (and queued) per model, or, with
    none, the CPU stages (a parse, an OCR) -- not "none" while they run."""
    models = sorted(set(snapshot.in_flight) | set(snapshot.queued))
    if not models:
        left = snapshot.total - snapshot.finished
        return f"CPU stages at work ({left} left)" if left > 0 else "nothing at work"
    in_flight = ", ".join(
        f"{model} {snapshot.in_flight.get(model, 0)}"
        + (f" (+{snapshot.queued[model]} queued)" if snapshot.queued.get(model) else "")
        for model in models
    )
    return f"requests in flight: {in_flight}"


def status_line(snapshot: Snapshot, *, live: bool = False, eta: float | None = None) -> str:
    """`live`: the ETA first and the requests in flight (one entry per model) last, for a
    live line cut at the terminal's width. `eta`: seconds left (`Eta`), shown when given."""
    about = "~" if snapshot.projected else ""
    done = f"doceval: {snapshot.finished}/{about}{snapshot.total} stages done"
    rest = [f"{snapshot.failed} error(s)", f"{_seconds(snapshot.elapsed)} elapsed"]
    until = [] if eta is None else [f"ETA {_seconds(eta)}"]
    work = _at_work(snapshot)
    parts = [done, *until, *rest, work] if live else [done, work, *rest, *until]
    return ", ".join(parts)


def start_line(
    snapshot: Snapshot, *, cpu: int, model: int, executor: str, workers: int, nodes: int = 1
) -> str:
    """`workers` is one process's executor size; `nodes` the xdist workers (each has one, or
    all share the controller's pool)."""
    if executor == SHARED_POOL:
        where = f"processes x{workers} (one pool shared by {nodes} xdist workers)"
    else:
        where = f"{executor} x{workers}" + (
            f" in each of {nodes} xdist workers" if nodes > 1 else ""
        )
    return (
        f"doceval: {snapshot.finished}/{snapshot.total} stages done at start (from the cache); "
        f"{cpu} CPU stage(s) on {where} and {model} model stage(s) to run"
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
    # Of `stages`, those the start line counted (planned by then); the rest were planned after
    # it: under xdist, the stages of tests one worker took over from another.
    at_start: int = 0
    ran_for_another: int = 0  # answered by the shared pool from another worker's run

    @classmethod
    def of(
        cls, snapshot: Snapshot, requests: Mapping[str, int], start: Snapshot | None = None
    ) -> Totals:
        """The totals of one engine; `start` its snapshot when the start line was made."""
        return cls(
            snapshot.total,
            snapshot.finished,
            snapshot.cached,
            snapshot.failed,
            snapshot.cpu_seconds,
            dict(requests),
            snapshot.total if start is None else start.total,
            snapshot.ran_for_another,
        )

    def add(self, other: Mapping[str, Any]) -> None:
        counts = ("stages", "finished", "cached", "failed", "cpu_seconds", "at_start")
        for name in (*counts, "ran_for_another"):
            setattr(self, name, getattr(self, name) + other.get(name, 0))
        for source, count in other.get("requests", {}).items():
            self.requests[source] = self.requests.get(source, 0) + count

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summary_line(totals: Totals) -> str:
    """The run's last line; its stage count is the start line's plus what was planned after
    it, and says so (the two would otherwise disagree without a word)."""
    later = totals.stages - totals.at_start
    after = f"{totals.at_start} counted at the start, {later} planned later; " if later > 0 else ""
    return (
        f"doceval: {totals.finished}/{totals.stages} stages ({after}{totals.cached} from the "
        f"cache, {totals.failed} failed); {describe_requests(totals.requests)}; CPU stage "
        f"time {totals.cpu_seconds:.1f} s"
        + (
            f" ({totals.ran_for_another} stage(s) run once for two workers, counted once)"
            if totals.ran_for_another
            else ""
        )
    )


class Progress:
    """Decides when a status line is due. `write` takes lines that stay (the start line);
    `show` takes status lines (a live line rewritten in place on a TTY; `write` if not
    given). Either is None where nothing can be shown."""

    def __init__(
        self,
        write: Write | None,
        *,
        every: float = DEFAULT_EVERY,
        clock: Callable[[], float] = time.monotonic,
        show: Write | None = None,
        live: bool = False,
    ) -> None:
        self.write = write
        self.show = show if show is not None else write
        self.live = live  # `show` rewrites one line in place (see `status_line`)
        self.every = every
        self.clock = clock
        self._due = clock() + every
        self.eta = Eta()

    def say(self, line: str) -> None:
        if self.write is not None:
            self.write(line)
        self._due = self.clock() + self.every

    def until_due(self) -> float:
        return max(0.0, self._due - self.clock())

    def tick(self, snapshot: Snapshot) -> None:
        """A status line if one is due and work is left. Due or not shown, the next is an
        interval away: left due once all was done, every test after that made a snapshot (a
        walk over every planned stage), and a run's cost grew with the square of its tests."""
        if self.clock() < self._due:
            return
        if snapshot.finished < snapshot.total and self.show is not None:
            self.show(status_line(snapshot, live=self.live, eta=self.eta(snapshot)))
        self._due = self.clock() + self.every
