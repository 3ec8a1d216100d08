"""Two of OmniDocBench v1.6's display-formula matches (``end2end_dataset.py``): a Hungarian
assignment of truth lines to predicted lines (``_build_display_formula_hungarian_candidate``),
and an alignment in order that may join runs of predicted lines into one truth line
(``_build_display_formula_dp_candidate``).

The alignment is a dynamic programme over (truth line, predicted line): skip a predicted line
(cost 1), leave a truth line unmatched (cost 1), or match a truth line with a run of predicted
lines starting here (cost: its normalised edit distance). A run has at most 10 lines (12 when
the counts differ by two or more), may skip lines when gaps are allowed (1, or 2 when the
counts differ by three or more), and joins lines of different formulas only when they are
consecutive display formulas. Ties are broken by the pooled character distance, then by fewer
inline formulas. Every run's distances are computed in one rapidfuzz call; the programme and
its tie-breaks are OmniDocBench's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import linear_sum_assignment

from pytest_doceval.kinds.omnidocbench.edit_distance import distance, edit_matrix
from pytest_doceval.kinds.omnidocbench.formula_inputs import (
    FormulaInputs,
    formula_kind,
    formula_row,
)
from pytest_doceval.kinds.omnidocbench.pairs import Pair

# (total distance, Σ character edits, Σ longer lengths, inline formulas used)
_State = tuple[float, int, int, int]


def max_merge(gt_count: int, pred_count: int) -> int:
    """``_resolve_formula_candidate_max_merge``."""
    if pred_count <= 0:
        return 0
    if gt_count <= 1:
        return min(pred_count, 10)
    return min(pred_count, 12 if abs(gt_count - pred_count) >= 2 else 10)


@lru_cache(maxsize=4096)
def runs(count: int, start: int, items: int, span: int, skips: int) -> tuple[tuple[int, ...], ...]:
    """``_enumerate_formula_merge_sequences``: runs from `start`, depth first, each at most
    `items` long, within `span` lines, skipping at most `skips` lines in all."""
    if start >= count:
        return ()
    end = min(count, start + span)
    out: list[tuple[int, ...]] = []

    def grow(run: tuple[int, ...], left: int) -> None:
        out.append(run)
        if len(run) >= items:
            return
        for following in range(run[-1] + 1, end):
            skipped = following - run[-1] - 1
            if skipped <= left:
                grow((*run, following), left - skipped)

    grow((start,), skips)
    return tuple(out)


def hungarian_rows(inputs: FormulaInputs) -> list[Pair]:
    """One predicted line per truth line by a padded square assignment."""
    n_gt, n_pred = inputs.gt_count, inputs.pred_count
    if n_gt <= 0:
        return []
    if n_pred <= 0:
        return [formula_row(inputs, g, None) for g in range(n_gt)]
    size = n_gt + n_pred
    cost = np.ones((size, size), dtype=float)
    cost[n_gt:, n_pred:] = 0.0
    cost[:n_gt, :n_pred] = edit_matrix(inputs.lines.gt_norm, inputs.lines.pred_norm)
    rows_, cols = linear_sum_assignment(cost)
    assignment = {int(r): int(c) for r, c in zip(rows_, cols, strict=True)}
    rows = []
    for g in range(n_gt):
        p = assignment.get(g)
        rows.append(formula_row(inputs, g, [p] if p is not None and p < n_pred else None))
    return rows


class _Joinable:
    """``_can_merge_formula_sequence``: a run joins lines of one formula, or consecutive lines
    that are all display formulas (each line's formula and kind looked up once)."""

    def __init__(self, inputs: FormulaInputs) -> None:
        ids: dict[object, int] = {}
        blocks = inputs.lines.pred_blocks
        self.source = [ids.setdefault(b.source, len(ids)) for b in blocks]
        self.display = [formula_kind(b) == "equation_isolated" for b in blocks]

    def __call__(self, run: Sequence[int]) -> bool:
        if len(run) < 2 or len({self.source[i] for i in run}) == 1:
            return True
        if run[-1] - run[0] + 1 != len(run):
            return False
        return all(self.display[i] for i in run)


def _better(new: _State, old: _State | None) -> bool:
    """``is_better_state``."""
    if old is None or new[0] + 1e-12 < old[0]:
        return True
    if new[0] > old[0] + 1e-12:
        return False
    if new[2] > 0 and old[2] > 0:
        left, right = new[1] * old[2], old[1] * new[2]
        if left != right:
            return left < right
    elif new[2] > 0:
        return True
    elif old[2] > 0:
        return False
    return new[3] < old[3]


@dataclass(frozen=True)
class _Run:
    run: tuple[int, ...]
    norm: str  # the lines' normalised forms joined by spaces
    inline: bool  # a single inline formula


def _runs_by_start(inputs: FormulaInputs, allow_gaps: bool) -> dict[int, list[_Run]]:
    """The runs from each predicted line, less those the programme would skip at every state
    (empty, or not `_joinable`)."""
    n_gt, n_pred = inputs.gt_count, inputs.pred_count
    items = max_merge(n_gt, n_pred)
    span = min(n_pred, items + 2) if allow_gaps else items
    skips = 0
    if allow_gaps:
        if abs(n_gt - n_pred) >= 1 or inputs.rescued > 0 or n_pred >= 4:
            skips = 1
        if abs(n_gt - n_pred) >= 3:
            skips = 2
    blocks, norms = inputs.lines.pred_blocks, inputs.lines.pred_norm
    joinable = _Joinable(inputs)
    out: dict[int, list[_Run]] = {}
    for start in range(n_pred):
        found = []
        for run in runs(n_pred, start, items, span, skips):
            if not joinable(run):
                continue
            norm = " ".join([norms[i] for i in run]).strip()
            if norm:
                inline = len(run) == 1 and formula_kind(blocks[run[0]]) == "equation_inline"
                found.append(_Run(run, norm, inline))
        out[start] = found
    return out


class _Distances:
    """Levenshtein distances of truth lines to runs, each computed once, and only where the
    run could still improve the state it leads to."""

    def __init__(self, truth: Sequence[str]) -> None:
        self.truth = truth
        self._known: dict[tuple[int, str], int] = {}

    def of(self, g: int, norm: str) -> int:
        key = (g, norm)
        if key not in self._known:
            self._known[key] = int(distance(self.truth[g], norm))
        return self._known[key]


def dp_rows(inputs: FormulaInputs, *, allow_gaps: bool) -> list[Pair] | None:
    """The alignment of the module docstring, or None where it leaves the truth lines short."""
    n_gt, n_pred = inputs.gt_count, inputs.pred_count
    if n_gt <= 0 or n_pred <= 0:
        return None
    by_start = _runs_by_start(inputs, allow_gaps)
    distances = _Distances(inputs.lines.gt_norm)
    state: list[list[_State | None]] = [[None] * (n_pred + 1) for _ in range(n_gt + 1)]
    parent: list[list[tuple[int, int, tuple[int, ...] | None] | None]] = [
        [None] * (n_pred + 1) for _ in range(n_gt + 1)
    ]
    state[0][0] = (0.0, 0, 0, 0)
    for g in range(n_gt + 1):
        for p in range(n_pred + 1):
            current = state[g][p]
            if current is None:
                continue
            skip = (current[0] + 1.0, current[1], current[2], current[3])
            if p < n_pred and _better(skip, state[g][p + 1]):
                state[g][p + 1], parent[g][p + 1] = skip, (g, p, None)
            if g >= n_gt:
                continue
            if _better(skip, state[g + 1][p]):
                state[g + 1][p], parent[g + 1][p] = skip, (g, p, ())
            if p >= n_pred:
                continue
            truth = len(inputs.lines.gt_norm[g])
            for run in by_start[p]:
                upper = max(truth, len(run.norm))  # > 0: a truth line is never empty
                end = run.run[-1] + 1
                old = state[g + 1][end]
                # The edit is at least the length gap over `upper` (as floats too): a run
                # that way past the best by more than the tolerance cannot improve it.
                gap = abs(truth - len(run.norm)) / upper
                if old is not None and current[0] + gap > old[0] + 1e-12:
                    continue
                edits = distances.of(g, run.norm)
                new = (
                    current[0] + edits / upper,
                    current[1] + edits,
                    current[2] + upper,
                    current[3] + run.inline,
                )
                if _better(new, old):
                    state[g + 1][end], parent[g + 1][end] = new, (g, p, run.run)
    if parent[n_gt][n_pred] is None:
        return None
    rows: list[Pair] = []
    g, p = n_gt, n_pred
    while g > 0 or p > 0:
        previous = parent[g][p]
        if previous is None:
            return None
        g, p, run_taken = previous
        if run_taken is not None:  # () is a truth line left unmatched
            rows.append(formula_row(inputs, g, run_taken or None))
    rows.reverse()
    return rows if len(rows) == n_gt else None
