"""When to try a model request again, and how long to wait first."""

from __future__ import annotations

import email.utils
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header as seconds from now: delta-seconds or an HTTP-date."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff between attempts: attempt ``n`` (from 0) waits uniformly in
    ``[0, min(cap, base * 2**n)]`` ("full jitter", so many clients do not retry in step), or the
    server's ``Retry-After`` (at most `retry_after_cap`) when it sent one.

    Timeouts are not retried unless `retry_timeouts`: a request slower than the model's
    ``timeout`` is usually as slow the next time, and each try would cost the whole timeout.
    """

    base: float = 0.5
    cap: float = 20.0
    retry_after_cap: float = 60.0
    retry_timeouts: bool = False

    def backoff(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0.0, min(self.cap, self.base * 2.0**attempt))
