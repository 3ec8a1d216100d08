"""One result type for every suite kind: a (case, system) scored, with its raw counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_doceval.rows import MEASURED, Row, merge_labels, plain

__all__ = ["MEASURED", "CaseResult"]


@dataclass
class CaseResult:
    """What one test measured (which test it was is its `CaseRef`'s, never restated here).
    Everything here is builtin types once `fill_row` is called.

    ``labels`` are labels the evaluation itself found (rarely any): the labels a kind put on
    the `CaseRef` reach the row without being copied here (`pytest_doceval.kinds.case_row`);
    ``views`` are what the HTML shows of the case (documents: ``text_diff``); ``details`` are
    kind-specific extras for the report.
    """

    metrics: dict[str, float]
    labels: dict[str, str] = field(default_factory=dict)
    # Integer counts; a group's weight (`MetricSpec.pooled`) may be fractional.
    counts: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    views: dict[str, Any] = field(default_factory=dict)
    fingerprint: dict[str, Any] = field(default_factory=dict)
    cache_key: str | None = None
    notes: list[str] = field(default_factory=list)
    # The kind's own verdict: messages that fail the test (after it was measured), like a
    # per-case gate; not applied while baselines are updated. Facts fail a fact this way.
    failures: list[str] = field(default_factory=list)
    # metric -> reasons its value may mislead here (an output that lost the text scoring a
    # high coherence): the report marks the metric's compared values with a dagger.
    flags: dict[str, list[str]] = field(default_factory=dict)

    def fill_row(self, row: Row) -> Row:
        """`row` (a `new_row` of this case) with what was measured: this result's labels are
        merged after the row's own (`merge_labels`), every other measured field replaced."""
        filled = row.copy()
        filled["labels"] = merge_labels(row["labels"], self.labels)
        # float(): numpy scalars would crash xdist's serialiser.
        filled["metrics"] = {k: float(v) for k, v in self.metrics.items()}
        filled["counts"] = {
            k: {name: _number(n) for name, n in v.items()} for k, v in self.counts.items()
        }
        filled["details"] = plain(self.details)
        filled["views"] = plain(self.views)
        filled["fingerprint"] = plain(self.fingerprint)
        filled["cache_key"] = self.cache_key
        filled["notes"] = [str(n) for n in self.notes]
        filled["flags"] = {str(m): [str(r) for r in rs] for m, rs in self.flags.items() if rs}
        return filled


def _number(value: float) -> int | float:
    """A count as an int (numpy scalars unwrapped), a fractional weight as a float."""
    number = float(value)
    return int(number) if number.is_integer() else number
