"""What a metric means to everything generic: its direction, and how the report treats it.

A suite kind declares ``metrics``: a mapping from a metric name, or a family pattern such as
``structure_f1_*`` (``fnmatch`` syntax), to its `MetricSpec`. Gates, baseline deltas,
comparisons, the terminal summary, pytest-html columns and the HTML colours all read the spec;
no module outside a kind knows a metric by its name.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

Direction = Literal["lower", "higher"]
DIRECTIONS: tuple[Direction, ...] = ("lower", "higher")
Bounds = tuple[float | None, float | None]
# The range of a share (F1, accuracy, IMQ, a pass rate) and of a rate that can exceed 1 (CER).
SHARE: Bounds = (0.0, 1.0)
RATE: Bounds = (0.0, None)


class MetricSpecEntry(TypedDict):
    """A `MetricSpec` as a report carries it (``metrics.<name>``): `MetricSpec.to_dict`."""

    direction: Direction
    headline: bool
    counts: str | None
    pooled: str | None
    binary: bool
    description: str
    bounds: list[float | None]  # [low, high]; None for an open side
    flag_dominance: float | None
    threshold: float | None


@dataclass(frozen=True)
class MetricSpec:
    """How one metric (or a family of them) is read.

    ``direction``: which way is better. ``headline``: shown in summaries, comparisons, the
    terminal and pytest-html columns (per-field or per-type families usually are not).
    ``counts``: the key in ``row["counts"]`` whose edit counts give a corpus rate (edits /
    reference length) beside the mean. ``pooled``: a prefix of keys in ``row["counts"]``, each
    key one group's ``matched``, ``total`` and ``weight``; the corpus value beside the mean is
    then Σ w_k (Σ matched_k / Σ total_k) / Σ w_k over the groups (`stats.pooled_share`).
    ``binary``: 0/1 per case (McNemar for pairs).
    ``description``: one line for the HTML legend. ``bounds``: the metric's possible range
    (None for unbounded); a confidence interval is clipped to it, since a t-based interval
    of a share near 1 would otherwise report an upper bound above 1.
    ``flag_dominance``: unset, any case flagged on the metric marks a system's value (†); set
    to a share s, the value is marked only when its flagged cases carry more than s of the sum
    of its per-case values (`rows.flag_reasons`): for a flag that warns of cases able to own a
    mean (one blank page's CER of 40 beside pages at 0.1), not of every case being suspect.
    ``threshold``: a value past which a case is in the bad tail (above it for a lower-is-better
    metric, below it for a higher one); each aggregate then reports the share of cases beyond
    it (``beyond``), which a mean hides. A suite's absolute per-case gate on the metric
    (``cer = "<= 0.2"``) takes its place there.
    ``noisy``: a measurement of the run rather than of its output (seconds, requests, tokens,
    price: `metrics.cost`), different on every machine and every cold run. It stays out of the
    committed baselines unless a gate compares it with the baseline, and then moves there
    only when it leaves that gate's tolerance (`run.baselines`): a baseline diff reads as
    "which number moved", not as timing noise.
    """

    direction: Direction
    headline: bool = True
    counts: str | None = None
    pooled: str | None = None
    binary: bool = False
    description: str = ""
    bounds: Bounds = (None, None)
    # A metric some rows lack by nature (a cost of model requests, on a test that asked no
    # model): a gate on it passes those rows instead of failing them as unmeasured. Only a
    # live run's gates read it, so a report does not carry it.
    optional: bool = False
    flag_dominance: float | None = None
    threshold: float | None = None
    # Like `optional`, read by a live run's baseline update only: not in a report.
    noisy: bool = False

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(
                f"MetricSpec direction must be 'lower' or 'higher', not {self.direction!r}"
            )

    def to_dict(self) -> MetricSpecEntry:
        return {
            "direction": self.direction,
            "headline": self.headline,
            "counts": self.counts,
            "pooled": self.pooled,
            "binary": self.binary,
            "description": self.description,
            "bounds": list(self.bounds),
            "flag_dominance": self.flag_dominance,
            "threshold": self.threshold,
        }

    def tail(self) -> tuple[str, float] | None:
        """``(op, threshold)``: a case is beyond the threshold when ``value <op> threshold``."""
        if self.threshold is None:
            return None
        return (">" if self.direction == "lower" else "<"), self.threshold

    def clip(self, value: float) -> float:
        """`value` inside `bounds` (NaN stays NaN: an interval of one case has no bounds)."""
        low, high = self.bounds
        if value != value:
            return value
        if low is not None and value < low:
            return low
        if high is not None and value > high:
            return high
        return value

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricSpec:
        return cls(
            direction=data["direction"],
            headline=bool(data.get("headline", True)),
            counts=data.get("counts"),
            pooled=data.get("pooled"),
            binary=bool(data.get("binary", False)),
            description=str(data.get("description", "")),
            bounds=_bounds(data.get("bounds")),
            flag_dominance=_share(data.get("flag_dominance")),
            threshold=_share(data.get("threshold")),
        )


def _bounds(value: Any) -> Bounds:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        low, high = value
        return (
            None if low is None else float(low),
            None if high is None else float(high),
        )
    return (None, None)


def _share(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def _is_pattern(name: str) -> bool:
    return any(ch in name for ch in "*?[")


def find_spec(specs: Mapping[str, MetricSpec], metric: str) -> MetricSpec | None:
    """The spec declared for `metric`: an exact name first, else the first matching family."""
    if metric in specs:
        return specs[metric]
    for pattern, spec in specs.items():
        if _is_pattern(pattern) and fnmatch.fnmatchcase(metric, pattern):
            return spec
    return None


def ordered_specs(specs: Mapping[str, MetricSpec], names: Iterable[str]) -> dict[str, MetricSpec]:
    """`names` that have a spec, in the kind's declaration order (names of one family sorted);
    this is the order summaries and columns show them in."""
    remaining = sorted(set(names))
    out: dict[str, MetricSpec] = {}
    for pattern, spec in specs.items():
        for name in remaining:
            if name not in out and (
                name == pattern or (_is_pattern(pattern) and fnmatch.fnmatchcase(name, pattern))
            ):
                out[name] = find_spec(specs, name) or spec
    return out


def specs_from_section(section: Mapping[str, Any]) -> dict[str, MetricSpec]:
    """The metric specs a report section carries (``section["metrics"]``)."""
    return {name: MetricSpec.from_dict(d) for name, d in (section.get("metrics") or {}).items()}


def headline(specs: Mapping[str, MetricSpec]) -> list[str]:
    return [name for name, spec in specs.items() if spec.headline]
