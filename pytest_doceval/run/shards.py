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

Which report: the one ``--doceval-shard-durations`` names; else the first report of a whole
run among the run's own JSON report (``--doceval-json``) and the project root's
``doceval-report.json``, where a whole run writes by default. A shard usually writes its own
report (``--doceval-json shard-2.json``), which holds part of a run and is never used; the
whole run before it is still in the project root. Every shard says which it used
(`ShardPlan.line`): a matrix split on different bases would put a case in two shards.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
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


class RecordedDurations(dict[Case, float]):
    """Seconds per case from a whole run's report, and which report gave them (`source`;
    None when none of the reports `tried` was one: the split goes by hash)."""

    def __init__(
        self,
        seconds: Mapping[Case, float] | None = None,
        *,
        source: Path | None = None,
        tried: Sequence[Path] = (),
    ) -> None:
        super().__init__(seconds or {})
        self.source = source
        self.tried = tuple(tried)


def durations_reports(
    given: Path | None, json_path: Path, project_report: Path
) -> tuple[Path, ...]:
    """Where a shard looks for a whole run's durations, in order (module docstring): only the
    report `given` (``--doceval-shard-durations``) when there is one; else the run's own JSON
    report, then the project root's."""
    if given is not None:
        return (given,)
    return tuple(dict.fromkeys((json_path, project_report)))


def load_durations(paths: Path | Sequence[Path]) -> RecordedDurations:
    """`recorded_durations` of the first report in `paths` that is a whole run's; empty when
    none is (missing, unreadable, of another schema, a shard's), and the split then goes by hash."""
    from pytest_doceval.report.json_report import load_report

    tried = (paths,) if isinstance(paths, Path) else tuple(paths)
    for path in tried:
        if not path.is_file():
            continue
        try:  # read a row at a time
            durations = recorded_durations(load_report(path))
        except DocevalError:
            continue
        if durations:
            return RecordedDurations(durations, source=path, tried=tried)
    return RecordedDurations(tried=tried)


def _shown(path: Path) -> str:
    """A report's path as the user can open it from where pytest runs (no machine folder)."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive
        return path.as_posix()


def how_split(durations: Mapping[Case, float]) -> str:
    """The words for the basis of a split: which report's durations, or why by hash."""
    source = getattr(durations, "source", None)
    if durations and source is not None:
        return f"balanced by the case durations in {_shown(source)}"
    tried = [_shown(p) for p in getattr(durations, "tried", ())]
    if not tried:
        return "by a hash of the case names"
    return f"by a hash of the case names (no whole run's report at {' or '.join(tried)})"


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
    selected = sum(k == mine for k in shards.values())
    plan = ShardPlan(shard, basis(durations), len(shards), selected, how_split(durations))
    return kept, dropped, plan


@dataclass(frozen=True)
class ShardPlan:
    """One shard's share of a run's cases: how many of `total` it runs, split on `basis`."""

    shard: tuple[int, int]
    basis: str
    total: int
    selected: int
    split: str = ""  # the basis in words (`how_split`)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShardPlan:
        k, n = data["shard"]
        counts = int(data["total"]), int(data["selected"])
        return cls((int(k), int(n)), str(data["basis"]), *counts, str(data.get("split", "")))

    @property
    def empty(self) -> bool:
        """This shard holds no case of a run that has some: a legitimate, empty share."""
        return self.total > 0 and self.selected == 0

    @property
    def label(self) -> str:
        return f"{self.shard[0]}/{self.shard[1]}"

    def _split(self) -> str:
        return self.split or ("by hash" if self.basis == HASH_BASIS else "by recorded durations")

    def line(self) -> str:
        """What the shard ran and the basis of the split: every shard of a matrix says it."""
        return (
            f"doceval: shard {self.label} ran {self.selected} of the run's {self.total} "
            f"case(s), split {self._split()}"
        )

    def empty_line(self) -> str:
        return (
            f"doceval: shard {self.label} holds none of the run's {self.total} case(s), split "
            f"{self._split()}; it wrote an empty report for doceval merge"
        )
