"""What the matcher did on one page beyond its plain path: the fallbacks it took and the
deadlines it hit, recorded where they happen (deep in the matcher) for the page's row.

`recording()` opens a page's log for the code run inside it (a context variable, so pages
scored in threads keep theirs apart); `note_fallback` and `note_deadline` add to the open log
and do nothing outside one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class PageLog:
    """One page's fallbacks (OmniDocBench's names) and deadlines hit, in the order taken, and
    the display-formula candidate kept when it is not the text matcher's own."""

    fallbacks: list[str] = field(default_factory=list)
    deadlines: list[str] = field(default_factory=list)
    formula_candidate: str | None = None


_OPEN: ContextVar[PageLog | None] = ContextVar("omnidocbench_page_log", default=None)


@contextlib.contextmanager
def recording() -> Iterator[PageLog]:
    log = PageLog()
    token = _OPEN.set(log)
    try:
        yield log
    finally:
        _OPEN.reset(token)


def note_fallback(name: str) -> None:
    log = _OPEN.get()
    if log is not None:
        log.fallbacks.append(name)


def note_deadline(what: str) -> None:
    log = _OPEN.get()
    if log is not None:
        log.deadlines.append(what)
