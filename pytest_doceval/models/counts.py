"""One count of a run's model requests, in the same words wherever it is shown (the status
lines, the line of totals at the end):

- *queued*: requests a stage waits for that are not on the wire (waiting for one of the
  model's ``max_concurrency`` slots, for a retry's back-off, or for a peer worker's answer);
- *in flight*: HTTP attempts on the wire now (never more than the slots);
- *sent*: HTTP attempts made (a request retried twice was sent three times);
- *answered*: distinct requests the model answered; *failed*: distinct requests that failed
  after their retries; and the answers that came from the cache or from other workers.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

# `Totals.requests` keys (where a distinct request's answer came from, as the hub counts
# them), plus SENT, the HTTP attempts.
ANSWERED, CACHE, PEER, FAILED, SENT = "model", "cache", "peer", "failed", "sent"


class Wire:
    """HTTP attempts of one process, per model: on the wire now, and made so far. Counted on
    the hub's loop thread, read from the main one (the status lines)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._on_wire: Counter[str] = Counter()
        self._sent: Counter[str] = Counter()

    @contextmanager
    def attempt(self, model: str) -> Iterator[None]:
        with self._lock:
            self._on_wire[model] += 1
            self._sent[model] += 1
        try:
            yield
        finally:
            with self._lock:
                self._on_wire[model] -= 1

    def in_flight(self) -> dict[str, int]:
        with self._lock:
            return {model: n for model, n in self._on_wire.items() if n}

    def sent(self) -> int:
        with self._lock:
            return sum(self._sent.values())


def split_waiting(
    waiting: Mapping[str, int], on_wire: Mapping[str, int]
) -> tuple[dict[str, int], dict[str, int]]:
    """Requests stages wait for, per model, as (in flight, queued): those on the wire, and
    the rest."""
    models = sorted(set(waiting) | set(on_wire))
    in_flight = {m: on_wire.get(m, 0) for m in models if on_wire.get(m, 0)}
    queued = {m: waiting.get(m, 0) - on_wire.get(m, 0) for m in models}
    return in_flight, {m: n for m, n in queued.items() if n > 0}


def describe(requests: Mapping[str, int]) -> str:
    """The end line's account of model requests."""
    return (
        f"model requests: {requests.get(SENT, 0)} sent, {requests.get(ANSWERED, 0)} answered, "
        f"{requests.get(FAILED, 0)} failed, {requests.get(CACHE, 0)} from the cache, "
        f"{requests.get(PEER, 0)} from other workers"
    )
