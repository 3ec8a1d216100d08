"""The two corrections OmniDocBench v1.6 applies to its text match (``end2end_dataset.py``).

* `cross_category`: a pair of a formula and a text block (either way round) is compared as
  text: the formula without its delimiters, inline math read as text, both normalised as text
  (``_adapt_cross_category_norm``).
* `local_span_fallback`: a poorly matched title, or text block with a formula in it or of at
  least 80 characters (normalised distance over 0.45), may take instead a run of consecutive
  predicted text blocks (up to 4; up to 8, formulas allowed, when the truth holds a formula)
  near its own match and not used by another pair, when that run is closer by more than 0.2
  and within 0.35 (0.45). Best runs go first by their gain; a run overlapping one taken is
  skipped (``_maybe_apply_local_text_span_fallback``, logged as ``[text-fallback]``).

The run search indexes predicted blocks in its own list (text and formula blocks by position)
and reads the other pairs' indices as if they were in it, as OmniDocBench does.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_doceval.kinds.omnidocbench.edit_distance import normalised_edit
from pytest_doceval.kinds.omnidocbench.normalise import (
    normalised_text,
    strip_formula_delimiters,
    textblock_to_unicode,
    textblock_with_normalised_formulas,
)
from pytest_doceval.kinds.omnidocbench.pairs import Pair
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock
from pytest_doceval.kinds.omnidocbench.quick_match import ordered_predictions

FORMULA_CATEGORIES: Final = ("equation_isolated", "equation_inline")
_INLINE_HINT: Final = re.compile(r"\$[^$]+\$|\\\([^)]*\\\)")
_COMMAND_HINTS: Final = ("\\frac", "\\sum", "\\int", "\\sqrt", "\\left", "\\right")


def cross_text(category: str, text: str) -> str:
    """``_cross_category_text``: a formula's body, or a text's, with inline math as text."""
    if category not in FORMULA_CATEGORIES:
        return textblock_to_unicode(text)
    return textblock_to_unicode(strip_formula_delimiters(text))


def cross_category(pair: Pair) -> Pair:
    """A formula/text pair compared as text (module docstring); other pairs as they are."""
    if not pair.gt_kind or not pair.pred_kind:
        return pair
    if (pair.gt_kind in FORMULA_CATEGORIES) == (pair.pred_kind in FORMULA_CATEGORIES):
        return pair
    gt, pred = cross_text(pair.gt_kind, pair.gt), cross_text(pair.pred_kind, pair.pred)
    norm_gt, norm_pred = normalised_text(gt), normalised_text(pred)
    return dataclasses.replace(
        pair,
        gt=gt,
        pred=pred,
        norm_gt=norm_gt,
        norm_pred=norm_pred,
        edit=normalised_edit(norm_gt, norm_pred),
    )


def has_formula_hint(text: str) -> bool:
    """``_text_contains_formula_hint``."""
    if not text:
        return False
    if _INLINE_HINT.search(text) or any(c in text for c in _COMMAND_HINTS):
        return True
    return ("^" in text or "_" in text) and ("$" in text or "\\" in text)


@dataclass(frozen=True)
class _Pooled:
    category: str
    raw: str
    rendered: str
    start: int
    end: int


def _pool(predicted: Sequence[PredBlock]) -> list[_Pooled]:
    """``_build_local_text_search_pool``: text and formula blocks in position order."""
    return [
        _Pooled(b.category, b.content, cross_text(b.category, b.content), b.start, b.end)
        for b in ordered_predictions(predicted)
        if b.category in ("text_all", "equation_isolated")
    ]


def _owned(pair: Pair, pool: Sequence[_Pooled]) -> list[int]:
    """``_match_item_pred_pool_indices``: the pair's predicted indices that fall in the pool,
    else the pool blocks whose span holds its predicted position."""
    inside = sorted({i for i in pair.pred_idx if 0 <= i < len(pool)})
    if inside:
        return inside
    if pair.pred_position in ("", None):
        return []
    at = float(pair.pred_position)
    return [i for i, item in enumerate(pool) if float(item.start) <= at <= float(item.end)]


def _worth_trying(pair: Pair) -> bool:
    if not pair.has_truth or pair.gt_kind not in ("title", "text_block") or pair.edit <= 0.45:
        return False
    return pair.gt_kind == "title" or has_formula_hint(pair.gt) or len(pair.norm_gt) >= 80


@dataclass(frozen=True)
class _Run:
    indices: tuple[int, ...]
    raw: str
    start: int
    norm: str
    edit: float
    distance_to_own: int


def _best_run(pair: Pair, pool: Sequence[_Pooled], blocked: set[int]) -> _Run | None:
    """``_search_best_local_text_span``."""
    hint = has_formula_hint(pair.gt)
    if hint and pair.gt_kind not in FORMULA_CATEGORIES:
        target = normalised_text(textblock_with_normalised_formulas(pair.gt))
    else:
        target = normalised_text(cross_text(pair.gt_kind, pair.gt))
    if not target:
        return None
    owned = _owned(pair, pool)
    low = max(0, min(owned) - 8) if owned else 0
    high = min(len(pool) - 1, max(owned) + 8) if owned else len(pool) - 1
    allowed = ("text_all", "equation_isolated") if hint else ("text_all",)
    longest, limit = (8, 0.45) if hint else (4, 0.35)
    best: _Run | None = None
    for start in range(low, high + 1):
        if pool[start].category not in allowed or start in blocked:
            continue
        raws: list[str] = []
        rendered: list[str] = []
        for end in range(start, min(high + 1, start + longest)):
            if pool[end].category not in allowed or end in blocked:
                break
            raws.append(pool[end].raw)
            rendered.append(pool[end].rendered)
            norm = normalised_text("".join(rendered))
            if not norm:
                continue
            run = _Run(
                tuple(range(start, end + 1)),
                "".join(raws),
                pool[start].start,
                norm,
                normalised_edit(target, norm),
                abs(start - owned[0]) if owned else 0,
            )
            if best is None or _shorter_or_closer(run, best):
                best = run
    if best is None or best.edit >= pair.edit - 0.2 or best.edit > limit:
        return None
    return best


def _shorter_or_closer(run: _Run, best: _Run) -> bool:
    if run.edit + 1e-12 < best.edit:
        return True
    if run.edit > best.edit + 1e-12:
        return False
    if len(run.indices) != len(best.indices):
        return len(run.indices) < len(best.indices)
    return run.distance_to_own < best.distance_to_own


def local_span_fallback(
    pairs: Sequence[Pair], predicted: Sequence[PredBlock]
) -> tuple[list[Pair], int]:
    """The pairs with the fallback's replacements, and how many were made (module docs)."""
    pool = _pool(predicted)
    if not pairs or not pool:
        return list(pairs), 0
    found: list[tuple[int, float, _Run]] = []
    for i, pair in enumerate(pairs):
        if not _worth_trying(pair):
            continue
        blocked: set[int] = set()
        for j, other in enumerate(pairs):
            if j != i and other.has_truth:
                blocked.update(_owned(other, pool))
        run = _best_run(pair, pool, blocked)
        if run is not None:
            found.append((i, float(pair.edit) - run.edit, run))
    out = list(pairs)
    used: set[int] = set()
    replaced = 0
    for i, _, run in sorted(found, key=lambda item: item[1], reverse=True):
        if used & set(run.indices):
            continue
        replaced += 1
        out[i] = dataclasses.replace(
            out[i],
            pred_idx=run.indices,
            pred=run.raw,
            pred_position=run.start,
            pred_kind="text_block",
            norm_pred=run.norm,
            edit=run.edit,
        )
        used.update(run.indices)
    return out, replaced
