"""Reading order without block annotations: NID and NID-S, as opendataloader-bench defines them.

opendataloader-bench (``src/evaluator_reading_order.py`` at b4b9505, MIT; its README section 3.1)
scores the order in which a parser reads a page by comparing the whole texts, so it needs no
annotated blocks:

    NID = 1 - Indel(truth, output) / (len(truth) + len(output))

the normalised Indel similarity (insertions and deletions only: a passage read out of place costs
its length twice, once deleted and once inserted) -- rapidfuzz's ``fuzz.ratio`` / 100, which the
reference calls. Both texts are first read with their markdown tables written as HTML
(`odl_tables.with_html_tables`), then every run of whitespace becomes one space and the ends are
trimmed. **NID-S** does the same after removing every HTML table (markdown ones included, now
HTML) in favour of one space: the narrative's order, whatever the tables' cells say.

Unlike CER, nothing else is normalised: markdown syntax, case and punctuation count, as in the
reference. A truth with no text has no NID (the documents kind refuses an empty truth anyway); a
truth that is all tables has an empty narrative, so its NID-S is 1 when the output's narrative is
empty too and 0 otherwise (``fuzz.ratio`` of two empty strings is 100), as in the reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from rapidfuzz import fuzz

from pytest_doceval.kinds.documents.odl_tables import HTML_TABLE, squeezed, with_html_tables
from pytest_doceval.metrics.spec import SHARE, MetricSpec

READING_ORDER_METRICS: Final[Mapping[str, MetricSpec]] = {
    "nid": MetricSpec(
        "higher",
        bounds=SHARE,
        description="reading order over the whole text: 1 - Indel distance / (len(truth) + "
        "len(output)), tables as HTML (opendataloader-bench's NID)",
        threshold=0.8,  # the tail: a fifth of the text missing, invented or out of place
    ),
    "nid_s": MetricSpec(
        "higher",
        bounds=SHARE,
        description="NID with every table removed: the narrative's reading order "
        "(opendataloader-bench's NID-S)",
    ),
}


def reading_order(truth: str, output: str) -> dict[str, float]:
    """``nid`` and ``nid_s`` of `output` against `truth` (module docstring); none for a truth
    with no text."""
    truth_html, output_html = with_html_tables(truth), with_html_tables(output)
    whole = squeezed(truth_html)
    if not whole:
        return {}
    narrative = squeezed(HTML_TABLE.sub(" ", truth_html))
    return {
        "nid": fuzz.ratio(whole, squeezed(output_html)) / 100.0,
        "nid_s": fuzz.ratio(narrative, squeezed(HTML_TABLE.sub(" ", output_html))) / 100.0,
    }
