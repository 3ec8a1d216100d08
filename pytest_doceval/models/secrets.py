"""Keeping API keys out of every message: one replacement rule for the chat client and the
embeddings client, light to import (no httpx)."""

from __future__ import annotations

from collections.abc import Iterable

REDACTED = "[REDACTED]"


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret replaced by ``[REDACTED]`` (longest first, so a secret that
    contains another is replaced whole)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text
