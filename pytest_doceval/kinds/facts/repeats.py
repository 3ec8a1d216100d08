"""Several outputs of one page (``repeat1``, ``repeat2``, ...) folded into one verdict per fact.

olmOCR-bench (``benchmark.py``, ``evaluate_candidate``) runs each fact on every repeat file of
its page, takes ``test_avg = repeat_passes / num_repeats`` and counts the fact as passed when
``test_avg > 0.5`` -- strictly more than half, so one of two repeats is a fail. A repeat that
could not be read or raised counts in ``num_repeats`` but not as a pass; a page with no repeat
file is a fail ("Missing MD files"). The headline score then uses that pass/fail, and the
per-type breakdown uses ``test_avg`` itself.

Skipped repeats (a math fact without a renderer) are the one addition: the fact passes only if
it passes even counting every skipped repeat as failed, fails only if it fails even counting
them as passed, and is skipped otherwise. A fact that passes carries the caveat of its passing
repeats that have one (a `present` pass on an output shorter than the text), with their count.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_doceval.kinds.facts.checks import RenderEqual, check
from pytest_doceval.kinds.facts.model import Fact
from pytest_doceval.kinds.facts.result import FactResult, PageOutput

__all__ = ["aggregate_repeats", "check_repeats"]


def aggregate_repeats(results: Sequence[FactResult]) -> FactResult:
    """One fact's per-repeat results -> its verdict (module docstring for the rule)."""
    total = len(results)
    if total == 0:
        return FactResult(False, 0.0, "no output for this page (no repeat file)")
    passes = sum(1 for r in results if r.passed is True)
    skipped = sum(1 for r in results if r.passed is None)
    fraction = passes / total
    verdict: bool | None
    if fraction > 0.5:
        verdict = True
    elif (passes + skipped) / total <= 0.5:
        verdict = False
    else:
        verdict = None
    caveats = [r.caveat for r in results if r.passed is True and r.caveat]
    caveat = ""
    if verdict is True and caveats:
        caveat = caveats[0] if total == 1 else f"{len(caveats)} of {total} repeats: {caveats[0]}"
    if total == 1:
        return FactResult(verdict, fraction, results[0].explanation, tuple(results), caveat)
    summary = f"passed in {passes}/{total} repeats"
    if skipped:
        summary += f", skipped in {skipped}"
    if verdict is not True:
        summary += " (more than half must pass)"
    first_bad = next(((i, r) for i, r in enumerate(results, start=1) if r.passed is not True), None)
    if first_bad is not None:
        index, result = first_bad
        summary += f"; repeat {index}: {result.explanation}"
    return FactResult(verdict, fraction, summary, tuple(results), caveat)


def check_repeats(
    fact: Fact,
    outputs: Sequence[str | PageOutput],
    *,
    latin_only: bool,
    render_equal: RenderEqual | None = None,
    fail_shorter: bool = False,
) -> FactResult:
    """Check `fact` on each repeat output of its page and fold the results (olmOCR's rule)."""
    results = [
        check(
            fact,
            output,
            latin_only=latin_only,
            render_equal=render_equal,
            fail_shorter=fail_shorter,
        )
        for output in outputs
    ]
    return aggregate_repeats(results)
