"""`PredBlock`: one block of a predicted page as OmniDocBench v1.6 cuts it (its ``pred_all``
items: ``category_type``, ``position``, ``content``, ``fine_category_type``)."""

from __future__ import annotations

from dataclasses import dataclass

# The key of the display formula a block came from (start, end, content, fine, category):
# the lines of one split formula share it.
SourceKey = tuple[int, int, str, str, str]


@dataclass(frozen=True)
class PredBlock:
    """A predicted block. ``category`` is ``text_all``, ``equation_isolated``,
    ``html_table``, ``latex_table`` or ``formula_rescue``; ``fine`` its finer kind where the
    segmenter names one (``text_block``, ``equation_inline``, ``code``, ``text_formula``, ...);
    ``start``/``end`` its span in the page text as the segmenter counted it (they order blocks;
    OmniDocBench's counting drifts after a pipe table or a ``\\section``, and so does this)."""

    category: str
    start: int
    end: int
    content: str
    fine: str | None = None
    source: SourceKey | None = None

    @property
    def kind(self) -> str:
        """``get_pred_category_type``: the fine kind where there is one, else the category."""
        return self.fine or self.category

    @property
    def source_key(self) -> SourceKey:
        """The block's own source key (``_build_formula_source_key``)."""
        return (self.start, self.end, self.content, self.fine or "", self.category)
