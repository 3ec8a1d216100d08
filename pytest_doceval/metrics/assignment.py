"""One-to-one pairing at least total cost: the alignment several kinds use.

The extraction kind pairs gold with predicted entries (seed 003's optimal transport, whose
optimum with uniform weights is a permutation) and the documents kind pairs truth with output
tables on 1 - TEDS. Both pad their cost matrix to a square one first (an unmatched item pairs with
a dummy at its own cost), then ask `assign` for the pairing.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Method = Literal["lsa", "emd"]


def assign(cost: FloatArray, method: Method = "lsa") -> npt.NDArray[np.intp]:
    """For a square cost matrix, the column paired with each row in an assignment of least
    total cost: scipy's Hungarian solver, or POT's exact optimal transport with uniform
    weights (its optimal plan is then a permutation matrix scaled by 1/n)."""
    n = cost.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    if method == "lsa":
        # scipy on first use: start-up stays light for runs that never pair anything
        from scipy.optimize import linear_sum_assignment

        _, cols = linear_sum_assignment(cost)
        return np.asarray(cols, dtype=np.intp)
    if method != "emd":
        raise ValueError(f"assignment method must be 'lsa' or 'emd', not {method!r}")
    import ot  # type: ignore[import-untyped,unused-ignore]  # POT, only this method needs it

    uniform = np.full(n, 1.0 / n)
    plan = ot.emd(uniform, uniform, np.ascontiguousarray(cost, dtype=np.float64))
    cols = np.argmax(plan, axis=1)
    if len(set(cols.tolist())) != n or not np.allclose(plan.max(axis=1), 1.0 / n):
        raise RuntimeError("ot.emd returned a plan that is not a permutation")
    return np.asarray(cols, dtype=np.intp)
