"""When CER's insertions outweigh the truth: a note on the row and a flag on ``cer``.

CER divides a case's edits by its truth's length, so a short truth (a page holding only its page
number) against a line of output scores far above 1, and one such case can own a suite's mean
(five pages at 0.10 and one at 40 average 6.75). A row whose output inserts more characters
than its truth holds gets a note saying so and a flag on ``cer``; the suite summary marks a CER
mean only when such rows *dominate* it: they carry more than half of the sum of that system's
per-case CERs (`CER_DOMINANCE`, read by `rows.flag_reasons` through the metric's
`MetricSpec.flag_dominance`). ``ned`` (`metrics.ned`) is the bounded number to read there.
"""

from __future__ import annotations

from pytest_doceval.metrics.text import ErrorCounts

INSERTIONS_EXCEED_TRUTH = "insertions exceed the truth's length"
# Flagged rows must carry more than this share of the sum of a system's CERs to mark its mean.
CER_DOMINANCE = 0.5


def insertion_note(counts: ErrorCounts) -> str | None:
    """The note of a case whose insertions exceed its truth's length (None otherwise)."""
    if counts.insertions <= counts.reference_length:
        return None
    return (
        f"cer: the output inserts {counts.insertions} characters where the truth has "
        f"{counts.reference_length} (after normalisation), so its CER of {counts.rate:.3f} "
        "is mostly invented text; ned is the bounded reading"
    )
