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

from pytest_doceval.rows import MEASURED, count_flags

NAN = math.nan
_NO_NOTES: tuple[str, ...] = ()


def _number(value: Any) -> float:
    """A row's number as the row-dict code reads it (``float(value)``), NaN when it has none."""
    kind = type(value)
    if kind is float:  # nearly every value: exact types first (a row is read per add)
        return value  # type: ignore[no-any-return]
    if kind is int or kind is bool:
        return float(value)
    if isinstance(value, int | float) and not isinstance(value, str):
        return float(value)
    return NAN


def _entries(value: Any) -> Any:
    """The items of a mapping from a row (none for anything else)."""
    if type(value) is dict or isinstance(value, Mapping):
        return value.items()
    return ()


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
        self.has_baseline: array[int] = array("b")  # the row's baseline is a mapping (not None)
        self.flags: dict[str, dict[int, tuple[str, ...]]] = {}  # metric -> row -> reasons
        self._metrics: dict[str, array[float]] = {}
        self._baseline: dict[str, array[float]] = {}
        # (counts key, field) -> column; a key the row has: `counts_present[key]` is 1 there
        self._counts: dict[tuple[str, str], array[float]] = {}
        self._present: dict[str, array[int]] = {}
        self._ragged = False  # a column may be shorter than the table (filled on reading)
        self._strings: dict[str, str] = {}
        self._measured = array("b")  # 1 where the row's outcome is measured (passed, failed)
        self._system_codes = array("l")  # the row's system, as a number
        self._codes: dict[str, int] = {}
        # group -> (names, their columns, the row after the last filled): `_append`'s shortcut
        self._shapes: dict[tuple[str, ...], tuple[tuple[Any, ...], list[array[float]], int]] = {}

    def __len__(self) -> int:
        return len(self.cases)

    @property
    def metrics(self) -> dict[str, array[float]]:
        self._fill()
        return self._metrics

    @property
    def baseline(self) -> dict[str, array[float]]:
        self._fill()
        return self._baseline

    @property
    def counts(self) -> dict[tuple[str, str], array[float]]:
        self._fill()
        return self._counts

    @property
    def counts_present(self) -> dict[str, array[int]]:
        self._fill()
        return self._present

    # -- building --------------------------------------------------------------------------

    def _intern(self, text: Any) -> str:
        value = str(text)
        return self._strings.setdefault(value, value)

    def add(self, row: Mapping[str, Any]) -> None:
        """Append one row's numbers (the row as JSON gives it: `rows.plain` of a row). A
        column gets a value only from the rows that have one; the rows between are filled in
        (NaN) when it is next written or read."""
        at = len(self.cases)
        intern = self._intern
        self.cases.append(intern(row.get("case", "")))
        system = intern(row.get("system", ""))
        self.systems.append(system)
        self._system_codes.append(self._codes.setdefault(system, len(self._codes)))
        outcome = intern(row.get("outcome") or "unknown")
        self.outcomes.append(outcome)
        self._measured.append(1 if outcome in MEASURED else 0)
        message = row.get("message")
        self.messages.append(None if message is None else str(message))
        notes = row.get("notes")
        self.notes.append(
            tuple(map(str, notes)) if isinstance(notes, list) and notes else _NO_NOTES
        )
        self.durations.append(_number(row.get("duration")))
        self._append(self._metrics, ("m",), row.get("metrics"), at)
        baseline = row.get("baseline")
        self.has_baseline.append(1 if isinstance(baseline, Mapping) else 0)
        self._append(self._baseline, ("b",), baseline, at)
        for key, entry in _entries(row.get("counts")):
            if not isinstance(entry, Mapping):
                continue
            present = self._present.get(key)
            if present is None:
                present = self._present[intern(key)] = array("b", [0]) * at
            elif len(present) < at:
                present.extend(array("b", [0]) * (at - len(present)))
            present.append(1)
            self._append(self._counts, ("c", key), entry, at, prefix=key)
        for metric, reasons in _entries(row.get("flags")):
            if isinstance(reasons, list) and reasons:
                self.flags.setdefault(intern(metric), {})[at] = tuple(map(str, reasons))
        self._ragged = True

    def _append(
        self,
        columns: dict[Any, array[float]],
        group: tuple[str, ...],
        values: Any,
        at: int,
        prefix: Any = None,
    ) -> None:
        """Row `at`'s `values` (a mapping of name -> number) into `columns` (keyed by
        ``(prefix, name)`` with a `prefix`). Rows of one kind have the same names in the same
        order: when the last row of `group` had them, their columns are those it filled (each
        as long as the table), and the values go in without looking a name up."""
        if not (type(values) is dict or isinstance(values, Mapping)) or not values:
            return
        names = tuple(values)
        last = self._shapes.get(group)
        if last is not None and last[2] == at and last[0] == names:
            for column, value in zip(last[1], values.values(), strict=True):
                column.append(value if type(value) is float else _number(value))
            self._shapes[group] = (names, last[1], at + 1)
            return
        filled = []
        for name, value in values.items():
            key = name if prefix is None else (prefix, name)
            found = columns.get(key)
            if found is None:
                key = self._intern(name) if prefix is None else (prefix, self._intern(name))
                column = columns[key] = _column(at)
            else:
                column = found
                if len(column) < at:
                    column.extend(_column(at - len(column)))
            column.append(_number(value))
            filled.append(column)
        self._shapes[group] = (names, filled, at + 1)

    def _fill(self) -> None:
        """Give every column a value for each row (NaN, or 0 for a presence column)."""
        if not self._ragged:
            return
        length = len(self.cases)
        for group in (self._metrics, self._baseline, self._counts):
            for column in group.values():
                if len(column) < length:
                    column.extend(_column(length - len(column)))
        for present in self._present.values():
            if len(present) < length:
                present.extend(array("b", [0]) * (length - len(present)))
        self._ragged = False

    def extend(self, other: RowTable) -> None:
        """Append `other`'s rows (a merge of shards)."""
        self._fill()
        other._fill()
        at, more = len(self), len(other)
        self.cases += [self._intern(c) for c in other.cases]
        for system in other.systems:
            system = self._intern(system)
            self.systems.append(system)
            self._system_codes.append(self._codes.setdefault(system, len(self._codes)))
        self.outcomes += [self._intern(o) for o in other.outcomes]
        self._measured += other._measured
        self.messages += other.messages
        self.notes += other.notes
        self.durations += other.durations
        self.has_baseline += other.has_baseline
        for mine, theirs in ((self._metrics, other._metrics), (self._baseline, other._baseline)):
            _extend_columns(mine, theirs, at, more)
        _extend_columns(self._counts, other._counts, at, more)
        for key, present in other._present.items():
            column = self._present.setdefault(key, array("b", [0]) * at)
            column += present
        for column in self._present.values():
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
        baseline), in `order`: `kinds.analyses.values_by_system` of the same rows (systems in
        the order their first such row comes, each system's cases in row order)."""
        import numpy as np  # on use: the controller imports this module at start-up

        column = (self.metrics if source == "metrics" else self.baseline).get(metric)
        if column is None or not len(self.cases):
            return {}
        rows = np.asarray(order if isinstance(order, array) else list(order), dtype=np.int64)
        values = np.frombuffer(column, dtype=np.float64)[rows]
        measured = np.frombuffer(self._measured, dtype=np.int8)[rows] == 1
        kept = rows[measured & ~np.isnan(values)]
        codes = np.asarray(self._system_codes, dtype=np.int64)[kept]
        found = np.frombuffer(column, dtype=np.float64)
        out: dict[str, dict[str, float]] = {}
        _, first = np.unique(codes, return_index=True)
        cases = self.cases
        for code in codes[np.sort(first)]:
            mine = kept[codes == code]
            system = self.systems[int(mine[0])]
            out[system] = dict(
                zip([cases[i] for i in mine.tolist()], found[mine].tolist(), strict=True)
            )
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
        if not flagged:  # no row flags the metric (nearly every metric): nothing to count
            return {}
        column = self.metrics.get(metric)
        outcomes, names = self.outcomes, self.systems
        return count_flags(
            (
                (names[i], NAN if column is None else column[i], flagged.get(i, ()))
                for i in order
                if outcomes[i] in MEASURED and (systems is None or names[i] in systems)
            ),
            dominance,
        )

    def counts_entries(
        self, key: str, fields: Sequence[str], order: Iterable[int], system: str
    ) -> list[Any]:
        """The `fields` of counts entry `key` over the measured rows of `system` having it,
        in `order`: one numpy array a field (NaN where a row lacks the field)."""
        import numpy as np  # on use: the controller imports this module at start-up

        present = self.counts_present.get(key)
        code = self._codes.get(system)
        if present is None or code is None:
            return [np.zeros(0) for _ in fields]
        rows = np.asarray(order if isinstance(order, array) else list(order), dtype=np.int64)
        wanted = (
            (np.frombuffer(present, dtype=np.int8)[rows] == 1)
            & (np.frombuffer(self._measured, dtype=np.int8)[rows] == 1)
            & (np.asarray(self._system_codes, dtype=np.int64)[rows] == code)
        )
        rows = rows[wanted]
        out = []
        for field in fields:
            column = self.counts.get((key, field))
            out.append(
                np.full(rows.size, NAN)
                if column is None
                else np.frombuffer(column, dtype=np.float64)[rows]
            )
        return out

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
