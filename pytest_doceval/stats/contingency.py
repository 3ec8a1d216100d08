"""Binary outcomes: the exact McNemar test of paired right/wrong, the exact binomial test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from pytest_doceval.stats._common import NAN, DictMixin, binary

Alternative = Literal["two-sided", "less", "greater"]
_ALTERNATIVES: tuple[Alternative, ...] = ("two-sided", "less", "greater")


@dataclass(frozen=True)
class McNemarResult(DictMixin):
    """Exact McNemar test: ``only_a`` cases right only under A, ``only_b`` only under B."""

    only_a: int
    only_b: int
    p: float


def mcnemar_exact(a_correct: ArrayLike, b_correct: ArrayLike) -> McNemarResult:
    """Exact McNemar test of paired binary outcomes (McNemar 1947).

    Only discordant cases carry information: ``only_a`` (A right, B wrong) and ``only_b``
    (B right, A wrong). Under H0 (equal accuracy) each discordant case is equally likely to go
    either way, so ``only_a ~ Binomial(only_a + only_b, 1/2)``; the p-value is the two-sided
    exact binomial test (``scipy.stats.binomtest``): the exact conditional McNemar test
    (Fagerland, Lydersen & Laake 2013, BMC Med. Res. Methodol. 13:91), which is conservative
    (its real size is below the nominal level) but never anti-conservative.

    ``p == 1.0`` when there are no discordant pairs (including n == 0).
    """
    a, b = binary(a_correct, "a_correct"), binary(b_correct, "b_correct")
    if a.shape != b.shape:
        raise ValueError(f"paired inputs differ in length: {a.size} and {b.size} cases")
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if only_a + only_b == 0:
        return McNemarResult(only_a, only_b, 1.0)
    from scipy.stats import binomtest  # on use: scipy.stats is slow to import

    p = binomtest(only_a, only_a + only_b, 0.5).pvalue
    return McNemarResult(only_a, only_b, float(min(1.0, p)))


def binomial_test_p(k: int, n: int, p: float = 0.5, alternative: str = "two-sided") -> float:
    """Exact binomial test of H0: success probability = ``p``, given ``k`` successes in ``n``.

    ``alternative`` is ``"two-sided"``, ``"less"`` or ``"greater"``; the two-sided p-value sums
    the probabilities of all outcomes no more likely than ``k`` under H0 (the "minimum
    likelihood" method of ``scipy.stats.binomtest``, which computes it; Hollander, Wolfe &
    Chicken 2014, *Nonparametric Statistical Methods*, sec. 2.1).

    ``nan`` when n == 0 (no trials, nothing to test).
    """
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    if int(k) != k or int(n) != n or n < 0 or not 0 <= k <= n:
        raise ValueError(f"need integers 0 <= k <= n, got k={k!r}, n={n!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    if n == 0:
        return NAN
    # `in _ALTERNATIVES` above narrows `alternative` to the Literal scipy's stubs ask for.
    from scipy.stats import binomtest  # on use: scipy.stats is slow to import

    return float(min(1.0, binomtest(int(k), int(n), p, alternative=alternative).pvalue))
