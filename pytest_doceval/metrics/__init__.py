"""Metrics: each measure computed in one place, into a dataclass that keeps its raw counts.

`direction_of` tells which way is better for a metric name; gates, baseline deltas and the
report colour everything by it.
"""

from __future__ import annotations

from pytest_doceval.metrics.structure import (
    ELEMENT_TYPES,
    PER_TYPE_PREFIXES,
    StructureCounts,
    StructureScore,
    extract_elements,
    structure_score,
)
from pytest_doceval.metrics.text import (
    CharacterAlignment,
    ErrorCounts,
    character_alignment,
    character_errors,
    word_errors,
)

LOWER_IS_BETTER = ("cer", "wer", "body_cer", "cer_raw", "refs_delta", "ted", "failure_rate")
HIGHER_IS_BETTER_PREFIXES = ("structure_", "accuracy", "f1", "precision", "recall", "imq")


def direction_of(metric: str) -> str:
    """``"lower"`` or ``"higher"``: which way a metric improves. Unknown names default to higher
    only when they look like a score (prefix list), else lower, like an error rate."""
    if metric in LOWER_IS_BETTER or metric.endswith(("_cer", "_wer", "_rate")):
        return "lower"
    if metric.startswith(HIGHER_IS_BETTER_PREFIXES):
        return "higher"
    return "lower"


__all__ = [
    "ELEMENT_TYPES",
    "PER_TYPE_PREFIXES",
    "CharacterAlignment",
    "ErrorCounts",
    "StructureCounts",
    "StructureScore",
    "character_alignment",
    "character_errors",
    "direction_of",
    "extract_elements",
    "structure_score",
    "word_errors",
]
