"""The texts OmniDocBench v1.6 matches: a page's truth blocks and predicted blocks as lines, each
with its normalised form (``get_gt_pred_lines``).

A truth block is read from its ``text`` (normalised as text) or, for a display formula, its
``latex`` (normalised as a formula); a predicted block from its content, normalised as text or
as a formula by its category (a table's is kept as written). Lines whose text or normalised
form is empty are dropped.

One quirk is kept, since OmniDocBench's numbers rest on it: the lines are filtered, the block
lists are not, and the matcher takes a line's position and kind from the block at the line's
index in the *unfiltered* list. After a dropped block (a ``***`` paragraph normalises to
nothing) the following lines take their neighbour's position and kind (`Lines.gt_blocks`,
`Lines.pred_blocks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_doceval.errors import OmniDocBenchInputError
from pytest_doceval.kinds.omnidocbench.normalise import normalised_formula, normalised_text
from pytest_doceval.kinds.omnidocbench.pred_blocks import PredBlock

# A block's place in reading order: the annotation's ``order`` (a float for a split formula's
# lines), or "" where it has none (OmniDocBench's marker; such a block takes no place).
Position = int | float | str | None

TEXT_CATEGORIES = (
    "text_block",
    "title",
    "code_txt",
    "code_txt_caption",
    "reference",
    "equation_caption",
    "figure_caption",
    "figure_footnote",
    "table_caption",
    "table_footnote",
    "code_algorithm",
    "code_algorithm_caption",
    "header",
    "footer",
    "page_footnote",
    "page_number",
)
# Text categories that are matched first and then left out of the text score.
IGNORED_TEXT = (
    "figure_caption",
    "figure_footnote",
    "table_caption",
    "table_footnote",
    "code_algorithm",
    "code_algorithm_caption",
    "header",
    "footer",
    "page_footnote",
    "page_number",
    "equation_caption",
)


@dataclass(frozen=True)
class TruthBlock:
    """One truth block of the page (an annotation's layout element, or a truncated group)."""

    category: str
    fine: str | None
    order: Any  # as annotated: int, None, or a float for a split formula's line
    text: str | None
    latex: str | None
    content: str | None  # a ``content`` field, read first where present

    @classmethod
    def of(cls, element: Mapping[str, Any]) -> TruthBlock:
        category = str(element["category_type"])
        # str() as OmniDocBench reads them: a null text is the line "None".
        text = str(element["text"]) if "text" in element else None
        latex = str(element["latex"]) if "latex" in element else None
        if category in TEXT_CATEGORIES and "text" not in element and not element.get("content"):
            raise OmniDocBenchInputError(f"a {category} block without 'text' ({_which(element)})")
        no_latex = "latex" not in element and not element.get("content")
        if category == "equation_isolated" and no_latex:
            raise OmniDocBenchInputError(f"a display formula without 'latex' ({_which(element)})")
        fine = element.get("fine_category_type")
        content = element.get("content")
        return cls(
            category=category,
            fine=str(fine) if fine else None,
            order=element.get("order"),
            text=text,
            latex=latex,
            content=str(content) if content else None,
        )

    @property
    def kind(self) -> str:
        return self.fine or self.category

    @property
    def position(self) -> Position:
        """Its place for pairing and reading order: ``order`` when truthy, else ""."""
        return self.order if self.order else ""

    @property
    def formula_position(self) -> Position:
        """``_get_formula_position``: ``order`` unless it is None."""
        return self.order if self.order is not None else ""


def _which(element: Mapping[str, Any]) -> str:
    return f"anno_id {element.get('anno_id')!r}"


@dataclass(frozen=True)
class Lines:
    """Filtered lines and their normalised forms, and the unfiltered block lists (module
    docstring): ``gt_blocks[i]`` is the block OmniDocBench reads for line i."""

    gt: list[str]
    gt_norm: list[str]
    gt_kind: list[str]
    pred: list[str]
    pred_norm: list[str]
    gt_blocks: Sequence[TruthBlock]
    pred_blocks: Sequence[PredBlock]

    def gt_position(self, i: int) -> Position:
        return self.gt_blocks[i].position

    def pred_position(self, i: int) -> Position:
        return self.pred_blocks[i].start

    def pred_kind(self, i: int) -> str:
        return self.pred_blocks[i].kind


def _truth_line(block: TruthBlock) -> tuple[str, str] | None:
    if block.content:
        norm = normalised_text(block.content) if block.category == "text_all" else block.content
        return block.content, norm
    if block.category in TEXT_CATEGORIES:
        text = block.text or ""
        return text, normalised_text(text)
    if block.category == "equation_isolated":
        latex = block.latex or ""
        return latex, normalised_formula(latex)
    return None


def pred_norm(block: PredBlock) -> str:
    """A predicted block's normalised form by its category."""
    if block.category == "text_all":
        return normalised_text(block.content)
    if block.category == "equation_isolated":
        return normalised_formula(block.content)
    return block.content


def lines_of(gt_blocks: Sequence[TruthBlock], pred_blocks: Sequence[PredBlock]) -> Lines:
    """The lines of these blocks (module docstring)."""
    gt: list[str] = []
    gt_norm: list[str] = []
    gt_kind: list[str] = []
    for block in gt_blocks:
        line = _truth_line(block)
        if line is not None and line[0] and line[1]:
            gt.append(line[0])
            gt_norm.append(line[1])
            gt_kind.append(block.kind)
    pred: list[str] = []
    norm_pred: list[str] = []
    for predicted in pred_blocks:
        norm = pred_norm(predicted)
        if predicted.content and norm:
            pred.append(predicted.content)
            norm_pred.append(norm)
    return Lines(gt, gt_norm, gt_kind, pred, norm_pred, gt_blocks, pred_blocks)
