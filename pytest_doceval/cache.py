"""A content-addressed cache of system outputs (DESIGN section 5).

The key is a SHA-256 over everything that changes an output -- the input's bytes, the system's
fingerprint (name, library versions, settings, model, prompt) -- and nothing that does not, so
changing a metric or the normalisation re-scores without re-parsing, and a new library version
re-parses. Entries are written atomically and checked on read: a corrupt or mismatched entry is
recomputed, never trusted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_doceval.atomic import write_text_atomic

CACHE_SCHEMA = "doceval-cache/2"


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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


class OutputCache:
    """Outputs stored as ``<dir>/<key[:2]>/<key>.json``; ``directory=None`` disables caching."""

    def __init__(self, directory: Path | None, mode: str = "rw") -> None:
        """`mode` as ``--doceval-cache``: ``off``, ``read`` (use, never store), ``write``
        (recompute and store) or ``rw``."""
        self.directory = None if mode == "off" else directory
        self.reads = mode in ("read", "rw")
        self.writes = mode in ("write", "rw")

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        if self.directory is None or not self.reads:
            return None
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("schema") != CACHE_SCHEMA:
            return None
        output = entry.get("output")
        if entry.get("key") != key or not isinstance(output, str):
            return None
        # A hand-edited (or half-synced) entry that is still valid JSON is not trusted: its
        # checksum no longer matches, and the output is recomputed.
        if entry.get("sha256") != _checksum(output):
            return None
        return output

    def put(self, key: str, text: str, fingerprint: Mapping[str, Any]) -> None:
        if self.directory is None or not self.writes:
            return
        entry = {
            "schema": CACHE_SCHEMA,
            "key": key,
            "fingerprint": fingerprint,
            "sha256": _checksum(text),
            "output": text,
        }
        write_text_atomic(self._path(key), json.dumps(entry, ensure_ascii=False, default=str))

    def get_or_compute(
        self, fingerprint: Mapping[str, Any], input_digest: str, compute: Callable[[], str]
    ) -> CachedOutput:
        key = cache_key(fingerprint, input_digest)
        cached = self.get(key)
        if cached is not None:
            return CachedOutput(key, cached, hit=True)
        text = compute()
        self.put(key, text, fingerprint)
        return CachedOutput(key, text, hit=False)
