"""Output keys (DESIGN section 5): a SHA-256 over everything that changes an output.

The key covers the input's bytes, the system's fingerprint (name, library versions, settings,
model, prompt) and nothing that does not, so changing a metric or the normalisation re-scores
without re-parsing, and a new library version re-parses. The committed baselines record these
keys: `cache_key` must keep its spelling.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any


def file_digest(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, read a MiB at a time. Unbuffered reads on the file's
    descriptor: a run hashes every input of every case, most a few kB, and a buffered file
    object (or `hashlib.file_digest`'s 256 kB buffer) cost three times the hashing."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        digest = hashlib.sha256()
        while block := os.read(descriptor, 1 << 20):
            digest.update(block)
        return digest.hexdigest()
    finally:
        os.close(descriptor)


def cache_key(fingerprint: Mapping[str, Any], input_digest: str) -> str:
    payload = json.dumps(
        {"fingerprint": fingerprint, "input": input_digest}, sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
