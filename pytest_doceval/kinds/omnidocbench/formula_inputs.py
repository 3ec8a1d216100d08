"""The inputs of OmniDocBench v1.6's display-formula matcher (``end2end_dataset.py``,
``_prepare_formula_candidate_inputs`` and the helpers around it): the truth formulas split into
lines, the predicted formula candidates in order, their lines, and one matched row built from
them (``_build_formula_match_entry``).

Predicted candidates are the page's display and inline formulas and the formula-like text,
alt texts and table cells offered as "rescue" candidates (`candidate_pool`); each remembers
the formula it came from (`PredBlock.source`), which its split lines and rewrites keep.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_doceval.kinds.omnidocbench.edit_distance import normalised_edit
from pytest_doceval.kinds.omnidocbench.formula_lines import (
    split_pred_formulas,
    split_truth_formulas,
)
from pytest_doceval.kinds.omnidocbench.lines import Lines, TruthBlock, lines_of
from pytest_doceval.kinds.omnidocbench.normalise import strip_formula_delimiters
from pytest_doceval.kinds.omnidocbench.pairs import Pair
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock
from pytest_doceval.kinds.omnidocbench.segmentation import Segmented

RESCUE_KINDS: Final = ("text_formula", "image_formula", "formula_rescue", "table_formula_rescue")


def formula_kind(block: PredBlock) -> str:
    """``_get_formula_pred_category_type``: rescue candidates count as display formulas."""
    kind = block.fine or block.category or "equation_isolated"
    return "equation_isolated" if kind in RESCUE_KINDS else kind


def as_display_kind(pair: Pair) -> Pair:
    """``_normalize_formula_match_categories`` for one row."""
    if pair.pred_kind in RESCUE_KINDS:
        return dataclasses.replace(pair, pred_kind="equation_isolated")
    return pair


def with_source(blocks: Sequence[PredBlock]) -> list[PredBlock]:
    """``_annotate_formula_source_items``: each block remembers the formula it came from."""
    return [
        b if b.source is not None else dataclasses.replace(b, source=b.source_key) for b in blocks
    ]


def candidate_pool(segmented: Segmented) -> list[PredBlock]:
    """``_build_formula_candidate_pool``: display/inline formulas, then rescue candidates made
    display formulas, without repeats."""
    pool: list[PredBlock] = []
    seen: set[tuple[int, int, str, str | None, str]] = set()
    for block in segmented.of("equation_isolated"):
        _add(pool, seen, block)
    for block in segmented.of("formula_rescue"):
        forced = dataclasses.replace(
            block, category="equation_isolated", fine=block.fine or "formula_rescue"
        )
        _add(pool, seen, forced)
    return pool


def _add(
    pool: list[PredBlock], seen: set[tuple[int, int, str, str | None, str]], b: PredBlock
) -> None:
    key = (b.start, b.end, b.content, b.fine or "", b.category)
    if key not in seen:
        seen.add(key)
        pool.append(b)


def in_formula_order(blocks: Sequence[PredBlock]) -> list[PredBlock]:
    """By start, inline formulas after display ones at a start, then by end."""
    return sorted(blocks, key=lambda b: (b.start, formula_kind(b) == "equation_inline", b.end))


@dataclass(frozen=True)
class FormulaInputs:
    """A page's formula lines for one candidate match (``prepared``)."""

    lines: Lines  # truth formula lines and predicted lines (block lists unfiltered, as ever)
    ordered_raw: list[PredBlock]  # the candidates with sources, in formula order, unsplit
    ordered: list[PredBlock]  # the same, split when asked
    rescued: int  # candidates that were rescue candidates

    @property
    def gt_count(self) -> int:
        return len(self.lines.gt)

    @property
    def pred_count(self) -> int:
        return len(self.lines.pred)

    @property
    def was_split(self) -> bool:
        return len(self.ordered) > len(self.ordered_raw)


def prepared(
    truth: Sequence[TruthBlock], predicted: Sequence[PredBlock], *, split: bool
) -> FormulaInputs:
    """``_prepare_formula_candidate_inputs``."""
    annotated = with_source(predicted)
    ordered_raw = in_formula_order(annotated)
    ordered = split_pred_formulas(ordered_raw) if split else ordered_raw
    lines = lines_of(split_truth_formulas(truth), ordered)
    # OmniDocBench counts the candidates whose `formula_kind` is a rescue kind, which it never
    # is (`formula_kind` makes them display formulas): always 0, and so its uses below.
    rescued = sum(1 for b in annotated if formula_kind(b) in RESCUE_KINDS)
    return FormulaInputs(lines, ordered_raw, ordered, rescued)


def merged_formula(parts: Sequence[str]) -> str:
    """``_build_merged_formula_content``: several formulas as one ``array`` of their bodies."""
    pieces = ["{" + s + "}" for part in parts if (s := strip_formula_delimiters(part.strip()))]
    if not pieces:
        return ""
    if len(pieces) == 1:
        return pieces[0][1:-1]
    return "\\begin{array}{l} " + " \\\\ ".join(pieces) + " \\end{array}"


def formula_row(inputs: FormulaInputs, gt: int, seq: Sequence[int] | None) -> Pair:
    """``_build_formula_match_entry``: truth line `gt` with predicted lines `seq` (or none)."""
    lines = inputs.lines
    position = (lines.gt_blocks[gt].formula_position,)
    if not seq:
        return Pair(
            (gt,),
            (),
            lines.gt[gt],
            "",
            lines.gt_norm[gt],
            "",
            position,
            "",
            lines.gt_kind[gt],
            "",
            1,
        )
    first = lines.pred_blocks[seq[0]]
    parts = [lines.pred[i] for i in seq]
    norm_pred = " ".join(lines.pred_norm[i] for i in seq).strip()
    return Pair(
        gt_idx=(gt,),
        pred_idx=tuple(seq),
        gt=lines.gt[gt],
        pred=merged_formula(parts) if len(seq) >= 2 else parts[0],
        norm_gt=lines.gt_norm[gt],
        norm_pred=norm_pred,
        gt_position=position,
        pred_position=first.start,
        gt_kind=lines.gt_kind[gt],
        pred_kind="equation_isolated" if len(seq) >= 2 else formula_kind(first),
        edit=normalised_edit(lines.gt_norm[gt], norm_pred),
    )
