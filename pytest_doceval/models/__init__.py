"""Model-backed systems: configuration, the async client and the hub (responses are kept in
`pytest_doceval.store`).

Names are imported lazily, so that importing the plugin does not import httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_doceval.models.client import ModelClient, ModelError
    from pytest_doceval.models.config import ModelConfig, load_models
    from pytest_doceval.models.hub import Hub, PrefetchSummary
    from pytest_doceval.models.requests import (
        ChatRequest,
        ChatResponse,
        image_part,
        message,
        text_part,
    )
    from pytest_doceval.models.retry import RetryPolicy

_HOMES = {
    "ModelClient": "client",
    "ModelError": "client",
    "RetryPolicy": "retry",
    "ModelConfig": "config",
    "load_models": "config",
    "Hub": "hub",
    "PrefetchSummary": "hub",
    "ChatRequest": "requests",
    "ChatResponse": "requests",
    "image_part": "requests",
    "message": "requests",
    "text_part": "requests",
}

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Hub",
    "ModelClient",
    "ModelConfig",
    "ModelError",
    "PrefetchSummary",
    "RetryPolicy",
    "image_part",
    "load_models",
    "message",
    "text_part",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
