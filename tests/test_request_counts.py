"""One count of model requests (models/counts.py): queued, in flight, sent (HTTP attempts),
answered and failed, checked against what the model server itself saw."""

from __future__ import annotations

import threading
from pathlib import Path

from model_fixtures import ask, make_hub, model_config, model_server
from model_server import ModelServer

from pytest_doceval.models.counts import SENT, Wire, describe, split_waiting

__all__ = ["model_server"]  # the fixture, imported for the tests below


def test_the_wire_counts_attempts_on_it_and_made() -> None:
    wire = Wire()
    with wire.attempt("echo"), wire.attempt("echo"), wire.attempt("qwen"):
        assert wire.in_flight() == {"echo": 2, "qwen": 1}
    with wire.attempt("echo"):
        pass
    assert wire.in_flight() == {} and wire.sent() == 4


def test_waiting_requests_split_into_in_flight_and_queued() -> None:
    # 23 waited for, 2 on the wire: "echo 2 (+21 queued)", not "echo 23".
    assert split_waiting({"echo": 23}, {"echo": 2}) == ({"echo": 2}, {"echo": 21})
    assert split_waiting({"echo": 0}, {}) == ({}, {})
    # An attempt no stage waits for (a test asking directly) is on the wire all the same.
    assert split_waiting({}, {"qwen": 1}) == ({"qwen": 1}, {})


def test_failed_requests_were_sent_and_retries_count_as_sent(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url, max_retries=1)
    bad = [ask(config, f"[fault:500] {i}", case=f"broken{i}") for i in range(2)]
    good = ask(config, "fine")
    with make_hub(config, tmp_path) as hub:
        hub.prefetch([*bad, good])
        counts = {**hub.counts, SENT: hub.client.wire.sent()}
    # The server's own count: two attempts of each failing request, one of the good one.
    assert counts[SENT] == model_server.total == 5
    assert (counts["model"], counts["failed"]) == (1, 2)
    assert describe(counts).startswith("model requests: 5 sent, 1 answered, 2 failed")


def test_in_flight_never_exceeds_the_models_slots(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url, max_concurrency=2)
    requests = [ask(config, f"q{i} [latency:0.2]", case=f"c{i}") for i in range(6)]
    seen: list[dict[str, int]] = []
    with make_hub(config, tmp_path) as hub:
        future = hub.start_prefetch(requests)
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        while not done.wait(0.01):
            seen.append(hub.client.wire.in_flight())
        assert hub.client.wire.sent() == 6
    assert all(sum(s.values()) <= 2 for s in seen), seen
    assert model_server.peak_active <= 2
