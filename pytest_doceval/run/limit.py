"""``--doceval-limit N``: a smoke run of the first N cases of each suite (as lm-eval-harness's
``--limit``).

Cases are taken in the order the suite collects them (its kind's case order), every system of a
kept case with it, before ``-k`` and shards select among them; an item that is no case (a
suite that could not load) stays. A limited run measures only part of each suite: its report
says so (``limit`` at its top, the terminal's first line, the HTML's banner), and it never
updates a baseline (``--doceval-update`` with it is a usage error): a baseline made of the first
N cases would drop nothing and compare wrongly with every full run after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

# One case of a run: (suite, case), as `run.shards` names it.
Case = tuple[str, str]
T = TypeVar("T")


def check_limit(limit: int | None, *, update: bool) -> int | None:
    """The limit, or a ValueError saying what is wrong with it."""
    if limit is None:
        return None
    if limit < 1:
        raise ValueError(f"--doceval-limit {limit}: the first N cases of each suite, N >= 1")
    if update:
        raise ValueError(
            "--doceval-limit runs part of each suite and never updates a baseline: run "
            "pytest --doceval --doceval-update without it"
        )
    return limit


def first_cases(
    items: Sequence[T], case_of: Callable[[T], Case | None], limit: int
) -> tuple[list[T], list[T]]:
    """`items` kept and dropped: those of the first `limit` cases of each suite (and every item
    that is no case)."""
    seen: dict[str, set[str]] = {}
    kept: list[T] = []
    dropped: list[T] = []
    for item in items:
        case = case_of(item)
        if case is None or not case[1]:
            kept.append(item)
            continue
        cases = seen.setdefault(case[0], set())
        if case[1] in cases or len(cases) < limit:
            cases.add(case[1])
            kept.append(item)
        else:
            dropped.append(item)
    return kept, dropped
