"""One result type for every suite kind: a (case, system) scored, with its raw counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Outcomes whose metrics are real measurements ("failed" = measured, then failed a gate).
MEASURED = ("passed", "failed")


@dataclass
class CaseResult:
    """What one test measured. Everything here is builtin types once `to_row` is called."""

    suite: str
    case: str
    system: str
    metrics: dict[str, float]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    # Kind-specific extras for the report (e.g. structure TP/FP/FN), builtin types only.
    details: dict[str, Any] = field(default_factory=dict)
    fingerprint: dict[str, Any] = field(default_factory=dict)
    cache_key: str | None = None
    diff: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.case}[{self.system}]"

    def to_row(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "case": self.case,
            "system": self.system,
            # float(): numpy scalars would crash xdist's serialiser.
            "metrics": {k: float(v) for k, v in self.metrics.items()},
            "counts": {k: {name: int(n) for name, n in v.items()} for k, v in self.counts.items()},
            "details": _plain(self.details),
            "fingerprint": _plain(self.fingerprint),
            "cache_key": self.cache_key,
            "diff": self.diff,
            "notes": [str(n) for n in self.notes],
        }


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or type(value) in (bool, int, float, str):
        return value
    if hasattr(value, "item"):  # numpy scalars (np.float64 even subclasses float)
        return _plain(value.item())
    return str(value)
