"""The numbers of a suite's rows, a column each: what the report's statistics read.

A row is a dict of about 10 KB in memory (its metrics, counts, details and views); 200,000 of
them do not fit where a report is made. The shared analyses (aggregates and their intervals,
corpus rates, baseline deltas, suite gates, pairwise comparisons, flags) need only a row's
identity (case, system, outcome), its numbers (metrics, baseline, counts, duration) and a few
short texts (message, notes, flags): those are kept here, about half a kilobyte a row, while
the rows themselves stay on disk (`row_file.Rows`) and are read one at a time where a whole
row is needed (a kind's own analysis, the HTML's details).

A column holds one float per row, NaN where the row has no such number (``None`` in the JSON,
or no entry): exactly the values the row-dict functions (`rows.flag_reasons`,
`kinds.analyses.values_by_system`) read from the rows, in the same order. Columns are stdlib
`array`s (8 bytes a value), so importing this module costs nothing at start-up; numpy wraps
them without a copy where it computes. Strings repeated across rows (systems, outcomes, metric
names, a case's name for each of its systems) are kept once.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from pytest_doceval.rows import MEASURED

NAN = math.nan
_NO_NOTES: tuple[str, ...] = ()


def _number(value: Any) -> float:
    """A row's number as the row-dict code reads it (``float(value)``), NaN when it has none."""
    if value is None or isinstance(value, str) or not isinstance(value, int | float):
        return NAN
    return float(value)


def _column(length: int) -> array[float]:
    return array("d", [NAN]) * length


class RowTable:
    """Columns of rows' numbers in the order the rows were added (`add`, `extend`)."""

    def __init__(self) -> None:
        self.cases: list[str] = []
        self.systems: list[str] = []
        self.outcomes: list[str] = []
        self.messages: list[str | None] = []
        self.notes: list[tuple[str, ...]] = []
        self.durations: array[float] = array("d")
        self.metrics: dict[str, array[float]] = {}
        self.baseline: dict[str, array[float]] = {}
        self.has_baseline: array[int] = array("b")  # the row's baseline is a mapping (not None)
        # (counts key, field) -> column; a key the row has: `counts_present[key]` is 1 there
        self.counts: dict[tuple[str, str], array[float]] = {}
        self.counts_present: dict[str, array[int]] = {}
        self.flags: dict[str, dict[int, tuple[str, ...]]] = {}  # metric -> row -> reasons
        self._strings: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.cases)

    # -- building --------------------------------------------------------------------------

    def _intern(self, text: Any) -> str:
        value = str(text)
        return self._strings.setdefault(value, value)

    def add(self, row: Mapping[str, Any]) -> None:
        """Append one row's numbers (the row as JSON gives it: `rows.plain` of a row)."""
        at = len(self.cases)
        self.cases.append(self._intern(row.get("case", "")))
        self.systems.append(self._intern(row.get("system", "")))
        self.outcomes.append(self._intern(row.get("outcome") or "unknown"))
        message = row.get("message")
        self.messages.append(None if message is None else str(message))
        notes = row.get("notes")
        self.notes.append(
            tuple(map(str, notes)) if isinstance(notes, list) and notes else _NO_NOTES
        )
        self.durations.append(_number(row.get("duration")))
        self._numbers(self.metrics, row.get("metrics"), at)
        baseline = row.get("baseline")
        self.has_baseline.append(1 if isinstance(baseline, Mapping) else 0)
        self._numbers(self.baseline, baseline, at)
        counts = row.get("counts")
        for key, entry in counts.items() if isinstance(counts, Mapping) else ():
            if not isinstance(entry, Mapping):
                continue
            present = self.counts_present.get(key)
            if present is None:
                present = self.counts_present[self._intern(key)] = array("b", [0]) * at
            present.append(1)
            for name, value in entry.items():
                column = self.counts.get((key, name))
                if column is None:
                    column = self.counts[(self._intern(key), self._intern(name))] = _column(at)
                column.append(_number(value))
        flags = row.get("flags")
        for metric, reasons in flags.items() if isinstance(flags, Mapping) else ():
            if isinstance(reasons, list) and reasons:
                self.flags.setdefault(self._intern(metric), {})[at] = tuple(map(str, reasons))
        self._pad(at + 1)

    def _numbers(self, columns: dict[str, array[float]], values: Any, at: int) -> None:
        for name, value in values.items() if isinstance(values, Mapping) else ():
            column = columns.get(name)
            if column is None:
                column = columns[self._intern(name)] = _column(at)
            column.append(_number(value))

    def _pad(self, length: int) -> None:
        """Give every column a value for each of the first `length` rows (NaN, or 0 for a
        presence column), whatever the last row lacked."""
        for group in (self.metrics, self.baseline, self.counts):
            for column in group.values():
                if len(column) < length:
                    column.append(NAN)
        for present in self.counts_present.values():
            if len(present) < length:
                present.append(0)

    def extend(self, other: RowTable) -> None:
        """Append `other`'s rows (a merge of shards)."""
        at, more = len(self), len(other)
        self.cases += [self._intern(c) for c in other.cases]
        self.systems += [self._intern(s) for s in other.systems]
        self.outcomes += [self._intern(o) for o in other.outcomes]
        self.messages += other.messages
        self.notes += other.notes
        self.durations += other.durations
        self.has_baseline += other.has_baseline
        for mine, theirs in ((self.metrics, other.metrics), (self.baseline, other.baseline)):
            _extend_columns(mine, theirs, at, more)
        _extend_columns(self.counts, other.counts, at, more)
        for key, present in other.counts_present.items():
            column = self.counts_present.setdefault(key, array("b", [0]) * at)
            column += present
        for column in self.counts_present.values():
            if len(column) < at + more:
                column += array("b", [0]) * (at + more - len(column))
        for metric, reasons in other.flags.items():
            self.flags.setdefault(metric, {}).update({at + i: r for i, r in reasons.items()})

    # -- reading ---------------------------------------------------------------------------

    def measured(self, i: int) -> bool:
        return self.outcomes[i] in MEASURED

    def outcome_counts(self, order: Iterable[int]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for i in order:
            counts[self.outcomes[i]] = counts.get(self.outcomes[i], 0) + 1
        return counts

    def values(
        self, metric: str, order: Iterable[int], source: str = "metrics"
    ) -> dict[str, dict[str, float]]:
        """{system: {case: value}} of the measured rows having `metric` (in their metrics or
        baseline), in `order`: `kinds.analyses.values_by_system` of the same rows."""
        column = (self.metrics if source == "metrics" else self.baseline).get(metric)
        out: dict[str, dict[str, float]] = {}
        if column is None:
            return out
        outcomes, cases, systems = self.outcomes, self.cases, self.systems
        for i in order:
            value = column[i]
            if value == value and outcomes[i] in MEASURED:  # not NaN
                out.setdefault(systems[i], {})[cases[i]] = value
        return out

    def flag_reasons(
        self,
        metric: str,
        order: Iterable[int],
        systems: Collection[str] | None = None,
        *,
        dominance: float | None = None,
    ) -> dict[str, dict[str, int]]:
        """`rows.flag_reasons` of the same rows."""
        flagged = self.flags.get(metric, {})
        column = self.metrics.get(metric)
        out: dict[str, dict[str, int]] = {}
        flagged_sum: dict[str, float] = {}
        total_sum: dict[str, float] = {}
        for i in order:
            if self.outcomes[i] not in MEASURED:
                continue
            system = self.systems[i]
            if systems is not None and system not in systems:
                continue
            reasons = flagged.get(i, ())
            if dominance is not None and column is not None:
                value = column[i]
                if math.isfinite(value):
                    total_sum[system] = total_sum.get(system, 0.0) + value
                    if reasons:
                        flagged_sum[system] = flagged_sum.get(system, 0.0) + value
            for reason in reasons:
                counts = out.setdefault(system, {})
                counts[reason] = counts.get(reason, 0) + 1
        if dominance is None:
            return out
        return {
            system: counts
            for system, counts in out.items()
            if flagged_sum.get(system, 0.0) > dominance * total_sum.get(system, 0.0)
        }

    def counts_entries(
        self, key: str, fields: Sequence[str], order: Iterable[int], system: str
    ) -> list[tuple[float, ...]]:
        """The `fields` of counts entry `key` of each measured row of `system` having it."""
        present = self.counts_present.get(key)
        if present is None:
            return []
        columns = [self.counts.get((key, f)) for f in fields]
        return [
            tuple(NAN if c is None else c[i] for c in columns)
            for i in order
            if present[i] and self.systems[i] == system and self.outcomes[i] in MEASURED
        ]

    def counts_keys(self, prefix: str) -> list[str]:
        return [key for key in self.counts_present if key.startswith(prefix)]


def _extend_columns(
    mine: dict[Any, array[float]], theirs: Mapping[Any, array[float]], at: int, more: int
) -> None:
    for name, column in theirs.items():
        mine.setdefault(name, _column(at)).extend(column)
    for column in mine.values():
        if len(column) < at + more:
            column.extend(_column(at + more - len(column)))


def sort_order(table: RowTable, order: Iterable[int] | None = None) -> array[int]:
    """`order` (default: every row as added) sorted by (case, system), stably: the one order
    of `rows.sort_rows`."""
    indices = range(len(table)) if order is None else order
    cases, systems = table.cases, table.systems
    return array("q", sorted(indices, key=lambda i: (cases[i], systems[i])))
