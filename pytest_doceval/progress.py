"""A heartbeat for long evaluations: a parse of a 200-page PDF takes minutes, and a silent
terminal looks like a hang. After `first` seconds, and then every `every` seconds, one line
says which test is still running and for how long.

One `Heartbeat` serves a whole run with one thread, started with the first test it tracks:
starting a thread per test cost about 2 s per 10,000 tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Write = Callable[[str], None]


class Heartbeat:
    def __init__(self, write: Write | None, *, first: float = 5.0, every: float = 15.0) -> None:
        self.write = write
        self.first = first
        self.every = every
        self._wake = threading.Condition()
        self._current: tuple[str, float] | None = None  # (label, when it started)
        self._due = 0.0
        self._closed = False
        self._thread: threading.Thread | None = None

    @contextmanager
    def track(self, label: str) -> Iterator[None]:
        """Speak about `label` while the block runs (nothing when there is nowhere to write)."""
        if self.write is None:
            yield
            return
        with self._wake:
            started = time.monotonic()
            self._current, self._due = (label, started), started + self.first
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="doceval-heartbeat", daemon=True
                )
                self._thread.start()
            self._wake.notify()
        try:
            yield
        finally:
            with self._wake:
                self._current = None
                self._wake.notify()

    def _run(self) -> None:
        assert self.write is not None
        with self._wake:
            while not self._closed:
                if self._current is None:
                    self._wake.wait()
                    continue
                delay = self._due - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                label, started = self._current
                self.write(
                    f"doceval: still evaluating {label} ({time.monotonic() - started:.0f} s)"
                )
                self._due += self.every

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(timeout=1.0)


@contextmanager
def heartbeat(
    label: str, write: Write | None, *, first: float = 5.0, every: float = 15.0
) -> Iterator[None]:
    """One tracked block with its own `Heartbeat` (for a single long job)."""
    beat = Heartbeat(write, first=first, every=every)
    try:
        with beat.track(label):
            yield
    finally:
        beat.close()
