"""The response cache: entries, checksums, modes, and claims between processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from model_fixtures import FAST_RETRY, ask, make_hub, model_config, model_server
from model_server import ModelServer

from pytest_doceval.models.cache import HOST, ClaimInfo, ResponseCache, payload_digest
from pytest_doceval.models.client import ModelClient
from pytest_doceval.models.hub import Hub
from pytest_doceval.models.requests import ChatResponse

__all__ = ["model_server"]  # the fixture, imported for the tests below

KEY = "ab" + "0" * 62
ANSWER = ChatResponse("the answer", {"total_tokens": 5}, "stop", "m")
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "q"}]}


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_put_then_get_round_trips(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, "rw")
    assert cache.get(KEY) is None
    cache.put(KEY, ANSWER, REQUEST)
    hit = cache.get(KEY)
    assert hit == ANSWER and hit is not None and hit.source == "cache"
    entry = json.loads(cache.entry_path(KEY).read_text())
    assert entry["request"] == REQUEST and entry["key"] == KEY
    assert entry["sha256"] == payload_digest(ANSWER.to_payload())
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: e.update(payload={**e["payload"], "text": "tampered"}),  # checksum mismatch
        lambda e: e.update(key="cd" + "0" * 62),  # someone else's entry
        lambda e: e.update(schema="doceval-response/0"),
        lambda e: e.update(payload={"text": 3}, sha256=payload_digest({"text": 3})),
    ],
)
def test_damaged_entries_are_misses(tmp_path: Path, damage: object) -> None:
    cache = ResponseCache(tmp_path, "rw")
    cache.put(KEY, ANSWER, REQUEST)
    entry = json.loads(cache.entry_path(KEY).read_text())
    damage(entry)  # type: ignore[operator]
    cache.entry_path(KEY).write_text(json.dumps(entry))
    assert cache.get(KEY) is None


def test_truncated_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, "rw")
    cache.put(KEY, ANSWER, REQUEST)
    text = cache.entry_path(KEY).read_text()
    cache.entry_path(KEY).write_text(text[: len(text) // 2])
    assert cache.get(KEY) is None


def test_modes(tmp_path: Path) -> None:
    ResponseCache(tmp_path, "rw", run_id="old").put(KEY, ANSWER, REQUEST)
    assert ResponseCache(tmp_path, "read").get(KEY) == ANSWER
    assert ResponseCache(tmp_path, "off").get(KEY) is None
    assert ResponseCache(None, "rw").mode == "off"
    # write: refresh what older runs stored, but read back what this run stored
    assert ResponseCache(tmp_path, "write", run_id="new").get(KEY) is None
    ResponseCache(tmp_path, "write", run_id="new").put(KEY, ANSWER, REQUEST)
    assert ResponseCache(tmp_path, "write", run_id="new").get(KEY) == ANSWER
    # read and off never write
    other = "cd" + "1" * 62
    for mode in ("read", "off"):
        cache = ResponseCache(tmp_path, mode)
        cache.put(other, ANSWER, REQUEST)
        assert not cache.writes
    assert not ResponseCache(tmp_path, "rw").entry_path(other).exists()
    with pytest.raises(ValueError, match="off, read, write, rw"):
        ResponseCache(tmp_path, "readwrite")  # type: ignore[arg-type]


def test_claims_are_exclusive_and_released_only_by_their_owner(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, "rw")
    claim = cache.try_claim(KEY)
    assert claim is not None
    assert cache.try_claim(KEY) is None
    info = cache.claim_info(KEY)
    assert info is not None and (info.pid, info.host, info.token) == (
        os.getpid(),
        HOST,
        claim.token,
    )
    assert not info.stale(cache.stale_after)
    cache.release(claim)
    assert cache.claim_info(KEY) is None
    # a claim released after it was broken and re-claimed leaves the new claim alone
    first = cache.try_claim(KEY)
    assert first is not None
    first.path.unlink()
    second = cache.try_claim(KEY)
    assert second is not None
    cache.release(first)
    info = cache.claim_info(KEY)
    assert info is not None and info.token == second.token


def write_claim(cache: ResponseCache, pid: int, host: str, age: float = 0.0) -> None:
    path = cache.claim_path(KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "host": host, "token": f"t{pid}", "at": 0}))
    if age:
        stamp = time.time() - age
        os.utime(path, (stamp, stamp))


def test_stale_claims(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, "rw", stale_after=30)
    write_claim(cache, dead_pid(), HOST)
    info = cache.claim_info(KEY)
    assert info is not None and info.stale(30)  # the owner on this host is gone
    write_claim(cache, 4242, "elsewhere", age=5)
    info = cache.claim_info(KEY)
    assert info is not None and not info.stale(30)  # another host, heartbeat recent
    write_claim(cache, 4242, "elsewhere", age=60)
    info = cache.claim_info(KEY)
    assert info is not None and info.stale(30)  # another host, silent for a minute
    write_claim(cache, os.getpid(), HOST, age=5)
    info = cache.claim_info(KEY)
    assert info is not None and not info.stale(30)


def test_break_stale_removes_only_the_claim_it_saw(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, "rw", stale_after=30)
    write_claim(cache, 4242, "elsewhere", age=60)
    seen = cache.claim_info(KEY)
    assert seen is not None
    write_claim(cache, 4343, "elsewhere", age=60)  # replaced meanwhile by another stale one
    assert not cache.break_stale(KEY, seen)
    assert cache.claim_info(KEY) is not None
    now = cache.claim_info(KEY)
    assert now is not None and cache.break_stale(KEY, now)
    assert cache.claim_info(KEY) is None
    fresh = cache.try_claim(KEY)
    assert fresh is not None
    assert not cache.break_stale(KEY, ClaimInfo(fresh.token, os.getpid(), HOST, 0.0))


def test_half_written_claim_is_not_stale_until_old(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, "rw", stale_after=30)
    path = cache.claim_path(KEY)
    path.parent.mkdir(parents=True)
    path.write_text("")  # created with O_EXCL, owner not yet written its name
    info = cache.claim_info(KEY)
    assert info is not None and info.token is None and not info.stale(30)
    os.utime(path, (time.time() - 60, time.time() - 60))
    info = cache.claim_info(KEY)
    assert info is not None and info.stale(30) and cache.break_stale(KEY, info)


def test_corrupt_entry_is_recomputed_through_the_hub(
    model_server: ModelServer, tmp_path: Path
) -> None:
    config = model_config(model_server.base_url)
    request = ask(config, "recompute me")
    with make_hub(config, tmp_path) as hub:
        assert hub.complete_sync(request).source == "model"
    entry = ResponseCache(tmp_path).entry_path(request.cache_key())
    entry.write_text(entry.read_text()[:-20])  # truncated, as by a crash without atomic writes
    with make_hub(config, tmp_path) as hub:
        again = hub.complete_sync(request)
    assert again.source == "model" and again.text == "user: recompute me"
    assert model_server.count(request.body()) == 2
    with make_hub(config, tmp_path) as hub:
        assert hub.complete_sync(request).source == "cache"  # repaired
    assert model_server.count(request.body()) == 2


def test_failed_calls_are_never_cached(model_server: ModelServer, tmp_path: Path) -> None:
    config = model_config(model_server.base_url, max_retries=1)
    request = ask(config, "[fault:500]")
    with make_hub(config, tmp_path) as hub, pytest.raises(Exception, match="HTTP 500"):
        hub.complete_sync(request)
    assert not list(tmp_path.rglob("*.json"))
    assert not list(tmp_path.rglob("*.claim"))  # released


def test_cache_files_never_hold_the_key(model_server: ModelServer, tmp_path: Path) -> None:
    secret = "sk-cache-test-SECRET-42"
    config = model_config(model_server.base_url, api_key_env="K")
    client = ModelClient({"echo": config}, retry=FAST_RETRY, env={"K": secret})
    requests = [ask(config, "[fault:echo-auth-ok]"), ask(config, "[fault:echo-auth times=1]")]
    with Hub(client, ResponseCache(tmp_path)) as hub:
        summary = hub.prefetch(requests)
    assert summary.sent == 2
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len([p for p in files if p.suffix == ".json"]) == 2
    assert all(secret not in p.read_text(errors="replace") for p in files)
    assert "[REDACTED]" in "".join(p.read_text() for p in files)
