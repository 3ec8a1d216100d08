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


def pid_of(_: str = "") -> int:
    """The process a stage ran in."""
    return os.getpid()


def busy(seconds: float) -> float:
    """`seconds` of CPU burnt (a metric that costs something), then the pid."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return float(os.getpid())


def busy_logged(seconds: float, log: str, number: int) -> tuple[float, int]:
    """`busy`, then `number` appended to the file `log` (each run leaves a line)."""
    pid = busy(seconds)
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{number}\n")
    return pid, number


def stays_home(home_pid: int) -> int:
    """Refuses to run anywhere but the process `home_pid` (code that does not travel)."""
    from pytest_doceval.engine import StaysHome

    if os.getpid() != home_pid:
        raise StaysHome("this code only runs where the test runs")
    return os.getpid()


def unreadable(path: str) -> str:
    """A parser failing on its input, naming it as parsers do."""
    raise ValueError(f"{path}: not a PDF (no %PDF header)")


def identity(value: object) -> object:
    """`value`, unchanged (a stage that costs nothing)."""
    return value
