"""The one content-addressed store and its keys: the ground floor that the engine, models,
systems and kinds all use (DESIGN section 9). See `store.store` for entries, codecs and claims,
`store.keys` for how a key is made, `store.outputs` for text outputs kept by key."""

from pytest_doceval.store.keys import cache_key, file_digest
from pytest_doceval.store.outputs import store_output, stored_entry, stored_output
from pytest_doceval.store.store import (
    CACHE_MODES,
    FLOAT32,
    HOST,
    JSON,
    TEXT,
    CacheMode,
    Claim,
    ClaimInfo,
    Codec,
    Store,
    checksum,
)

__all__ = [
    "CACHE_MODES",
    "FLOAT32",
    "HOST",
    "JSON",
    "TEXT",
    "CacheMode",
    "Claim",
    "ClaimInfo",
    "Codec",
    "Store",
    "cache_key",
    "checksum",
    "file_digest",
    "store_output",
    "stored_entry",
    "stored_output",
]
