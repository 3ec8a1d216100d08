"""What every statistic in the package shares: builtin-typed results and argument checks."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

NAN = float("nan")


def builtin(value: Any) -> Any:
    """Turn numpy scalars (and containers of them) into builtins, so results pickle anywhere."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, dict):
        return {str(k): builtin(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(builtin(v) for v in value)
    return value


class DictMixin:
    """``to_dict()`` for the frozen result dataclasses."""

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict of builtins (``float``/``int``/``bool``/``str``).

        NaN stays ``float("nan")``: writing it as JSON ``null`` is the report writer's job.
        """
        data: dict[str, Any] = builtin(asdict(self))  # type: ignore[call-overload]
        return data


def vector(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """One float per case, as a 1-D array (``ValueError`` for any other shape)."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per case), got {array.shape}")
    return array


def pair(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two per-case vectors of the same cases (``ValueError`` when their lengths differ)."""
    x, y = vector(a, "a"), vector(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired inputs differ in length: {x.size} and {y.size} cases")
    return x, y


def check_interval_args(resamples: int, confidence: float) -> None:
    if int(resamples) != resamples or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")


def binary(values: ArrayLike, name: str) -> NDArray[np.bool_]:
    """0/1 (or False/True) per case as booleans; ``ValueError`` for any other value."""
    array = vector(values, name)
    if not np.all((array == 0.0) | (array == 1.0)):
        raise ValueError(f"{name} must hold only 0/1 (or False/True) values")
    ones: NDArray[np.bool_] = array == 1.0
    return ones


def sample_mean(x: NDArray[np.float64]) -> float:
    """The mean with a correctly rounded sum (``math.fsum``).

    The result does not depend on the order of the values and is exactly negated when they
    are, so ``mean(a - b) == -mean(b - a)`` to the last bit (numpy's pairwise summation gives
    neither). Non-finite values fall back to numpy, which propagates NaN/inf without raising.
    """
    if x.size == 0:
        return NAN
    if not np.all(np.isfinite(x)):
        return float(np.mean(x))
    return math.fsum(x.tolist()) / x.size
