"""CDM's character matching of two rendered formulas (OmniDocBench v1.6's ``cdm.py``
``process_single_image``, ``visual_matcher.py``, ``ransac.py``): its F1.

The truth's and the prediction's token boxes are paired by a Hungarian assignment on token
identity (1 for different tokens, 0.005 for tokens that print alike, ``\\leq``/``\\le``, ...),
box position (×0.05, L1 over the image's size) and token order (×0.15). Then up to 5 rounds of
RANSAC (2 points, 500 trials, residual 30 px, seeded as OmniDocBench seeds it) fit a
translation-and-scale between the paired box centres and keep the pairs it explains; pairs of
different tokens never count. F1 = 2 × kept / (truth tokens + predicted tokens), rounded to 3
decimals as OmniDocBench rounds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from pytest_doceval.kinds.omnidocbench.cdm_render import Rendered

_SAME: Final = {
    "\\dot": ".", "\\Dot": ".", "\\cdot": ".", "\\cdotp": ".", "\\ldotp": ".", "\\mid": "|",
    "\\rightarrow": "\\to", "\\top": "T", "\\Tilde": "\\tilde", "\\prime": "'", "\\ast": "*",
    "\\left<": "\\langle", "\\right>": "\\rangle", "\\lbrace": "\\{", "\\rbrace": "\\}",
    "\\lbrack": "[", "\\rbrack": "]", "\\blackslash": "/", "\\slash": "/", "\\leq": "\\le",
    "\\geq": "\\ge", "\\Vert": "\\|", "\\lVert": "\\|", "\\rVert": "\\|", "\\vert": "|",
    "\\lvert": "|", "\\rvert": "|", "\\colon": ":", "\\Ddot": "\\ddot", "\\Bar": "\\bar",
    "\\Vec": "\\vec", "\\parallel": "\\|", "\\dag": "\\dagger", "\\ddag": "\\ddagger",
    "\\textlangle": "<", "\\textrangle": ">", "\\textgreater": ">", "\\textless": "<",
    "\\textbackslash": "n", "\\textunderscore": "_", "\\=": "_", "\\neg": "\\lnot",
    "\\neq": "\\not=",
}  # fmt: skip
MAX_ROUNDS: Final = 5
MIN_SAMPLES: Final = 2
RESIDUAL: Final = 30.0
TRIALS: Final = 500
SEED: Final = 2026


def alike(token: str) -> str:
    """``norm_same_token``: a token as the glyph it prints."""
    if token.startswith(("\\left", "\\right")) and not any(
        s in token for s in ("arrow", "<", ">", "harpoon")
    ):
        token = token.replace("\\left", "").replace("\\right", "")
    if token.startswith(("\\big", "\\Big")):
        token = "\\" + token[4:].split("\\")[-1] if "\\" in token[4:] else token[-1]
    token = _SAME.get(token, token)
    if token.startswith("\\wide"):
        return token.replace("wide", "")
    if token.startswith("\\var"):
        return token.replace("var", "")
    if token.startswith("\\string"):
        return token.replace("\\string", "")
    return token


@dataclass(frozen=True)
class CdmScore:
    """One formula's CDM: its F1 (rounded to 3 decimals), and the counts behind it."""

    f1: float
    matched: int
    truth_tokens: int
    predicted_tokens: int


def _token_cost(truth: Sequence[str], predicted: Sequence[str]) -> NDArray[np.float64]:
    ids: dict[str, int] = {}
    alike_ids: dict[str, int] = {}
    for token in [*truth, *predicted]:
        ids.setdefault(token, len(ids))
        alike_ids.setdefault(alike(token), len(alike_ids))
    same = np.array([[ids[p] == ids[t] for p in predicted] for t in truth], dtype=bool)
    close = np.array(
        [[alike_ids[alike(p)] == alike_ids[alike(t)] for p in predicted] for t in truth], dtype=bool
    )
    cost = 1.0 - same.astype(np.float64)
    cost[(cost == 1) & close] = 0.005
    return cost


def _boxes(
    boxes: Sequence[tuple[int, int, int, int]], size: tuple[int, int]
) -> NDArray[np.float64]:
    width, height = size
    return np.array(
        [[x0 / width, y0 / height, x1 / width, y1 / height] for x0, y0, x1, y1 in boxes]
    )


def _l1(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    distances: NDArray[np.float64] = cdist(a, b, "minkowski", p=1) / a.shape[-1]
    return distances


def matched_pairs(
    truth: Rendered, predicted: Rendered
) -> tuple[list[tuple[int, int]], NDArray[np.float64]]:
    """``HungarianMatcher``: the pairs (truth box, predicted box) and the token costs."""
    gt = [(t, b) for t, b in zip(truth.tokens, truth.boxes, strict=False) if b]
    pred = [(t, b) for t, b in zip(predicted.tokens, predicted.boxes, strict=False) if b]
    longest = max(len(gt), len(pred))
    token = _token_cost([t for t, _ in gt], [t for t, _ in pred])
    position = _l1(
        _boxes([b for _, b in gt], truth.size), _boxes([b for _, b in pred], predicted.size)
    )
    order = _l1(
        np.array([[i / longest] for i in range(len(gt))]),
        np.array([[i / longest] for i in range(len(pred))]),
    )
    cost = 1 * token + 0.05 * position + 0.15 * order
    cost[np.isnan(cost) | np.isinf(cost)] = 100
    rows, cols = linear_sum_assignment(cost)
    return [(int(a), int(b)) for a, b in zip(rows, cols, strict=True)], token


def _scalings(
    src: NDArray[np.float64], dst: NDArray[np.float64], samples: NDArray[np.intp]
) -> NDArray[np.float64]:
    """``SimpleAffineTransform`` fitted to each sample (rows of `samples`) and its residual
    on every pair, shape (samples, pairs): a translation and one scale about the centre.

    The operations are its own, in its order, on a batch: each number equals its one-sample
    computation's to the bit (numpy adds a few rows in order along either axis).
    """
    picked_src, picked_dst = src[samples], dst[samples]  # (samples, k, 2)
    src_centre, dst_centre = picked_src.mean(axis=1), picked_dst.mean(axis=1)
    translation = dst_centre - src_centre
    src_spread = np.linalg.norm(picked_src - src_centre[:, None, :], axis=2)
    dst_spread = np.linalg.norm(picked_dst - dst_centre[:, None, :], axis=2)
    scale = np.mean(dst_spread, axis=1) / (np.mean(src_spread, axis=1) + 1e-10)
    centre = np.mean(src, axis=0)
    moved = scale[:, None, None] * (src - centre) + centre + translation[:, None, :]
    out: NDArray[np.float64] = np.sqrt(np.sum((moved - dst) ** 2, axis=2))
    return out


def ransac_inliers(src: NDArray[np.float64], dst: NDArray[np.float64]) -> NDArray[np.bool_] | None:
    """``ransac``: the most pairs one model explains (ties: the least residual, then the
    earliest trial), or None. Its trials' samples are drawn in its order from its seeded
    generator, then every trial's model is fitted at once (`_scalings`)."""
    rng = np.random.default_rng(SEED)
    indices = np.arange(src.shape[0])
    samples = np.array(
        [rng.choice(indices, size=MIN_SAMPLES, replace=False) for _ in range(TRIALS)]
    )
    residuals = _scalings(src, dst, samples)
    inliers = residuals < RESIDUAL
    counts = np.count_nonzero(inliers, axis=1)
    most = int(counts.max())
    if most == 0:
        return None
    best: NDArray[np.bool_] | None = None
    best_residual = np.inf
    for trial in np.flatnonzero(counts == most):  # in trial order, as its loop meets them
        total = float(np.sum(residuals[trial][inliers[trial]]))
        if total < best_residual:
            best, best_residual = inliers[trial], total
    return best


def cdm_score(truth: Rendered, predicted: Rendered) -> CdmScore | None:
    """``process_single_image``: None where the truth has no box (OmniDocBench's skipped
    formula, scored 0 with no tokens by its caller); F1 0 where the prediction has none."""
    gt_count = sum(1 for b in truth.boxes if b)
    if not gt_count:
        return None
    pred_count = sum(1 for b in predicted.boxes if b)
    if not pred_count:
        return CdmScore(0.0, 0, gt_count, 0)
    pairs, token = matched_pairs(truth, predicted)
    gt_boxes = [b for b in truth.boxes if b]
    pred_boxes = [b for b in predicted.boxes if b]
    src = np.array(
        [
            [(gt_boxes[a][1] + gt_boxes[a][3]) / 2, (gt_boxes[a][0] + gt_boxes[a][2]) / 2]
            for a, _ in pairs
        ]
    )
    dst = np.array(
        [
            [(pred_boxes[b][1] + pred_boxes[b][3]) / 2, (pred_boxes[b][0] + pred_boxes[b][2]) / 2]
            for _, b in pairs
        ]
    )
    if src.shape[0] <= MIN_SAMPLES:
        inliers = np.ones(len(pairs), dtype=bool)
    else:
        inliers = np.zeros(len(pairs), dtype=bool)
        for _ in range(MAX_ROUNDS):
            open_ = ~inliers
            if src[open_].shape[0] <= MIN_SAMPLES:
                break
            found = ransac_inliers(src[open_], dst[open_])
            if found is None or not found.any():
                break
            inliers[np.flatnonzero(open_)[found]] = True
            if np.count_nonzero(inliers) >= len(pairs):
                break
    kept = sum(1 for k, (a, b) in enumerate(pairs) if inliers[k] and token[a, b] != 1)
    return CdmScore(round(2 * kept / (gt_count + pred_count), 3), kept, gt_count, pred_count)
