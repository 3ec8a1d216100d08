"""A heartbeat for long evaluations: a parse of a 200-page PDF takes minutes, and a silent
terminal looks like a hang. After `first` seconds, and then every `every` seconds, one line
says which test is still running and for how long."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def heartbeat(
    label: str, write: Callable[[str], None] | None, *, first: float = 5.0, every: float = 15.0
) -> Iterator[None]:
    if write is None:
        yield
        return
    done = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        wait = first
        while not done.wait(wait):
            write(f"doceval: still evaluating {label} ({time.monotonic() - started:.0f} s)")
            wait = every

    thread = threading.Thread(target=beat, name="doceval-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=1.0)
