"""Fixtures and helpers for the model tests: the test server, configs and requests aimed at it.

A test module uses the fixture with ``from model_fixtures import model_server``; a conftest.py
can instead list ``pytest_plugins = ["model_fixtures"]``.
"""

from __future__ import annotations

import os
import struct
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from model_server import ModelServer

from pytest_doceval.models.client import ModelClient
from pytest_doceval.models.config import ModelConfig
from pytest_doceval.models.hub import Hub
from pytest_doceval.models.requests import PNG_SIGNATURE, ChatRequest, image_part, message
from pytest_doceval.models.retry import RetryPolicy
from pytest_doceval.store import CacheMode, Store

# Milliseconds instead of seconds: the retry logic is the same, the tests stay fast.
FAST_RETRY = RetryPolicy(base=0.001, cap=0.004, retry_after_cap=2.0)


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    """A fresh test server on 127.0.0.1 (ephemeral port), stopped at teardown."""
    with ModelServer() as server:
        yield server


def png_bytes(width: int, height: int, shade: int = 0) -> bytes:
    """A valid greyscale PNG (standard library only); `shade` varies its pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    rows = b"".join(
        b"\x00" + bytes((x * 7 + y * 13 + shade) % 256 for x in range(width)) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        PNG_SIGNATURE
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def model_config(base_url: str, name: str = "echo", **table: Any) -> ModelConfig:
    """`ModelConfig` as if read from ``[tool.doceval.models.<name>]``."""
    return ModelConfig.from_table(
        name, {"base_url": base_url, "model": "echo-1", **table}, source="pyproject.toml"
    )


def ask(
    config: ModelConfig,
    text: str,
    *,
    case: str = "case-1",
    images: Sequence[bytes] = (),
    **overrides: Any,
) -> ChatRequest:
    """A one-message request: `text` and then the PNGs in `images`."""
    parts: list[str | dict[str, Any]] = [text, *(image_part(png) for png in images)]
    return ChatRequest.build(config, [message("user", *parts)], case=case, **overrides)


def prefetch_child(
    base_url: str,
    cache_dir: str,
    texts: list[str],
    *,
    run_id: str,
    share: int,
    max_concurrency: int,
    barrier: str,
    parties: int,
    mode: CacheMode = "rw",
) -> dict[str, Any]:
    """One process of a shared run: wait for the others, prefetch `texts`, then read every
    answer back as a test would. Returns the summary and the answers (a pool's worker)."""
    config = model_config(base_url, max_concurrency=max_concurrency)
    client = ModelClient({config.name: config}, retry=FAST_RETRY, concurrency_share=share)
    cache = Store(Path(cache_dir), mode, run_id=run_id)
    requests = [ask(config, text, case=f"case-{i}") for i, text in enumerate(texts)]
    wait_for_parties(Path(barrier), parties)
    with Hub(client, cache) as hub:
        summary = hub.prefetch(requests)
        answers = [hub.complete_sync(r, timeout=30).text for r in requests]
    return {"summary": summary.to_dict(), "answers": answers}


def wait_for_parties(folder: Path, parties: int, timeout: float = 60.0) -> None:
    """A file barrier across processes: each leaves a file, then waits for all of them."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + timeout
    while len(list(folder.glob("ready-*"))) < parties:
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(list(folder.glob('ready-*')))} of {parties} started")
        time.sleep(0.005)


def make_hub(
    config: ModelConfig, cache_dir: Path | None, mode: CacheMode = "rw", **cache_options: Any
) -> Hub:
    client = ModelClient({config.name: config}, retry=FAST_RETRY)
    return Hub(client, Store(cache_dir, mode, **cache_options))
