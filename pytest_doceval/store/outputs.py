"""Text stage outputs kept in the run's store under their `cache_key`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_doceval.metrics.cost import StageCost
from pytest_doceval.store.store import TEXT, Store


def stored_output(store: Store, key: str) -> str | None:
    """The output stored under `key`, or None (absent, untrusted, or not readable now)."""
    return store.get(key, TEXT)


def stored_entry(store: Store, key: str) -> tuple[str, dict[str, Any]] | None:
    """The output stored under `key` with its entry's meta (its fingerprint, and what it cost
    to compute when that was measured), or None."""
    return store.get_with_meta(key, TEXT)


def store_output(
    store: Store,
    key: str,
    text: str,
    fingerprint: Mapping[str, Any],
    cost: StageCost | None = None,
) -> None:
    """Keep a successful output; its fingerprint rides along for whoever reads the entry, and
    what it cost, so a warm run reports the cost of the output it reuses."""
    meta: dict[str, Any] = {"fingerprint": fingerprint}
    if cost is not None:
        meta["cost"] = cost.to_dict()
    store.put(key, text, TEXT, meta)
