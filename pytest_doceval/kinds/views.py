"""Views any kind may give a row, beside the kind's own.

``output_diff``: the output the baseline was made from, aligned with this run's output, when
the baseline recorded its output's cache key, that output is still in the cache, and it
differs: a reviewer sees what the system now writes differently, not only that a number moved.
"""

from __future__ import annotations

from typing import Any

from pytest_doceval.kinds.base import RunContext
from pytest_doceval.metrics.text import character_alignment
from pytest_doceval.store import stored_output


def output_change(output: str, key: str | None, ctx: RunContext) -> dict[str, Any]:
    """``{"output_diff": ...}`` (previous output -> `output`), or nothing to show."""
    previous_key = ctx.previous_cache_key
    if key is None or previous_key is None or previous_key == key:
        return {}
    previous = stored_output(ctx.cache, previous_key)
    if previous is None or previous == output:
        return {}
    ops = character_alignment(previous, output).ops
    return {"output_diff": {"ops": ops, "previous_cache_key": previous_key}}
