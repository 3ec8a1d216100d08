"""OmniDocBench v1.6's fallback match for a page whose text matching ran out of time
(``match_gt2pred_timeout_safe`` of its ``match.py``): a chunked Hungarian assignment.

Predicted blocks (in position order) are grouped into chunks of consecutive text blocks: a
chunk grows while it is shorter than a target, or the next block is short, or the text runs on
(no closing punctuation, or the next starts in lower case), up to a maximum length and 10
blocks; the sizes follow the page's median truth length. Each truth block is assigned one chunk
by the Hungarian method on edit distance plus penalties (a formula against text, a chunk far
from the truth block's relative place) and kept if the plain distance is within a threshold
that grows with the truth's length. The rest are unmatched on either side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from scipy.optimize import linear_sum_assignment

from pytest_doceval.kinds.omnidocbench.edit_distance import edit_matrix
from pytest_doceval.kinds.omnidocbench.lines import TEXT_CATEGORIES, Position, TruthBlock
from pytest_doceval.kinds.omnidocbench.normalise import normalised_formula, normalised_text
from pytest_doceval.kinds.omnidocbench.pairs import NO_POSITION, Pair
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock

_FORMULA_KINDS: Final = {"equation_isolated", "equation_inline", "formula_rescue"}
_CLOSING: Final = '.!?。！？;；:：)]}」』”’"'
_CONTINUING: Final = ",.;:!?)]}%"


@dataclass(frozen=True)
class ChunkSettings:
    """``timeout_fallback_*`` of ``configs/end2end.yaml`` (None: derived from the page)."""

    short_line: int | None = None
    target: int | None = None
    longest: int | None = None
    span: int = 10
    order_window: int | None = None
    order_penalty: float = 0.10


@dataclass(frozen=True)
class _Record:
    index: int  # in the block list it came from
    raw: str
    norm: str
    kind: str
    position: Position
    formula: bool


@dataclass(frozen=True)
class _Chunk:
    indices: tuple[int, ...]
    raw: str
    norm: str
    kind: str
    position: Position
    formula: bool


def _truth_records(blocks: Sequence[TruthBlock]) -> list[_Record]:
    out = []
    for i, block in enumerate(blocks):
        if block.content:
            raw = block.content
            norm = normalised_text(raw) if block.category == "text_all" else raw
        elif block.category in TEXT_CATEGORIES:
            raw = block.text or ""
            norm = normalised_text(raw)
        elif block.category == "equation_isolated":
            raw = block.latex or ""
            norm = normalised_formula(raw)
        else:
            continue
        if raw and norm:
            formula = block.category == "equation_isolated" or block.kind in _FORMULA_KINDS
            out.append(_Record(i, raw, norm, block.kind, block.position, formula))
    return out


def _pred_records(blocks: Sequence[PredBlock]) -> list[_Record]:
    out = []
    for i, block in enumerate(blocks):
        if not block.content:
            continue
        if block.category == "text_all":
            norm = normalised_text(block.content)
        elif block.category == "equation_isolated":
            norm = normalised_formula(block.content)
        else:
            norm = block.content
        if norm:
            formula = block.category == "equation_isolated" or block.kind in _FORMULA_KINDS
            out.append(_Record(i, block.content, norm, block.kind, block.start, formula))
    return sorted(out, key=lambda r: r.position if isinstance(r.position, int) else 0)


def _clamp(value: int, low: int, high: int) -> int:
    return min(high, max(low, value))


def _sizes(truth: Sequence[_Record], settings: ChunkSettings) -> tuple[int, int, int]:
    lengths = [len(r.norm) for r in truth if not r.formula]
    median = int(np.median(lengths)) if lengths else 120
    short = _given(settings.short_line, max(24, min(72, int(median * 0.45))))
    short = _clamp(short, 12, 160)
    target = _given(settings.target, max(short * 2, min(220, int(median * 0.95))))
    target = _clamp(target, short, 420)
    longest = _given(settings.longest, max(target + 48, min(320, int(median * 1.35))))
    return short, target, _clamp(longest, target, 640)


def _given(value: int | None, default: int) -> int:
    return default if value is None else value


def _open_ended(raw: str) -> bool:
    text = raw.rstrip()
    return bool(text) and text[-1] not in _CLOSING


def _continues(raw: str) -> bool:
    text = raw.lstrip()
    return bool(text) and (text[0].islower() or text[0].isdigit() or text[0] in _CONTINUING)


def _chunk(records: Sequence[_Record]) -> _Chunk | None:
    raws = [r.raw for r in records if r.raw]
    norms = [r.norm for r in records if r.norm]
    if not raws or not norms:
        return None
    first = records[0]
    if all(r.kind == first.kind for r in records):
        kind = first.kind
    elif all(not r.formula for r in records):
        kind = "text_block"
    else:
        kind = first.kind
    return _Chunk(
        tuple(r.index for r in records),
        " ".join(raws),
        "".join(norms),
        kind,
        first.position,
        any(r.formula for r in records),
    )


def _chunks(records: Sequence[_Record], sizes: tuple[int, int, int], span: int) -> list[_Chunk]:
    short, target, longest = sizes
    out = []
    i = 0
    while i < len(records):
        group = [records[i]]
        i += 1
        if not group[0].formula:
            length = len(group[0].norm)
            while i < len(records) and not records[i].formula and len(group) < span:
                following = records[i]
                joined = length + len(following.norm)
                if joined > longest:
                    break
                if not (
                    length < target
                    or len(following.norm) <= short
                    or _open_ended(group[-1].raw)
                    or _continues(following.raw)
                ):
                    break
                group.append(following)
                i += 1
                length = joined
                if length >= target and not _open_ended(group[-1].raw):
                    break
        chunk = _chunk(group)
        if chunk is not None:
            out.append(chunk)
    return out


def _threshold(norm: str) -> float:
    n = len(norm)
    return 0.40 if n <= 6 else 0.55 if n <= 20 else 0.68 if n <= 80 else 0.78


def chunked_match(
    truth: Sequence[TruthBlock], predicted: Sequence[PredBlock], settings: ChunkSettings
) -> list[Pair]:
    """The fallback match of the module docstring."""
    truth_records, pred_records = _truth_records(truth), _pred_records(predicted)
    chunks = _chunks(pred_records, _sizes(truth_records, settings), _clamp(settings.span, 1, 32))
    window = settings.order_window
    if window is not None:
        window = _clamp(window, 2, 128)
    elif chunks:
        window = max(6, min(48, len(chunks) // 6 + 6))
    unmatched_truth = [_pair(r, None, 1) for r in truth_records]
    if not truth_records or not chunks:
        return unmatched_truth if truth_records else [_pair(None, c, 1) for c in chunks]
    edits = edit_matrix([r.norm for r in truth_records], [c.norm for c in chunks])
    cost = np.array(edits, copy=True)
    n_truth, n_chunks = len(truth_records), len(chunks)
    truth_den, chunk_den = (1, 1) if n_truth <= 1 or n_chunks <= 1 else (n_truth - 1, n_chunks - 1)
    for t, record in enumerate(truth_records):
        expected = round(t * chunk_den / truth_den) if n_chunks > 1 and n_truth > 1 else 0
        for c, chunk in enumerate(chunks):
            penalty = 0.0
            if record.formula and not chunk.formula:
                penalty += 0.18
            elif not record.formula and chunk.formula:
                penalty += 0.10
            if window is not None:
                overflow = abs(c - expected) - window
                if overflow > 0:
                    penalty += 0.30 + 0.02 * overflow
            else:
                penalty += settings.order_penalty * abs(t / truth_den - c / chunk_den)
            cost[t][c] += penalty
    rows, cols = linear_sum_assignment(cost)
    assigned = {int(r): int(c) for r, c in zip(rows, cols, strict=True)}
    pairs: list[Pair] = []
    used: set[int] = set()
    for t, record in enumerate(truth_records):
        chosen = assigned.get(t)
        if chosen is None:
            pairs.append(unmatched_truth[t])
            continue
        edit = float(edits[t][chosen])
        mismatch = record.formula != chunks[chosen].formula
        threshold = _threshold(record.norm) - (0.08 if mismatch else 0)
        if edit <= max(0.25, threshold):
            used.add(chosen)
            pairs.append(_pair(record, chunks[chosen], edit))
        else:
            pairs.append(unmatched_truth[t])
    pairs += [_pair(None, chunk, 1) for c, chunk in enumerate(chunks) if c not in used]
    return pairs


def _pair(truth: _Record | None, chunk: _Chunk | None, edit: float) -> Pair:
    return Pair(
        gt_idx=(truth.index,) if truth else (),
        pred_idx=chunk.indices if chunk else (),
        gt=truth.raw if truth else "",
        pred=chunk.raw if chunk else "",
        norm_gt=truth.norm if truth else "",
        norm_pred=chunk.norm if chunk else "",
        gt_position=(truth.position,) if truth else NO_POSITION,
        pred_position=chunk.position if chunk else "",
        gt_kind=truth.kind if truth else "",
        pred_kind=chunk.kind if chunk else "",
        edit=edit,
    )
