"""Output keys, and stage outputs read through the run's store (DESIGN section 5).

The key is a SHA-256 over everything that changes an output -- the input's bytes, the system's
fingerprint (name, library versions, settings, model, prompt) -- and nothing that does not, so
changing a metric or the normalisation re-scores without re-parsing, and a new library version
re-parses. The committed baselines record these keys: `cache_key` must keep its spelling.
Where and how outputs are kept is `pytest_doceval.engine.store`'s business.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_doceval.engine.store import Store


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_key(fingerprint: Mapping[str, Any], input_digest: str) -> str:
    payload = json.dumps(
        {"fingerprint": fingerprint, "input": input_digest}, sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedOutput:
    key: str
    text: str
    hit: bool


def stored_output(store: Store, key: str) -> str | None:
    """The output stored under `key`, or None (absent, untrusted, or not readable now)."""
    from pytest_doceval.engine.store import TEXT

    return store.get(key, TEXT)


def store_output(store: Store, key: str, text: str, fingerprint: Mapping[str, Any]) -> None:
    """Keep a successful output; its fingerprint rides along for whoever reads the entry."""
    from pytest_doceval.engine.store import TEXT

    store.put(key, text, TEXT, {"fingerprint": fingerprint})


def cached_output(
    store: Store,
    fingerprint: Mapping[str, Any],
    input_digest: str,
    compute: Callable[[], str],
) -> CachedOutput:
    """The output keyed by (`fingerprint`, `input_digest`): the store's, else `compute`'s,
    stored only once it returned (a raising `compute` stores nothing)."""
    key = cache_key(fingerprint, input_digest)
    cached = stored_output(store, key)
    if cached is not None:
        return CachedOutput(key, cached, hit=True)
    text = compute()
    store_output(store, key, text, fingerprint)
    return CachedOutput(key, text, hit=False)
