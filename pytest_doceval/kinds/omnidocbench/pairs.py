"""`Pair`: one row of OmniDocBench v1.6's match of a page (its match entries: ``gt_idx``,
``gt``, ``pred_idx``, ``pred``, ``norm_gt``, ``norm_pred``, ``gt_position``, ``pred_position``,
``gt_category_type``, ``pred_category_type``, ``edit``)."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_doceval.kinds.omnidocbench.lines import Position

NO_POSITION: tuple[Position, ...] = ("",)


@dataclass(frozen=True)
class Pair:
    """Truth lines and predicted lines matched together, either side possibly empty.

    ``gt_idx``/``pred_idx`` are line indices (empty: no truth / no prediction; which list they
    index depends on the step that made the pair, as in OmniDocBench); ``gt_position`` the
    truth's places in reading order (``("",)`` for none), ``pred_position`` the first predicted
    block's start ("" for none); ``gt_kind``/``pred_kind`` the categories ("" for none);
    ``edit`` the matcher's own distance (the scores recompute it from ``norm_gt`` and
    ``norm_pred``)."""

    gt_idx: tuple[int, ...]
    pred_idx: tuple[int, ...]
    gt: str
    pred: str
    norm_gt: str
    norm_pred: str
    gt_position: tuple[Position, ...]
    pred_position: Position
    gt_kind: str
    pred_kind: str
    edit: float

    @property
    def has_truth(self) -> bool:
        return bool(self.gt_idx)

    @property
    def has_prediction(self) -> bool:
        return bool(self.pred_idx)
