"""The report row: one per (case, system) test, the one schema every kind shares.

Rows ride on test reports to the xdist controller (builtin types only), are written into the
JSON report, merged across shards and rendered by the HTML. `row_key` is the one place the
``case[system]`` key format is written.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

# Outcomes whose metrics are real measurements ("failed" = measured, then failed a gate).
MEASURED = ("passed", "failed")
OUTCOMES = ("passed", "failed", "error", "skipped")


def outcome_count(count: int, outcome: str) -> str:
    """``4 errors``, ``1 error``, ``3 failed``: a count of tests with an outcome in pytest's
    words (only "error" is a noun; "failed", "passed", "skipped" stay as they are)."""
    word = "errors" if outcome == "error" and count != 1 else outcome
    return f"{count:,} {word}"


def row_key(case: str, system: str) -> str:
    """``case[system]``: the test's id inside its suite, the baselines' entry key."""
    return f"{case}[{system}]"


def split_key(key: str) -> tuple[str, str]:
    """The inverse of `row_key` (the system never contains ``[``)."""
    case, _, system = key.rpartition("[")
    return case, system.removesuffix("]")


class Row(TypedDict):
    """One report row: builtin types only (it rides on xdist reports and into JSON)."""

    suite: str
    case: str
    system: str
    labels: dict[str, str]
    nodeid: str
    outcome: str
    message: str | None
    metrics: dict[str, float]
    counts: dict[str, dict[str, int | float]]
    details: dict[str, Any]
    views: dict[str, Any]
    fingerprint: dict[str, Any]
    cache_key: str | None
    notes: list[str]
    flags: dict[str, list[str]]
    baseline: dict[str, float] | None
    duration: NotRequired[float]


def new_row(
    suite: str, case: str, system: str, *, labels: Mapping[str, str] | None = None, nodeid: str = ""
) -> Row:
    """A row before evaluation: an error until something is measured."""
    return {
        "suite": suite,
        "case": case,
        "system": system,
        "labels": {str(k): str(v) for k, v in (labels or {}).items()},
        "nodeid": nodeid,
        "outcome": "error",
        "message": None,
        "metrics": {},
        "counts": {},
        "details": {},
        "views": {},
        "fingerprint": {},
        "cache_key": None,
        "notes": [],
        "flags": {},
        "baseline": None,
    }


def merge_labels(ref_labels: Mapping[str, str], found: Mapping[str, str]) -> dict[str, str]:
    """A row's labels: the case reference's (what the test was collected and grouped under)
    first and winning, then any a kind's evaluation added (`CaseResult.labels`)."""
    merged = {str(k): str(v) for k, v in found.items()}
    merged.update({str(k): str(v) for k, v in ref_labels.items()})
    return {k: merged[k] for k in [*map(str, ref_labels), *merged] if k in merged}


def is_measured(row: Mapping[str, Any]) -> bool:
    return row.get("outcome") in MEASURED


def flag_reasons(
    rows: Iterable[Mapping[str, Any]],
    metric: str,
    systems: Collection[str] | None = None,
    *,
    dominance: float | None = None,
) -> dict[str, dict[str, int]]:
    """{system: {reason: cases}} of measured rows flagged on `metric` (``row["flags"]``,
    metric -> reasons its value may mislead), for `systems` only when given. With `dominance`
    (`MetricSpec.flag_dominance`), a system is listed only when its flagged rows carry more
    than that share of the sum of its rows' values of `metric`. Rows with a table of their
    numbers (`row_file.Rows`, a room above this one) are read from it."""
    table, order = getattr(rows, "table", None), getattr(rows, "order", None)
    if table is not None and order is not None:
        found: dict[str, dict[str, int]] = table.flag_reasons(
            metric, order, systems, dominance=dominance
        )
        return found
    values = (
        (
            row["system"],
            (row.get("metrics") or {}).get(metric),
            (row.get("flags") or {}).get(metric, []),
        )
        for row in rows
        if is_measured(row) and (systems is None or row["system"] in systems)
    )
    return count_flags(values, dominance)


def count_flags(
    rows: Iterable[tuple[str, Any, Sequence[str]]], dominance: float | None
) -> dict[str, dict[str, int]]:
    """`flag_reasons` of the measured rows of the systems wanted, each given as (system, its
    value of the metric, the reasons it is flagged on it)."""
    out: dict[str, dict[str, int]] = {}
    flagged_sum: dict[str, float] = {}
    total_sum: dict[str, float] = {}
    for system, value, reasons in rows:
        if dominance is not None and isinstance(value, (int, float)) and math.isfinite(value):
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


# The report's mark on a value some of whose cases are flagged, in every table that compares it.
FLAG_MARK = "\u2020"


def describe_flags(flagged: Mapping[str, int], n: int | None = None) -> str:
    """``reason (k of n cases); ...`` for a `flag_reasons` entry of one system."""
    of = f" of {n}" if n is not None else ""
    return "; ".join(
        f"{reason} ({k}{of} case{'s' if (n or k) != 1 else ''})"
        for reason, k in sorted(flagged.items())
    )


def sort_rows(rows: Iterable[Row]) -> list[Row]:
    """One order for rows however they arrived (xdist delivers them in any order)."""
    return sorted((r.copy() for r in rows), key=lambda r: (str(r["case"]), str(r["system"])))


def plain(value: Any) -> Any:
    """`value` as builtin JSON-able types: numpy scalars unwrapped (xdist cannot serialise
    them), tuples as lists, NaN and infinities as None (bare NaN is not JSON)."""
    # Exact builtin types first: they are nearly every value of a report, which calls this on
    # every row (a subclass, e.g. a str enum, takes the general path below).
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {k if type(k) is str else plain_key(k): plain(v) for k, v in value.items()}
    if kind is list:
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {plain_key(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) or hasattr(value, "item"):
        number = value.item() if hasattr(value, "item") else value
        if isinstance(number, float) and not math.isfinite(number):
            return None
        return number if type(number) in (bool, int, float) else plain(number)
    if value is None or type(value) in (bool, int, str):
        return value
    return str(value)


def plain_key(key: Any) -> str:
    """A mapping's key as text, spelled as `json` spells the keys it accepts (``true``,
    ``null``, ``Infinity``): a result stored as JSON reads back with the keys `plain` makes."""
    if key is True or key is False or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if type(key) is float and not math.isfinite(key):
        return "NaN" if math.isnan(key) else ("Infinity" if key > 0 else "-Infinity")
    return str(key)
