"""Stage calls for the engine tests: module-level, so that worker processes import them."""

from __future__ import annotations

import os
import time
from pathlib import Path


def upper(text: str) -> str:
    return text.upper()


def join(*parts: str) -> str:
    return "+".join(parts)


def logged(log: str, name: str, seconds: float = 0.0) -> str:
    """`name`, after `seconds`; appends `name` and its start/end times to the file `log`."""
    started = time.monotonic()
    time.sleep(seconds)
    with Path(log).open("a") as handle:
        handle.write(f"{name} {started} {time.monotonic()}\n")
    return name


def fail(message: str) -> str:
    raise ValueError(message)


def die() -> str:
    os._exit(3)  # a worker process that dies (a segfaulting parser)
