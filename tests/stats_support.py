"""Fixed data and helpers shared by the tests of `pytest_doceval.stats` (tests/test_stats_*.py).

Every statistic is checked against an independent computation on fixed data: scipy.stats,
statsmodels, a hand-rolled loop, or a closed form worked out by hand. Property-based tests
(hypothesis) check the invariants reports rely on, and that every result is made of builtin
types (pytest-xdist's serialiser rejects numpy scalars).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

# Per-case CER of two systems on 12 cases (b is a little worse on most cases).
CER_A = [0.12, 0.05, 0.30, 0.08, 0.15, 0.02, 0.22, 0.09, 0.11, 0.40, 0.07, 0.18]
CER_B = [0.14, 0.06, 0.29, 0.11, 0.19, 0.02, 0.27, 0.10, 0.15, 0.47, 0.06, 0.21]

FAST = settings(max_examples=40, deadline=None)
finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


def by_case(values: list[float], prefix: str = "case") -> dict[str, float]:
    return {f"{prefix}{i:02d}": v for i, v in enumerate(values)}


def assert_builtin(value: Any) -> None:
    """Every leaf is exactly a builtin type (np.float64 subclasses float, so use `type`)."""
    if is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            assert_builtin(getattr(value, f.name))
        assert_builtin(value.to_dict())  # type: ignore[attr-defined]
    elif isinstance(value, dict):
        for k, v in value.items():
            assert type(k) is str
            assert_builtin(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            assert_builtin(v)
    else:
        assert type(value) in (float, int, bool, str, type(None)), (value, type(value))
