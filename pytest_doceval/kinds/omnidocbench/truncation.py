"""OmniDocBench v1.6's merge search (``deal_with_truncated`` of its ``match_quick.py``): a truth
paragraph that a parser cut into several predicted blocks is matched with those blocks joined.

For every truth line with no predicted line within 0.25 of it, and every such predicted line,
the following predicted lines are joined on (``judge_pred_merge``) while the join gets no
further from the truth, every joined line has a window of the truth within 0.6 of it, the new
one within strictly less, and the join is not yet longer than the truth (at most 160 lines).
The best join per truth line is kept; overlapping joins are settled by `settled_joins`
(``get_final_subset``), and the predicted lines are regrouped (``merge_lists_with_sublists``).

The search's answers are those of OmniDocBench's code; it computes fewer distances: a join's
distance is carried to the next step, and each line's window test is asked once per truth line
and with a cut-off (`edit_distance.window_within`).
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pytest_doceval.kinds.omnidocbench.deadlines import Deadline
from pytest_doceval.kinds.omnidocbench.edit_distance import edit_matrix, ratio, window_within

MAX_JOIN = 160  # MAX_TRUNCATED_PRED_MERGE
WINDOW_LIMIT = 0.6  # judge_pred_merge's threshold
# A predicted line: its index, or the indices of a join.
Group = int | list[int]


@dataclass(frozen=True)
class Regrouped:
    """The predicted lines after the merge search: joins as index lists, their texts, and the
    cost matrix against the truth lines (the input's own when nothing was joined)."""

    cost: NDArray[np.float64]
    lines: Sequence[str]
    groups: Sequence[Group]


class _Windows:
    """One truth line's window tests of predicted lines, each asked once."""

    def __init__(self, truth: str, lines: Sequence[str]) -> None:
        self.truth, self.lines = truth, lines
        self._within: dict[int, bool] = {}
        self._below: dict[int, bool] = {}

    def within(self, i: int) -> bool:
        if i not in self._within:
            self._within[i] = window_within(self.truth, self.lines[i], WINDOW_LIMIT, strict=False)
        return self._within[i]

    def below(self, i: int) -> bool:
        if i not in self._below:
            self._below[i] = window_within(self.truth, self.lines[i], WINDOW_LIMIT, strict=True)
        return self._below[i]


def _best_join(
    windows: _Windows, start: int, masked: set[int], check: list[Deadline]
) -> tuple[list[int], float]:
    """The join from predicted line `start` on, and its distance to the truth (module docs)."""
    truth, lines = windows.truth, windows.lines
    step = 1
    joined = lines[start]
    joined_ratio = ratio(truth, joined)
    while True:
        for deadline in check:
            deadline.check()
        following = start + step
        if step >= MAX_JOIN or following in masked or following >= len(lines):
            break
        candidate = joined + " " + lines[following]
        candidate_ratio = ratio(truth, candidate)
        if candidate_ratio > joined_ratio:
            break
        if not all(windows.within(i) for i in range(start, following)):
            break
        if len(lines[following]) > len(truth) or not windows.below(following):
            break
        step += 1
        joined, joined_ratio = candidate, candidate_ratio
        if len(candidate) > len(truth):
            break
    return list(range(start, start + step)), joined_ratio


def settled_joins(joins: Sequence[list[int]], costs: Sequence[float]) -> list[list[int]]:
    """``get_final_subset``: joins sorted by first line, grouped where a join shares a line with
    one before it in its group; a group of several is split into paths of joins that share no
    line (a same join keeps its cheaper cost) and the path of least mean cost kept.

    The path loop is OmniDocBench's, quirks and all (it edits the list it walks), since which
    joins survive decides the scores."""
    if not joins or not costs:
        return []
    ordered = sorted(zip(joins, costs, strict=False), key=lambda item: item[0][0])
    groups: defaultdict[int, list[tuple[list[int], float]]] = defaultdict(list)
    group = 0
    groups[group].append(ordered[0])
    for item in ordered[1:]:
        if any(i in other[0] for other in groups[group] for i in item[0]):
            groups[group].append(item)
        else:
            group += 1
            groups[group].append(item)
    out: list[list[int]] = []
    for members in groups.values():
        if len(members) == 1:
            out.append(members[0][0])
            continue
        paths: defaultdict[int, list[tuple[list[int], float]]] = defaultdict(list)
        paths[0].append(members[0])
        for join in members[1:]:
            new_path = True
            for path in paths.values():
                clash = same = False
                for item in path:  # OmniDocBench pops and appends to `path` while walking it
                    if item[0] == join[0]:
                        clash = same = True
                        if item[1] > join[1]:
                            path.pop(path.index(item))
                            path.append(join)
                    elif any(a == b for a in item[0] for b in join[0]):
                        clash = True
                if not clash:
                    path.append(join)
                    new_path = False
                if same:
                    new_path = False
            if new_path:
                paths[len(paths)].append(join)
        best, best_cost = [], float("inf")
        for path in paths.values():
            mean = sum(cost for _, cost in path) / len(path)
            if mean < best_cost:
                best, best_cost = [j for j, _ in path], mean
        out.extend(best)
    return out


def regrouped(count: int, joins: Sequence[list[int]]) -> list[Group]:
    """``merge_lists_with_sublists``: 0..count-1 with each join's lines replaced by the join.
    A join whose first line another join took is OmniDocBench's crash (a ValueError here too:
    the page's error)."""
    groups: list[Group] = list(copy.deepcopy(range(count)))
    for join in joins:
        at = groups.index(join[0])
        for _ in join:
            groups.pop(at)
        groups.insert(at, join)
    return groups


def merge_search(
    cost: NDArray[np.float64],
    truth: Sequence[str],
    lines: Sequence[str],
    check: list[Deadline],
) -> Regrouped:
    """The merge search of the module docstring; every deadline in `check` is checked in its
    loops (`DeadlinePassed`)."""
    close = np.argwhere(cost < 0.25)
    masked_truth = {int(i) for i in close[:, 0]}
    masked = {int(i) for i in close[:, 1]}
    open_truth = [i for i in range(cost.shape[0]) if i not in masked_truth]
    open_pred = [i for i in range(cost.shape[1]) if i not in masked]
    joins, join_costs = [], []
    for t in open_truth:
        for deadline in check:
            deadline.check()
        best: tuple[list[int], float] | None = None
        windows = _Windows(truth[t], lines)
        for p in open_pred:
            for deadline in check:
                deadline.check()
            join = _best_join(windows, p, masked, check)
            if best is None or join[1] < best[1]:
                best = join
        if best is not None:
            joins.append(best[0])
            join_costs.append(best[1])
    settled = settled_joins(joins, join_costs)
    if not settled:
        return Regrouped(cost, lines, list(range(len(lines))))
    groups = regrouped(len(lines), settled)
    texts = [" ".join(lines[g[0] : g[-1] + 1]) if isinstance(g, list) else lines[g] for g in groups]
    return Regrouped(edit_matrix(truth, texts), texts, groups)
