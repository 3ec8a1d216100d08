"""OmniDocBench v1.6's ``quick_match`` (``match_gt2pred_quick`` of its ``match_quick.py``): truth
lines paired with predicted lines, allowing a truth paragraph to take several predicted lines
and a predicted line several truth lines.

1. Multi-line formulas are split (`formula_lines`); predicted blocks are ordered by position,
   inline formulas last; lines are made (`lines`). No truth, no prediction, or one line each:
   the pairs are immediate.
2. Truth lines of the ignored categories (headers, captions, footnotes, ...) first take every
   predicted line within 0.25 of them; those predicted lines leave the main match.
3. Main match: the merge search (`truncation`), a Hungarian assignment on edit distance; pairs
   over 0.7 are undone. Every predicted line then also takes the unmatched truth lines (not
   formulas) that have a window within 0.4 of it. Pairs are grouped by predicted lines, their
   distances recomputed, leftover lines paired by a second assignment (distance set to 1), and
   pairs sharing predicted lines merged.
4. Rows get their texts back: several truth (or predicted) formulas are joined as a
   ``\\begin{array}{l}`` of their lines; other lines are concatenated.

Where the merge search passes its deadline, the page's pairs are the chunked fallback's
(`chunked_match`, reason ``quick_match_timeout``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from pytest_doceval.kinds.omnidocbench.chunked_match import ChunkSettings, chunked_match
from pytest_doceval.kinds.omnidocbench.deadlines import NEVER, Deadline, DeadlinePassed
from pytest_doceval.kinds.omnidocbench.edit_distance import distance, edit_matrix, window_within
from pytest_doceval.kinds.omnidocbench.formula_lines import (
    split_pred_formulas,
    split_truth_formulas,
)
from pytest_doceval.kinds.omnidocbench.lines import IGNORED_TEXT, Lines, TruthBlock, lines_of
from pytest_doceval.kinds.omnidocbench.normalise import strip_formula_delimiters
from pytest_doceval.kinds.omnidocbench.pairs import NO_POSITION, Pair
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock
from pytest_doceval.kinds.omnidocbench.truncation import Group, merge_search

QUICK_MATCH_TIMEOUT = "quick_match_timeout"


@dataclass(frozen=True)
class MatchSettings:
    """``configs/end2end.yaml``'s matcher settings."""

    truncated_timeout_s: float | None = 300.0  # quick_match_truncated_timeout_sec
    page_timeout_s: float | None = 420.0  # match_timeout_sec
    chunks: ChunkSettings = field(default_factory=ChunkSettings)


@dataclass(frozen=True)
class QuickMatch:
    pairs: list[Pair]
    fallback: str | None = None  # QUICK_MATCH_TIMEOUT when the chunked fallback made them


@dataclass
class _Final:
    """One group of predicted lines and the truth lines it took (``final_matches``)."""

    truth: list[int]
    edit: float | None


@dataclass(frozen=True)
class _Side:
    """A subset of the page's lines: its line indices and texts."""

    index: list[int]  # into the page's (filtered) lines
    norm: list[str]
    raw: list[str]


def ordered_predictions(blocks: Sequence[PredBlock]) -> list[PredBlock]:
    """``sort_by_position_skip_inline``: by start, inline formulas last, stable."""
    order = sorted(
        enumerate(blocks), key=lambda p: (p[1].fine == "equation_inline", p[1].start, p[0])
    )
    return [block for _, block in order]


def _merge(
    matches: dict[int, tuple[list[int], float]], fuzzy: dict[int, list[int]]
) -> dict[tuple[int, ...], _Final]:
    """``merge_matches``: pairs keyed by their predicted lines, truth lines taken once."""
    final: dict[tuple[int, ...], _Final] = {}
    taken: set[int] = set()
    for truth, (preds, edit) in matches.items():
        key = tuple(sorted(preds))
        if key in final:
            if truth not in taken:
                final[key].truth.append(truth)
                taken.add(truth)
        else:
            final[key] = _Final([truth], edit)
            taken.add(truth)
    for pred, truths in fuzzy.items():
        key = (pred,)
        if key in final:
            for truth in truths:
                if truth not in taken:
                    final[key].truth.append(truth)
                    taken.add(truth)
        else:
            final[key] = _Final([t for t in truths if t not in taken], None)
            taken.update(final[key].truth)
    return final


def _recompute(
    final: dict[tuple[int, ...], _Final], truth: Sequence[str], pred: Sequence[str]
) -> None:
    """``recalculate_edit_distances``; several truth lines are compared with the *first*
    predicted line only (OmniDocBench's)."""
    for key, info in final.items():
        lines = sorted(set(info.truth))
        if not lines:
            info.edit = 1
            continue
        if len(lines) > 1:
            a, b = "".join(truth[t] for t in lines), pred[key[0]]
        else:
            a, b = truth[lines[0]], " ".join(pred[p] for p in key)
        longer = max(len(a), len(b))
        info.edit = distance(a, b) / longer if longer else 1


# A converted row: truth line ("" for none), predicted lines ("" for none), distance.
_Row = tuple[int | str, list[int] | str, float | None]


def _converted(
    final: dict[tuple[int, ...], _Final], truth: Sequence[str], pred: Sequence[str]
) -> list[_Row]:
    """``convert_final_matches``: one row per truth line; leftovers paired by a second
    assignment in the iteration order of Python's sets, as OmniDocBench builds them."""
    rows: list[_Row] = []
    for key, info in final.items():
        rows.extend((int(t), list(key), info.edit) for t in sorted(set(info.truth)))
    matched_truth: set[int] = set().union(*[set(info.truth) for info in final.values()])
    open_truth = set(range(len(truth))) - matched_truth
    open_pred = set(range(len(pred))) - {p for key in final for p in key}
    if open_pred:
        if open_truth:
            truth_list, pred_list = list(open_truth), list(open_pred)
            costs = [
                [distance(truth[t], pred[p]) / max(len(truth[t]), len(pred[p])) for p in pred_list]
                for t in truth_list
            ]
            for i, j in zip(*linear_sum_assignment(costs), strict=True):
                rows.append((truth_list[i], [pred_list[j]], 1))
        else:
            rows.append(("", list(open_pred), 1))
    else:
        rows.extend((t, "", 1) for t in open_truth)
    return rows


def _merged(
    rows: Sequence[_Row], n_truth: int
) -> list[tuple[list[int | str], list[int] | str, float | None]]:
    """``merge_duplicates_add_unmatched``: rows sharing predicted lines joined; truth lines in
    no row added unmatched at the end."""
    out: list[tuple[list[int | str], list[int] | str, float | None]] = []
    done_pred: set[tuple[object, ...]] = set()
    done_truth: set[int | str] = set()
    for row in rows:
        key = tuple(row[1]) if isinstance(row[1], list) else (row[1],)
        if key in done_pred or key == ("",):
            continue
        truths: list[int | str] = [row[0]]
        for other in rows:
            other_key = tuple(other[1]) if isinstance(other[1], list) else (other[1],)
            if other_key == key and other is not row:
                truths.append(other[0])
                done_truth.add(other[0])
        out.append((truths, row[1], row[2]))
        done_pred.add(key)
        done_truth.add(row[0])
    out += [([t], "", 1) for t in range(n_truth) if t not in done_truth]
    return out


def _pairs_of(
    merged: Sequence[tuple[list[int | str], list[int] | str, float | None]],
    lines: Lines,
    truth: _Side,
    pred: _Side,
    *,
    formula_arrays: bool,
) -> list[Pair]:
    """The rows as pairs, their indices mapped back to the page's lines (module step 4). A
    row with no truth whose first predicted line is an inline formula is dropped (it is always
    the last row: OmniDocBench removes it while walking the list, which skips nothing)."""
    out = []
    for truths, preds, edit in merged:
        t_idx = [truth.index[int(t)] for t in truths] if truths != [""] else []
        p_idx = [pred.index[p] for p in preds] if isinstance(preds, list) else []
        pred_kind = lines.pred_kind(p_idx[0]) if p_idx else ""
        if not t_idx and pred_kind == "equation_inline":
            continue
        if t_idx:
            kinds = [lines.gt_kind[t] for t in t_idx]
            clean = [k for k in kinds if k not in IGNORED_TEXT]
            gt_kind = Counter(clean or kinds).most_common(1)[0][0]
        else:
            gt_kind = ""
        if formula_arrays and gt_kind == "equation_isolated" and len(t_idx) > 1:
            gt = _array([lines.gt[t] for t in t_idx])
        else:
            gt = "".join(lines.gt[t] for t in t_idx)
        if formula_arrays and "equation" in pred_kind and len(p_idx) > 1:
            text = _array([lines.pred[p] for p in p_idx])
        else:
            text = "".join(lines.pred[p] for p in p_idx)
        out.append(
            Pair(
                gt_idx=tuple(t_idx),
                pred_idx=tuple(p_idx),
                gt=gt,
                pred=text,
                norm_gt="".join(lines.gt_norm[t] for t in t_idx),
                norm_pred="".join(lines.pred_norm[p] for p in p_idx),
                gt_position=tuple(lines.gt_position(t) for t in t_idx) if t_idx else NO_POSITION,
                pred_position=lines.pred_position(p_idx[0]) if p_idx else "",
                gt_kind=gt_kind,
                pred_kind=pred_kind,
                edit=1 if edit is None else float(edit),
            )
        )
    return out


def _array(formulas: Sequence[str]) -> str:
    body = " \\\\ ".join("{" + strip_formula_delimiters(f) + "}" for f in formulas)
    return "\\begin{array}{l} " + body + " \\end{array}"


def _one_sided(lines: Lines) -> list[Pair] | None:
    """Step 1's immediate pairs, or None."""
    if not lines.gt_norm:
        return [
            Pair(
                (),
                (i,),
                "",
                lines.pred[i],
                "",
                lines.pred_norm[i],
                NO_POSITION,
                lines.pred_position(i),
                "",
                lines.pred_kind(i),
                1,
            )
            for i in range(len(lines.pred_norm))
        ]
    if not lines.pred_norm:
        return [
            Pair(
                (i,),
                (),
                lines.gt[i],
                "",
                lines.gt_norm[i],
                "",
                (lines.gt_position(i),),
                "",
                lines.gt_kind[i],
                "",
                1,
            )
            for i in range(len(lines.gt_norm))
        ]
    if len(lines.gt_norm) == 1 and len(lines.pred_norm) == 1:
        a, b = lines.gt_norm[0], lines.pred_norm[0]
        return [
            Pair(
                (0,),
                (0,),
                lines.gt[0],
                lines.pred[0],
                a,
                b,
                (lines.gt_position(0),),
                lines.pred_position(0),
                lines.gt_kind[0],
                lines.pred_kind(0),
                distance(a, b) / max(len(a), len(b)),
            )
        ]
    return None


def _ignored_first(lines: Lines, truth: _Side) -> tuple[list[Pair], list[int]]:
    """Step 2: the ignored categories' pairs and the predicted lines they took (with
    repeats: a predicted line close to two ignored truth lines counts twice)."""
    matrix = edit_matrix(truth.norm, lines.pred_norm)
    close = np.argwhere(matrix < 0.25)
    taken = [int(p) for p in close[:, 1]]
    pred = _Side(taken, [lines.pred_norm[p] for p in taken], [lines.pred[p] for p in taken])
    matches: dict[int, tuple[list[int], float]] = {}
    for k, (t, p) in enumerate(close):
        matches[int(t)] = ([k], float(matrix[t][p]))
    final = _merge(matches, {})
    _recompute(final, truth.norm, pred.norm)
    merged = _merged(_converted(final, truth.norm, pred.norm), len(truth.norm))
    return _pairs_of(merged, lines, truth, pred, formula_arrays=False), taken


def _main_match(
    lines: Lines, truth: _Side, pred: _Side, settings: MatchSettings, page: Deadline
) -> list[Pair]:
    """Step 3 (`DeadlinePassed` from the merge search)."""
    cost = edit_matrix(truth.norm, pred.norm)
    truncated = Deadline.after(settings.truncated_timeout_s, QUICK_MATCH_TIMEOUT)
    regrouped = merge_search(cost, truth.norm, pred.norm, [truncated, page])
    rows, cols = linear_sum_assignment(regrouped.cost)
    assigned: dict[int, tuple[Group, float]] = {
        int(r): (regrouped.groups[int(c)], float(regrouped.cost[r][c]))
        for r, c in zip(rows, cols, strict=True)
    }
    matches: dict[int, tuple[list[int], float]] = {}
    unmatched: list[int] = []
    for t in range(len(truth.norm)):
        if t not in assigned:
            unmatched.append(t)
            continue
        group, edit = assigned[t]
        span = list(range(group[0], group[-1] + 1)) if isinstance(group, list) else [group]
        if edit > 0.7:
            unmatched.append(t)
        else:
            matches[t] = (span, edit)
    kinds = [lines.gt_kind[i] for i in truth.index]
    fuzzy: dict[int, list[int]] = {}
    for p, text in enumerate(pred.norm):
        page.check()
        found = [
            t
            for t in unmatched
            if kinds[t] != "equation_isolated"
            and window_within(text, truth.norm[t], 0.4, strict=True)
        ]
        if found:
            fuzzy[p] = found
    final = _merge(matches, fuzzy)
    _recompute(final, truth.norm, pred.norm)
    merged = _merged(_converted(final, truth.norm, pred.norm), len(truth.norm))
    return _pairs_of(merged, lines, truth, pred, formula_arrays=True)


def quick_match(
    truth: Sequence[TruthBlock],
    predicted: Sequence[PredBlock],
    settings: MatchSettings,
    *,
    split_predicted: bool = True,
    page: Deadline = NEVER,
) -> QuickMatch:
    """Match a page's truth blocks with its predicted blocks (module docstring). `page` is
    checked in the loops and once more at the end, so that a match finished past it is a
    match stopped (`DeadlinePassed` propagates: the caller's fallback)."""
    page.check()
    found = _quick_match(truth, predicted, settings, split_predicted, page)
    page.check()
    return found


def _quick_match(
    truth: Sequence[TruthBlock],
    predicted: Sequence[PredBlock],
    settings: MatchSettings,
    split_predicted: bool,
    page: Deadline,
) -> QuickMatch:
    truth = split_truth_formulas(truth)
    ordered = ordered_predictions(predicted)
    if split_predicted:
        ordered = split_pred_formulas(ordered)
    lines = lines_of(truth, ordered)
    immediate = _one_sided(lines)
    if immediate is not None:
        return QuickMatch(immediate)
    n = len(lines.gt_norm)
    ignored = [i for i in range(n) if lines.gt_kind[i] in IGNORED_TEXT]
    kept = [i for i in range(n) if lines.gt_kind[i] not in IGNORED_TEXT]
    ignored_pairs: list[Pair] = []
    taken: list[int] = []
    if ignored:
        side = _Side(ignored, [lines.gt_norm[i] for i in ignored], [lines.gt[i] for i in ignored])
        ignored_pairs, taken = _ignored_first(lines, side)
    free = [i for i in range(len(lines.pred_norm)) if i not in taken]
    truth_side = _Side(kept, [lines.gt_norm[i] for i in kept], [lines.gt[i] for i in kept])
    pred_side = _Side(free, [lines.pred_norm[i] for i in free], [lines.pred[i] for i in free])
    try:
        pairs = _main_match(lines, truth_side, pred_side, settings, page)
    except DeadlinePassed as passed:
        if passed.what != QUICK_MATCH_TIMEOUT:
            raise
        return QuickMatch(chunked_match(truth, ordered, settings.chunks), QUICK_MATCH_TIMEOUT)
    return QuickMatch(pairs + ignored_pairs)
