"""The hub: concurrent prefetch, each request once, in one process and across processes."""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from model_fixtures import ask, make_hub, model_config, model_server, prefetch_child
from model_server import ModelServer
from test_store import dead_pid

from pytest_doceval.models.client import ModelError
from pytest_doceval.models.requests import ChatResponse
from pytest_doceval.store import HOST, JSON, CacheMode, Store

__all__ = ["model_server"]  # the fixture, imported for the tests below


def test_prefetch_sends_each_distinct_request_once_concurrently(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url, max_concurrency=8)
    requests = [ask(config, f"q{i} [latency:0.05]", case=f"c{i}") for i in range(40)]
    twice = requests + requests[:10]  # two tests asking the same thing share one answer
    model_server.hold_until(8)  # the peak is reached by waiting for it, however busy the machine
    with make_hub(config, tmp_path) as hub:
        summary = hub.prefetch(twice)
        answers = [hub.complete_sync(r).text for r in requests]
    assert (summary.requested, summary.distinct, summary.sent, summary.failed) == (50, 40, 40, 0)
    assert answers == [f"user: q{i} [latency:0.05]" for i in range(40)]
    assert model_server.total == 40 and all(model_server.count(r.body()) == 1 for r in requests)
    assert model_server.peak_active == 8  # max_concurrency at once, not one at a time
    with make_hub(config, tmp_path) as hub:  # the next run reads them all from the cache
        again = hub.prefetch(requests)
    assert (again.cached, again.sent) == (40, 0) and model_server.total == 40
    hub.close()  # closed twice, then used again: a new loop, answers from the cache
    assert hub.complete_sync(requests[0]).source == "cache"
    hub.close()


def test_tests_consume_while_the_prefetch_runs(model_server: ModelServer, tmp_path: Path) -> None:
    config = model_config(model_server.base_url, max_concurrency=4)
    requests = [ask(config, f"q{i} [latency:0.03]") for i in range(20)]
    with make_hub(config, tmp_path) as hub:
        future = hub.start_prefetch(requests)
        first = hub.complete_sync(requests[0])  # does not wait for the whole prefetch
        assert not future.done()
        late = ask(config, "not prefetched")
        assert hub.complete_sync(late).text == "user: not prefetched"
        rest = [hub.complete_sync(r).text for r in requests[1:]]
        summary = future.result(timeout=30)
    assert first.text == "user: q0 [latency:0.03]" and len(rest) == 19
    assert summary.sent == 20 and model_server.total == 21


def test_a_failed_request_is_not_sent_again_nor_cached(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url, max_retries=1)
    bad, good = ask(config, "[fault:500]", case="broken"), ask(config, "fine")
    with make_hub(config, tmp_path) as hub:
        summary = hub.prefetch([bad, good])
        assert (summary.sent, summary.failed) == (1, 1)
        assert "case 'broken'" in summary.errors[0] and "HTTP 500" in summary.errors[0]
        with pytest.raises(ModelError, match="case 'broken': HTTP 500 after 2 attempts"):
            hub.complete_sync(bad)
    assert model_server.count(bad.body()) == 2  # the two attempts of the prefetch, no more
    assert Store(tmp_path).get(bad.cache_key(), JSON) is None


def test_mode_off_writes_nothing_and_still_sends_once(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url)
    requests = [ask(config, f"q{i}") for i in range(5)]
    with make_hub(config, tmp_path, "off") as hub:
        hub.prefetch(requests)
        assert [hub.complete_sync(r).source for r in requests] == ["model"] * 5
    assert model_server.total == 5 and not list(tmp_path.iterdir())


def test_read_mode_uses_entries_and_stores_nothing(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url)
    old, new = ask(config, "stored"), ask(config, "new")
    with make_hub(config, tmp_path) as hub:
        hub.complete_sync(old)
    with make_hub(config, tmp_path, "read") as hub:
        summary = hub.prefetch([old, new])
    assert (summary.cached, summary.sent) == (1, 1)
    assert Store(tmp_path).get(new.cache_key(), JSON) is None


def hold_claim(cache: Store, key: str, *, host: str, pid: int) -> Path:
    path = cache.claim_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "host": host, "token": uuid.uuid4().hex}))
    return path


def test_waits_for_a_peer_that_holds_the_claim(model_server: ModelServer, tmp_path: Path) -> None:
    config = model_config(model_server.base_url)
    request = ask(config, "asked by two workers")
    key = request.cache_key()
    cache = Store(tmp_path)
    claim = hold_claim(cache, key, host="other-machine", pid=1)

    def peer_finishes() -> None:
        time.sleep(0.3)
        cache.put(key, ChatResponse("peer's answer").to_payload(), JSON)
        claim.unlink()

    thread = threading.Thread(target=peer_finishes)
    thread.start()
    with make_hub(config, tmp_path) as hub:
        response = hub.complete_sync(request, timeout=10)
    thread.join()
    assert (response.text, response.source) == ("peer's answer", "peer")
    assert model_server.total == 0


def test_takes_over_the_claim_of_a_dead_owner(model_server: ModelServer, tmp_path: Path) -> None:
    config = model_config(model_server.base_url)
    request = ask(config, "owner crashed")
    hold_claim(Store(tmp_path), request.cache_key(), host=HOST, pid=dead_pid())
    with make_hub(config, tmp_path) as hub:
        # Within the call's 10 s, so not waiting 30 s for the heartbeat to go stale.
        assert hub.complete_sync(request, timeout=10).source == "model"
    assert model_server.count(request.body()) == 1
    assert not Store(tmp_path).claim_path(request.cache_key()).exists()


def test_takes_over_a_claim_without_heartbeat(model_server: ModelServer, tmp_path: Path) -> None:
    config = model_config(model_server.base_url)
    request = ask(config, "owner on another machine went silent")
    hold_claim(Store(tmp_path), request.cache_key(), host="other-machine", pid=1)
    with make_hub(config, tmp_path, stale_after=0.3) as hub:
        start = time.perf_counter()
        assert hub.complete_sync(request, timeout=10).source == "model"
    assert time.perf_counter() - start >= 0.3  # it waited for the claim to go stale
    assert model_server.count(request.body()) == 1


def test_waiting_for_a_live_peer_is_bounded(model_server: ModelServer, tmp_path: Path) -> None:
    config = model_config(model_server.base_url, timeout=0.2, max_retries=0)
    request = ask(config, "the peer never finishes", case="c9")
    claim = hold_claim(Store(tmp_path), request.cache_key(), host="other-machine", pid=1)
    stop = threading.Event()

    def heartbeat() -> None:  # alive, but never done
        while not stop.wait(0.05):
            os.utime(claim)

    thread = threading.Thread(target=heartbeat)
    thread.start()
    try:
        with (
            make_hub(config, tmp_path, stale_after=0.5) as hub,
            pytest.raises(ModelError, match=r"case 'c9': waited .* for pid 1 on other-machine"),
        ):
            hub.complete_sync(request, timeout=10)  # the peer's wait, not the call's
    finally:
        stop.set()
        thread.join()
    assert model_server.total == 0


def test_owner_heartbeats_and_close_releases(model_server: ModelServer, tmp_path: Path) -> None:
    config = model_config(model_server.base_url, timeout=60)
    request = ask(config, "[fault:sleep seconds=60]")
    path = Store(tmp_path).claim_path(request.cache_key())
    hub = make_hub(config, tmp_path, heartbeat=0.05)
    future = hub.start_prefetch([request])
    deadline = time.monotonic() + 10
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    first = path.stat().st_mtime_ns
    time.sleep(0.3)
    assert path.stat().st_mtime_ns > first  # touched while the request is in flight
    hub.close()  # cancels the request in flight and gives its claim back
    assert not path.exists()
    summary = future.result(timeout=5)
    assert summary.failed == 1 and summary.sent == 0


@pytest.mark.parametrize("mode", ["rw", "write"])
def test_two_processes_share_one_cache_and_send_each_request_once(
    model_server: ModelServer, tmp_path: Path, mode: CacheMode
) -> None:
    if mode == "write":  # an older run's entries are what "write" refreshes, not reuses
        cache = Store(tmp_path / "cache", "rw", run_id="older-run")
        request = ask(model_config(model_server.base_url), "shared 0 [latency:0.03]")
        cache.put(request.cache_key(), ChatResponse("stale").to_payload(), JSON)
    texts = [f"shared {i} [latency:0.03]" for i in range(48)]
    spawn = multiprocessing.get_context("spawn")
    run_id = uuid.uuid4().hex
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=spawn) as pool:
        futures = [
            pool.submit(
                prefetch_child,
                model_server.base_url,
                str(tmp_path / "cache"),
                texts,
                run_id=run_id,
                share=2,
                max_concurrency=8,
                barrier=str(tmp_path / "barrier"),
                parties=2,
                mode=mode,
            )
            for _ in range(2)
        ]
        results = [f.result(timeout=120) for f in futures]
    stats = model_server.stats()
    assert (stats["total"], stats["distinct"], stats["max_per_body"]) == (48, 48, 1)
    assert stats["peak_active"] <= 8  # the two shares of max_concurrency together
    summaries = [r["summary"] for r in results]
    assert sum(s["sent"] for s in summaries) == 48
    assert all(s["sent"] > 0 and s["failed"] == 0 for s in summaries)  # the work was split
    assert all(s["sent"] + s["from_peers"] + s["cached"] == 48 for s in summaries)
    expected = [f"user: {t}" for t in texts]
    assert results[0]["answers"] == results[1]["answers"] == expected
    assert not list((tmp_path / "cache").rglob("*.claim"))


def test_a_peer_answer_stored_just_before_the_claim_is_used_not_sent_again(
    model_server: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race CI once hit (49 requests for 48): a peer stores the answer and releases its
    claim between this process's look into the store and its claim; the claim then succeeds,
    and without a second look the request would go out twice."""
    config = model_config(model_server.base_url)
    request = ask(config, "raced")
    with make_hub(config, tmp_path) as hub:
        store = hub.cache
        claim = store.try_claim

        def peer_finishes_first(key: str) -> Any:
            store.put(key, ChatResponse("from the peer").to_payload(), JSON)
            return claim(key)

        monkeypatch.setattr(store, "try_claim", peer_finishes_first)
        answer = hub.complete_sync(request)
    assert (answer.text, answer.source) == ("from the peer", "peer")
    assert model_server.total == 0
    assert not list(tmp_path.rglob("*.claim"))
