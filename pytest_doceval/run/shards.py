"""Shards (``--doceval-shard K/N``): which cases the K-th of N runs.

Whole cases go to one shard (every system of a case together), and every case of the run to
exactly one. When a report of a whole run (or a merge of one) records how long each case took,
cases are balanced by those durations, as pytest-split's ``least_duration`` does: longest
first, each to the shard with the least total so far (ties: the lower K); a case the report
does not know counts as the mean of those it does. Otherwise a case goes by a stable hash of
its name. Either way the split depends only on the cases and the recorded durations, so every
shard job of a CI matrix computes the same one from the same report. A report records how it
was split (`basis`), and ``doceval merge`` refuses shards split differently: a case would be
in two of them, or in none.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from pytest_doceval.errors import DocevalError
from pytest_doceval.report.schema import HASH_BASIS
from pytest_doceval.row_file import Rows

# One case of a run: (suite, case).
Case = tuple[str, str]

T = TypeVar("T")


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``K/N`` as (K, N); None for no sharding. ValueError says what is wrong."""
    if not text:
        return None
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"{text!r}: expected K/N, e.g. 1/4") from None
    if not 1 <= k <= n:
        raise ValueError(f"{text!r}: need 1 <= K <= N")
    return k, n


def hash_shard(case: Case, n: int) -> int:
    """The shard (0-based) of `case` by a stable hash of its name."""
    digest = hashlib.sha256(f"{case[0]}/{case[1]}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n


def recorded_durations(report: Mapping[str, Any]) -> dict[Case, float]:
    """Seconds each case took in `report` (its rows' durations summed over systems); empty
    for a shard's report: it holds part of a run, so a split made from it would differ from
    one made from the whole run's."""
    if report.get("shard"):
        return {}
    durations: dict[Case, float] = {}
    suites = report.get("suites")
    for suite, section in suites.items() if isinstance(suites, Mapping) else ():
        results = section.get("results") if isinstance(section, Mapping) else None
        if not isinstance(results, Sequence) or isinstance(results, str):
            continue
        rows = Rows.of(results)  # their durations and cases from the table: nothing decoded
        table = rows.table
        for i in rows.order:
            seconds = table.durations[i]
            if seconds >= 0:  # not NaN (no duration), not negative
                case = (str(suite), table.cases[i])
                durations[case] = durations.get(case, 0.0) + seconds
    return durations


def load_durations(path: Path) -> dict[Case, float]:
    """`recorded_durations` of the report at `path`, read a row at a time; empty when there is
    none, it cannot be read or it is of another schema (the split then goes by hash, and the
    report says so)."""
    from pytest_doceval.report.json_report import load_report

    if not path.is_file():
        return {}
    try:
        return recorded_durations(load_report(path))
    except DocevalError:
        return {}


def basis(durations: Mapping[Case, float]) -> str:
    """How a split was made: ``hash``, or ``durations:<digest>`` of the durations used."""
    if not durations:
        return HASH_BASIS
    text = json.dumps(sorted((f"{s}/{c}", round(d, 6)) for (s, c), d in durations.items()))
    return f"durations:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def split(cases: Iterable[Case], n: int, durations: Mapping[Case, float]) -> dict[Case, int]:
    """Each distinct case's shard (0-based) among `n`."""
    unique = sorted(set(cases))
    if not durations:
        return {case: hash_shard(case, n) for case in unique}
    known = [durations[c] for c in unique if c in durations]
    default = sum(known) / len(known) if known else 1.0
    cost = {case: durations.get(case, default) for case in unique}
    loads = [(0.0, k) for k in range(n)]  # a heap of (total seconds, shard)
    shards: dict[Case, int] = {}
    for case in sorted(unique, key=lambda c: (-cost[c], c)):
        total, k = heapq.heappop(loads)
        shards[case] = k
        heapq.heappush(loads, (total + cost[case], k))
    return shards


def select(
    items: Sequence[T],
    case_of: Callable[[T], Case | None],
    shard: tuple[int, int],
    durations: Mapping[Case, float],
) -> tuple[list[T], list[T], ShardPlan]:
    """`items` kept and dropped by shard `shard`, and its plan. An item that is no case of a
    suite (`case_of` gives None: a test of another kind in the same run) stays in every
    shard."""
    cases = [case_of(item) for item in items]
    shards = split((c for c in cases if c is not None), shard[1], durations)
    mine = shard[0] - 1
    kept: list[T] = []
    dropped: list[T] = []
    for item, case in zip(items, cases, strict=True):
        (dropped if case is not None and shards[case] != mine else kept).append(item)
    plan = ShardPlan(
        shard, basis(durations), total=len(shards), selected=sum(k == mine for k in shards.values())
    )
    return kept, dropped, plan


@dataclass(frozen=True)
class ShardPlan:
    """One shard's share of a run's cases: how many of `total` it runs, split on `basis`."""

    shard: tuple[int, int]
    basis: str
    total: int
    selected: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShardPlan:
        k, n = data["shard"]
        return cls((int(k), int(n)), str(data["basis"]), int(data["total"]), int(data["selected"]))

    @property
    def empty(self) -> bool:
        """This shard holds no case of a run that has some: a legitimate, empty share."""
        return self.total > 0 and self.selected == 0

    @property
    def label(self) -> str:
        return f"{self.shard[0]}/{self.shard[1]}"

    def empty_line(self) -> str:
        by = "by hash" if self.basis == HASH_BASIS else "by recorded durations"
        return (
            f"doceval: shard {self.label} holds none of the run's {self.total} case(s) (split "
            f"{by}); it wrote an empty report for doceval merge"
        )
