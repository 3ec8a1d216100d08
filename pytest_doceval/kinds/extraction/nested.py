"""Depth-weighted nested accuracy (seed 004, "중첩 구조 재귀적 평가").

Acc^(l) is the share of gold fields at depth l that are matched, and the seed's total is
``sum_l alpha^l * Acc^(l)``. Left as written, a perfect document with fields at three depths
would score 1 + alpha + alpha^2, so the sum is divided here by ``sum_l alpha^l`` over the depths
that have fields: a weighted mean, 1.0 when everything matches, in which a top-level field
weighs 1/alpha times a field one level down (alpha in (0, 1); 0.5 by default, which the seed
leaves open). Depths follow `json_input.Place`: a top-level field is 0, each key or list index
below it adds 1.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_ALPHA = 0.5


@dataclass(frozen=True)
class DepthTally:
    depth: int
    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total


@dataclass(frozen=True)
class NestedScore:
    alpha: float
    by_depth: tuple[DepthTally, ...]

    @property
    def accuracy(self) -> float:
        """The normalised depth-weighted accuracy; 1.0 when there is no gold field (nothing to
        get wrong: a prediction's invented fields are the structural metrics' business)."""
        weights = [self.alpha**tally.depth for tally in self.by_depth]
        if not weights:
            return 1.0
        total = sum(w * tally.accuracy for w, tally in zip(weights, self.by_depth, strict=True))
        return total / sum(weights)


def check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"nested accuracy: alpha must be in (0, 1), got {alpha!r}")


def nested_accuracy(
    fields: Iterable[tuple[int, bool]], alpha: float = DEFAULT_ALPHA
) -> NestedScore:
    """Depth-weighted accuracy of gold fields given as (depth, matched) pairs."""
    check_alpha(alpha)
    correct: defaultdict[int, int] = defaultdict(int)
    total: defaultdict[int, int] = defaultdict(int)
    for depth, matched in fields:
        total[depth] += 1
        correct[depth] += int(matched)
    return NestedScore(alpha, tuple(DepthTally(d, correct[d], total[d]) for d in sorted(total)))
