"""The one store: codecs, entries, the checksum rule, modes, and claims between processes."""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from model_fixtures import FAST_RETRY, ask, make_hub, model_config, model_server
from model_server import ModelServer

from pytest_doceval.models.client import ModelClient
from pytest_doceval.models.hub import Hub
from pytest_doceval.store import (
    FLOAT32,
    HOST,
    JSON,
    TEXT,
    ClaimInfo,
    Codec,
    Store,
    cache_key,
    checksum,
    file_digest,
    store_output,
    stored_output,
)

__all__ = ["model_server"]  # the fixture, imported for the tests below

KEY = "ab" + "0" * 62
PAYLOAD = {"text": "the answer", "usage": {"total_tokens": 5}, "finish_reason": "stop"}
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
VECTOR = np.array([0.5, -1.25, 3e-8, 1e30], dtype=np.float32)
SAMPLES: list[tuple[Codec[Any], Any]] = [
    (TEXT, "Hangul 한글\n\x00 and a tab\t"),
    (JSON, PAYLOAD),
    (FLOAT32, VECTOR),
]


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def same(codec: Codec[Any], a: Any, b: Any) -> bool:
    if codec is FLOAT32:
        return a is not None and a.dtype == np.float32 and a.tobytes() == b.tobytes()
    return bool(a == b)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.text())
def test_text_codec_round_trips(text: str) -> None:
    assert TEXT.decode(TEXT.encode(text)) == text


@given(json_values)
def test_json_codec_round_trips_canonically(value: Any) -> None:
    encoded = JSON.encode(value)
    assert JSON.decode(encoded) == value
    # one spelling per value: the reference spelling (the one request keys are taken over)
    assert encoded == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@given(st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=64))
def test_float32_codec_round_trips_bit_for_bit(values: list[float]) -> None:
    vector = np.array(values, dtype=np.float32)
    back = FLOAT32.decode(FLOAT32.encode(vector))
    assert back.dtype == np.float32 and back.tobytes() == vector.astype("<f4").tobytes()
    assert all(
        math.isnan(a) if math.isnan(b) else a == b for a, b in zip(back, values, strict=True)
    )


def test_float32_codec_refuses_what_is_not_a_vector() -> None:
    with pytest.raises(ValueError):
        FLOAT32.encode(np.zeros(0, dtype=np.float32))
    for text in ["", "AAA=", "not base64!"]:  # empty, 2 bytes, garbage
        with pytest.raises(ValueError):
            FLOAT32.decode(text)


@pytest.mark.parametrize(("codec", "value"), SAMPLES, ids=lambda x: getattr(x, "name", ""))
def test_put_then_get_round_trips(tmp_path: Path, codec: Codec[Any], value: Any) -> None:
    store = Store(tmp_path, "rw")
    assert store.get(KEY, codec) is None
    store.put(KEY, value, codec, {"request": REQUEST})
    assert same(codec, store.get(KEY, codec), value)
    entry = json.loads(store.entry_path(KEY, codec).read_text())
    assert entry["meta"] == {"request": REQUEST} and entry["key"] == KEY
    assert entry["codec"] == codec.name
    # the one checksum rule, computed independently: SHA-256 of the stored value's UTF-8
    import hashlib

    assert entry["sha256"] == hashlib.sha256(entry["value"].encode("utf-8")).hexdigest()
    assert entry["sha256"] == checksum(codec.encode(value))
    assert not list(tmp_path.rglob("*.tmp"))


def test_codecs_do_not_share_entries(tmp_path: Path) -> None:
    store = Store(tmp_path, "rw")
    store.put(KEY, "text", TEXT)
    assert store.get(KEY, JSON) is None and store.get(KEY, FLOAT32) is None
    assert store.get(KEY, TEXT) == "text"


def _retamper(entry: dict[str, Any], value: str) -> None:
    entry.update(value=value, sha256=checksum(value))


@pytest.mark.parametrize(("codec", "value"), SAMPLES, ids=lambda x: getattr(x, "name", ""))
@pytest.mark.parametrize(
    "damage",
    [
        lambda e: e.update(value=e["value"][:-4] + "AAA="),  # hand-edited: checksum mismatch
        lambda e: e.update(key="cd" + "0" * 62),  # someone else's entry
        lambda e: e.update(schema="doceval-store/0"),
        lambda e: e.update(codec="other"),
        lambda e: e.update(value=None),
        lambda e: _retamper(e, "!!"),  # a matching checksum over a value that does not decode
    ],
)
def test_damaged_entries_are_misses(
    tmp_path: Path, codec: Codec[Any], value: Any, damage: Any
) -> None:
    store = Store(tmp_path, "rw")
    store.put(KEY, value, codec)
    path = store.entry_path(KEY, codec)
    entry = json.loads(path.read_text())
    damage(entry)
    path.write_text(json.dumps(entry))
    found = store.get(KEY, codec)
    assert found is None or (codec is TEXT and found == "!!")  # "!!" is a text, honestly


@pytest.mark.parametrize(("codec", "value"), SAMPLES, ids=lambda x: getattr(x, "name", ""))
def test_truncated_or_garbage_entry_is_a_miss(
    tmp_path: Path, codec: Codec[Any], value: Any
) -> None:
    store = Store(tmp_path, "rw")
    store.put(KEY, value, codec)
    path = store.entry_path(KEY, codec)
    path.write_text(path.read_text()[: len(path.read_text()) // 2])
    assert store.get(KEY, codec) is None
    path.write_bytes(b"\xff\xfe garbage")
    assert store.get(KEY, codec) is None


def test_a_stored_output_is_read_back_and_a_corrupt_one_is_not(tmp_path: Path) -> None:
    store = Store(tmp_path)
    key = cache_key({"system": "x"}, "d")
    assert stored_output(store, key) is None
    store_output(store, key, "the parser's text", {"system": "x"})
    assert stored_output(store, key) == "the parser's text"
    entry = next(tmp_path.rglob("*.json"))
    data = json.loads(entry.read_text())
    data["value"] = "a better-looking text someone typed in"
    entry.write_text(json.dumps(data))
    assert stored_output(store, key) is None  # its checksum no longer holds: recomputed


def test_modes(tmp_path: Path) -> None:
    Store(tmp_path, "rw", run_id="old").put(KEY, PAYLOAD, JSON)
    assert Store(tmp_path, "read").get(KEY, JSON) == PAYLOAD
    assert Store(tmp_path, "off").get(KEY, JSON) is None
    assert Store(None, "rw").mode == "off"
    # write: refresh what older runs stored, but read back what this run stored
    assert Store(tmp_path, "write", run_id="new").get(KEY, JSON) is None
    Store(tmp_path, "write", run_id="new").put(KEY, PAYLOAD, JSON)
    assert Store(tmp_path, "write", run_id="new").get(KEY, JSON) == PAYLOAD
    assert Store(tmp_path, "rw", run_id="later").get(KEY, JSON) == PAYLOAD
    # read and off never write
    other = "cd" + "1" * 62
    for mode in ("read", "off"):
        store = Store(tmp_path, mode)
        store.put(other, PAYLOAD, JSON)
        assert not store.writes
    assert not Store(tmp_path, "rw").entry_path(other, JSON).exists()
    with pytest.raises(ValueError, match="off, read, write, rw"):
        Store(tmp_path, "readwrite")


def test_mode_off_touches_no_disk(tmp_path: Path) -> None:
    store = Store(tmp_path / "cache", "off")
    assert store.directory is None
    store_output(store, cache_key({}, "d"), "a", {})
    assert stored_output(store, cache_key({}, "d")) is None
    assert not (tmp_path / "cache").exists()


def test_claims_are_exclusive_and_released_only_by_their_owner(tmp_path: Path) -> None:
    cache = Store(tmp_path, "rw")
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


def write_claim(cache: Store, pid: int, host: str, age: float = 0.0) -> None:
    path = cache.claim_path(KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "host": host, "token": f"t{pid}", "at": 0}))
    if age:
        stamp = time.time() - age
        os.utime(path, (stamp, stamp))


def test_stale_claims(tmp_path: Path) -> None:
    cache = Store(tmp_path, "rw", stale_after=30)
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
    cache = Store(tmp_path, "rw", stale_after=30)
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
    cache = Store(tmp_path, "rw", stale_after=30)
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
    entry = Store(tmp_path).entry_path(request.cache_key(), JSON)
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
    with Hub(client, Store(tmp_path)) as hub:
        summary = hub.prefetch(requests)
    assert summary.sent == 2
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len([p for p in files if p.suffix == ".json"]) == 2
    assert all(secret not in p.read_text(errors="replace") for p in files)
    assert "[REDACTED]" in "".join(p.read_text() for p in files)


def test_output_keys_keep_their_spelling() -> None:
    """The committed baselines record output keys: the store must not change how they read
    (the value was computed by the code before the store existed)."""
    key = cache_key({"system": "pymupdf", "version": "3", "dpi": 300}, "ab" * 32)
    assert key == "517f4677450bb903624462caf5d25e3bb30858fc3eb048dda5e60639dab76988"


@pytest.mark.parametrize("size", [0, 1, 4096, (1 << 20) - 1, 1 << 20, 3 * (1 << 20) + 17])
def test_a_file_digest_is_the_sha256_of_its_bytes(tmp_path: Path, size: int) -> None:
    data = random.Random(size).randbytes(size)
    (tmp_path / "input.pdf").write_bytes(data)
    assert file_digest(tmp_path / "input.pdf") == hashlib.sha256(data).hexdigest()
    assert file_digest(str(tmp_path / "input.pdf")) == hashlib.sha256(data).hexdigest()
    with pytest.raises(FileNotFoundError):
        file_digest(tmp_path / "missing.pdf")
