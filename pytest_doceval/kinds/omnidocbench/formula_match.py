"""OmniDocBench v1.6's display-formula matching (``_match_display_formula_candidates`` of its
``end2end_dataset.py``): several candidate matches of the page's truth formulas, the best kept.

Candidates: the text matcher's own formula rows (``current_match``), ``quick_match`` on the
formulas alone, the Hungarian assignment and the in-order alignment (`formula_dp`, without and
with gaps), the same on each way of cutting the predicted multi-line formulas into runs of lines
(at most 128 ways, formulas of at most 8 lines), the alignment on the formulas split into
lines, and all of it again on predictions whose implication ``cases`` are rewritten as arrays
(``logic_norm_*``). The first four are kept only when they give each truth line exactly one row
with a formula (or nothing) on the predicted side.

The best is the one with the least total distance, then the least pooled character distance,
then the fewest predicted formulas left unused (counted by the formula they came from), the
least mean distance, the most rewritten formulas, the fewest unmatched truth lines (floats
equal within 1e-12); the first candidate wins a tie.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_doceval.kinds.omnidocbench.edit_distance import distance
from pytest_doceval.kinds.omnidocbench.formula_dp import dp_rows, hungarian_rows
from pytest_doceval.kinds.omnidocbench.formula_inputs import (
    FormulaInputs,
    as_display_kind,
    in_formula_order,
    merged_formula,
    prepared,
    with_source,
)
from pytest_doceval.kinds.omnidocbench.formula_lines import (
    logic_brace_normalised,
    split_pred_formulas,
)
from pytest_doceval.kinds.omnidocbench.lines import TruthBlock
from pytest_doceval.kinds.omnidocbench.pairs import Pair
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock
from pytest_doceval.kinds.omnidocbench.quick_match import MatchSettings, quick_match

_ALLOWED_KINDS = ("", "equation_inline", "equation_isolated")
MAX_PARTITIONS = 128
MAX_PARTITION_LINES = 8


@dataclass(frozen=True)
class Candidate:
    """One candidate match: its rows and the predicted formulas its indices point into."""

    name: str
    rows: list[Pair]
    pred_count: int
    pred_items: Sequence[PredBlock]
    raw_pred_count: int
    rewritten: int = 0  # formulas whose cases were rewritten (logic_norm_*)


def _complete(rows: Sequence[Pair] | None, expected: int) -> bool:
    """``_is_complete_formula_candidate_rows``."""
    if expected <= 0:
        return True
    if not rows or len(rows) != expected:
        return False
    seen = set()
    for row in rows:
        if len(row.gt_idx) != 1 or row.gt_idx[0] in seen or row.pred_kind not in _ALLOWED_KINDS:
            return False
        seen.add(row.gt_idx[0])
    return len(seen) == expected


def _display(rows: Sequence[Pair]) -> list[Pair]:
    return [as_display_kind(r) for r in rows]


def _from(name: str, rows: Sequence[Pair], inputs: FormulaInputs, rewritten: int = 0) -> Candidate:
    raw = inputs.ordered_raw
    return Candidate(name, _display(rows), len(raw), raw, len(raw), rewritten)


def quick_rows(
    truth: Sequence[TruthBlock], predicted: Sequence[PredBlock], settings: MatchSettings
) -> list[Pair]:
    """``_build_formula_quick_candidate``: ``quick_match`` on the formulas, unsplit."""
    found = quick_match(truth, predicted, settings, split_predicted=False).pairs
    return _display([p for p in found if p.has_truth])


def _wrapped(content: str) -> str:
    stripped = content.strip()
    if not stripped:
        return ""
    for left, right in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)")):
        if stripped.startswith(left) and stripped.endswith(right):
            return stripped
    return f"\\[{stripped}\\]"


def _segment_block(lines: Sequence[PredBlock]) -> PredBlock:
    if len(lines) == 1:
        return lines[0]
    content = _wrapped(merged_formula([b.content for b in lines]))
    return dataclasses.replace(
        lines[0], content=content, end=lines[-1].end, fine="equation_isolated"
    )


def _cuts(lines: Sequence[PredBlock]) -> list[list[PredBlock]]:
    """``_enumerate_formula_line_partitions`` with each part made one block."""
    n = len(lines)
    out = []
    for mask in range(1 << (n - 1)):
        parts, start = [], 0
        for boundary in range(n - 1):
            if mask & (1 << boundary):
                parts.append(lines[start : boundary + 1])
                start = boundary + 1
        parts.append(lines[start:n])
        out.append([_segment_block(part) for part in parts])
    return out


def cut_predictions(predicted: Sequence[PredBlock]) -> list[list[PredBlock]]:
    """``_build_formula_partitioned_pred_candidates``: every combination of ways to cut each
    splittable formula into runs of its lines (none when there are more than 128)."""
    options: list[list[list[PredBlock]]] = []
    total, splittable = 1, False
    for block in in_formula_order(with_source(predicted)):
        lines = split_pred_formulas([block])
        if len(lines) <= 1 or len(lines) > MAX_PARTITION_LINES:
            options.append([[block]])
            continue
        splittable = True
        cuts = _cuts(lines)
        total *= max(1, len(cuts))
        if total > MAX_PARTITIONS:
            return []
        options.append(cuts)
    if not splittable:
        return []
    out: list[list[PredBlock]] = [[]]
    for choices in options:
        out = [[*done, *choice] for done in out for choice in choices]
    return out


def split_hungarian(truth: Sequence[TruthBlock], predicted: Sequence[PredBlock]) -> list[Candidate]:
    out, seen = [], set()
    for blocks in cut_predictions(predicted):
        inputs = prepared(truth, blocks, split=False)
        rows = hungarian_rows(inputs)
        if not rows:
            continue
        key = tuple((r.gt_position, r.pred_idx, round(float(r.edit), 6)) for r in rows)
        if key in seen:
            continue
        seen.add(key)
        raw = inputs.ordered_raw
        out.append(Candidate("split_hungarian", _display(rows), len(raw), raw, len(predicted)))
    return out


def split_dp(truth: Sequence[TruthBlock], predicted: Sequence[PredBlock]) -> list[Candidate]:
    inputs = prepared(truth, predicted, split=True)
    if not inputs.was_split:
        return []
    out = []
    for name, gaps in (("split_dp", False), ("split_dp_allow_gaps", True)):
        rows = dp_rows(inputs, allow_gaps=gaps)
        if rows:
            ordered = inputs.ordered
            out.append(
                Candidate(name, _display(rows), len(ordered), ordered, len(inputs.ordered_raw))
            )
    return out


def _unsplit(
    truth: Sequence[TruthBlock],
    predicted: Sequence[PredBlock],
    settings: MatchSettings,
    prefix: str,
    rewritten: int,
) -> list[Candidate]:
    """Quick, Hungarian and alignments on the unsplit formulas, where complete."""
    inputs = prepared(truth, predicted, split=False)
    expected = inputs.gt_count
    found = [(f"{prefix}quick_unsplit", quick_rows(truth, predicted, settings))]
    found.append((f"{prefix}hungarian_unsplit", hungarian_rows(inputs)))
    for name, gaps in (("dp_unsplit", False), ("dp_unsplit_allow_gaps", True)):
        found.append((prefix + name, dp_rows(inputs, allow_gaps=gaps) or []))
    return [
        _from(name, rows, inputs, rewritten) for name, rows in found if _complete(rows, expected)
    ]


def logic_candidates(
    truth: Sequence[TruthBlock], predicted: Sequence[PredBlock], settings: MatchSettings
) -> list[Candidate]:
    """``_build_logic_brace_normalized_formula_candidates``: all of it on rewritten cases."""
    rewritten, count = [], 0
    for block in with_source(predicted):
        if block.category == "equation_isolated":
            content = logic_brace_normalised(block.content)
            if content != block.content:
                block = dataclasses.replace(block, content=content)
                count += 1
        rewritten.append(block)
    if count <= 0:
        return []
    out = _unsplit(truth, rewritten, settings, "logic_norm_", count)
    for candidate in [*split_hungarian(truth, rewritten), *split_dp(truth, rewritten)]:
        out.append(
            dataclasses.replace(candidate, name="logic_norm_" + candidate.name, rewritten=count)
        )
    return out


@dataclass(frozen=True)
class _Stats:
    """The parts of ``_formula_match_page_stats`` the choice reads."""

    weighted: float | None
    mean: float | None
    unmatched: int


def _stats(rows: Sequence[Pair]) -> _Stats:
    rows = [r for r in rows if r.has_truth]
    if not rows:
        return _Stats(None, None, 0)
    edits = upper = 0
    for row in rows:
        if row.has_prediction:
            longer = max(len(row.norm_gt), len(row.norm_pred))
            upper += longer
            if longer > 0:
                edits += distance(row.norm_gt, row.norm_pred)
    mean = sum(float(r.edit) for r in rows) / len(rows)
    unmatched = sum(1 for r in rows if not r.has_prediction)
    return _Stats(edits / upper if upper else 0, mean, unmatched)


def _key(candidate: Candidate) -> tuple[float, float, int, float, int, int]:
    """``_formula_candidate_total_key``."""
    total = sum(float(r.edit) for r in candidate.rows if r.has_truth)
    used = set()
    for row in candidate.rows:
        for i in row.pred_idx:
            if 0 <= i < len(candidate.pred_items):
                used.add(candidate.pred_items[i].source)
    used.discard(None)
    stats = _stats(candidate.rows)
    inf = float("inf")
    return (
        total,
        inf if stats.weighted is None else float(stats.weighted),
        max(0, candidate.raw_pred_count - len(used)),
        inf if stats.mean is None else stats.mean,
        -candidate.rewritten,
        stats.unmatched,
    )


def _better(new: Candidate, best: Candidate) -> bool:
    """``_is_formula_total_cost_better``: floats equal within 1e-12."""
    for slot, (a, b) in enumerate(zip(_key(new), _key(best), strict=True)):
        if slot in (0, 1, 3):
            if a + 1e-12 < b:
                return True
            if a > b + 1e-12:
                return False
        elif a != b:
            return a < b
    return False


def best_formula_rows(
    truth: Sequence[TruthBlock],
    predicted: Sequence[PredBlock],
    current: Sequence[Pair],
    settings: MatchSettings,
) -> tuple[list[Pair], str | None]:
    """The chosen candidate's rows and its name (None when there was no candidate)."""
    inputs = prepared(truth, predicted, split=False)
    candidates = []
    rows = _display([r for r in current if r.has_truth])
    if _complete(rows, inputs.gt_count):
        candidates.append(_from("current_match", rows, inputs))
    candidates += _unsplit(truth, predicted, settings, "", 0)
    candidates += split_hungarian(truth, predicted)
    candidates += split_dp(truth, predicted)
    candidates += logic_candidates(truth, predicted, settings)
    best = None
    for candidate in candidates:
        if best is None or _better(candidate, best):
            best = candidate
    return (list(best.rows), best.name) if best else ([], None)
