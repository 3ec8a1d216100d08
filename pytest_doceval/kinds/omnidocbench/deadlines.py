"""Cooperative deadlines for the matcher: OmniDocBench v1.6 stops its text matching after 420 s
a page (``match_timeout_sec``, by ``func_timeout``, which kills the thread) and its merge search
after 300 s (``quick_match_truncated_timeout_sec``, checked in its loops), then falls back to a
chunked Hungarian match. Here both are checked in the matcher's loops (no thread is killed and
no process started): `Deadline.check` raises `DeadlinePassed`, which the caller turns into the
same fallback.

The numbers they give equal OmniDocBench's on any page that neither run stops; a page that
one stops and the other does not (this matcher is faster) differs, and says so in its notes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


class DeadlinePassed(Exception):
    """A matcher deadline passed (``what``: which)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True)
class Deadline:
    """A point on the monotonic clock (None: never) and what it bounds."""

    at: float | None
    what: str

    @classmethod
    def after(cls, seconds: float | None, what: str) -> Deadline:
        """`seconds` from now; none for None or a value not above 0 (OmniDocBench's reading)."""
        if seconds is None or seconds <= 0:
            return cls(None, what)
        return cls(time.monotonic() + seconds, what)

    def check(self) -> None:
        if self.at is not None and time.monotonic() >= self.at:
            raise DeadlinePassed(self.what)


NEVER = Deadline(None, "")
