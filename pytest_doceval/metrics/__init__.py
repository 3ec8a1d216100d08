"""Metrics: each measure computed in one place, into a dataclass that keeps its raw counts.

`MetricSpec` says what a metric means to everything generic (direction, headline, ...). The
measures themselves are imported lazily: this package is imported by the plugin's light path
(metric specs), and jiwer/rapidfuzz must not load on a run without ``--doceval``.
"""

from __future__ import annotations

import importlib
from typing import Any

from pytest_doceval.metrics.spec import MetricSpec, find_spec

_LAZY = {
    "CharacterAlignment": "text",
    "ErrorCounts": "text",
    "character_alignment": "text",
    "character_errors": "text",
    "word_errors": "text",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = ["MetricSpec", "find_spec", *_LAZY]
