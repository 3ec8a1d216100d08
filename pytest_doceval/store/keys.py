"""Output keys (DESIGN section 5): a SHA-256 over everything that changes an output.

The key covers the input's bytes, the system's fingerprint (name, library versions, settings,
model, prompt) and nothing that does not, so changing a metric or the normalisation re-scores
without re-parsing, and a new library version re-parses. The committed baselines record these
keys: `cache_key` must keep its spelling.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


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
