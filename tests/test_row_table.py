"""The rows' numbers as columns (`row_table`, `row_file.Rows`): every figure the shared analyses
read from the table equals the same figure read from the row dicts, the way the row-dict
functions (`values_by_system`, `flag_reasons`) and the corpus formulas compute it."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval import stats
from pytest_doceval.config import StatsConfig
from pytest_doceval.kinds.analyses import values_by_system
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.report.analysis import aggregates, analyse_suite
from pytest_doceval.row_file import Rows
from pytest_doceval.row_table import RowTable
from pytest_doceval.rows import flag_reasons, is_measured, sort_rows

METRICS = ("cer", "wer", "pass")
numbers = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from([0.0, 0.5, 1.0]),
)


@st.composite
def a_row(draw: Any) -> dict[str, Any]:
    metrics = draw(st.dictionaries(st.sampled_from(METRICS), numbers, max_size=3))
    row: dict[str, Any] = {
        "case": draw(st.sampled_from(["a", "b", "c", "d", "é"])),
        "system": draw(st.sampled_from(["s", "t", "u"])),
        "outcome": draw(st.sampled_from(["passed", "failed", "error", "skipped"])),
        "metrics": metrics,
        "baseline": draw(
            st.one_of(st.none(), st.dictionaries(st.sampled_from(METRICS), numbers, max_size=3))
        ),
        "flags": draw(
            st.dictionaries(
                st.sampled_from(METRICS),
                st.lists(st.sampled_from(["repeats", "short"]), max_size=2),
                max_size=2,
            )
        ),
        "counts": {},
        "notes": draw(st.lists(st.sampled_from(["n1", "n2"]), max_size=1)),
    }
    if draw(st.booleans()):
        edits = st.integers(0, 40)
        row["counts"]["cer"] = {
            "substitutions": draw(edits),
            "deletions": draw(edits),
            "insertions": draw(edits),
            "reference_length": draw(st.integers(1, 200)),
        }
    for group in draw(st.lists(st.sampled_from(["f:x", "f:y", "f:z"]), unique=True, max_size=3)):
        total = draw(st.integers(0, 5))
        entry: dict[str, Any] = {"matched": draw(st.integers(0, total)), "total": total}
        if draw(st.booleans()):
            entry["weight"] = draw(st.sampled_from([1.0, 2.0, 0.5]))
        row["counts"][group] = entry
    return row


rows_lists = st.lists(a_row(), max_size=24)


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(deadline=None, max_examples=60)
@given(rows_lists, st.sampled_from(METRICS), st.sampled_from(["metrics", "baseline"]))
def test_values_by_system_from_the_table_are_those_of_the_rows(
    rows: list[dict[str, Any]], metric: str, source: str
) -> None:
    from_rows = values_by_system(rows, metric, source)
    from_table = values_by_system(Rows.of(rows), metric, source)
    assert from_table == from_rows
    assert list(from_table) == list(from_rows)  # systems in the order the rows give them


@settings(deadline=None, max_examples=60)
@given(rows_lists, st.sampled_from(METRICS), st.sampled_from([None, 0.0, 0.5]))
def test_flag_reasons_from_the_table_are_those_of_the_rows(
    rows: list[dict[str, Any]], metric: str, dominance: float | None
) -> None:
    for systems in (None, {"s", "u"}):
        expected = flag_reasons(rows, metric, systems, dominance=dominance)
        assert flag_reasons(Rows.of(rows), metric, systems, dominance=dominance) == expected


@settings(deadline=None, max_examples=40)
@given(rows_lists)
def test_sorted_rows_are_sort_rows(rows: list[dict[str, Any]]) -> None:
    assert list(Rows.of(rows).sorted()) == sort_rows(rows)  # type: ignore[arg-type]


@settings(deadline=None, max_examples=40)
@given(rows_lists, rows_lists)
def test_a_table_extended_is_the_table_of_both(
    first: list[dict[str, Any]], second: list[dict[str, Any]]
) -> None:
    joined = Rows.concat([Rows.of(first), Rows.of(second)])
    whole = Rows.of(first + second)
    for metric in METRICS:
        for source in ("metrics", "baseline"):
            assert values_by_system(joined, metric, source) == values_by_system(
                whole, metric, source
            )
        assert flag_reasons(joined, metric) == flag_reasons(whole, metric)
    a, b = joined.table, whole.table
    assert a.outcomes == b.outcomes and a.messages == b.messages and a.notes == b.notes
    assert set(a.counts) == set(b.counts) and set(a.counts_present) == set(b.counts_present)
    for key, column in a.counts.items():
        assert _same(list(column), list(b.counts[key])), key
    for key, present in a.counts_present.items():
        assert list(present) == list(b.counts_present[key]), key


def _corpus_of_rows(rows: list[dict[str, Any]], system: str) -> Any:
    """Corpus CER as the report defines it, from the row dicts: sum of edits / sum of
    reference lengths over the system's measured rows that have the counts."""
    counts = [
        r["counts"]["cer"]
        for r in sort_rows(rows)  # type: ignore[arg-type]
        if r["system"] == system and is_measured(r) and "cer" in r["counts"]
    ]
    return stats.bootstrap_ratio_ci(
        [c["substitutions"] + c["deletions"] + c["insertions"] for c in counts],
        [c["reference_length"] for c in counts],
        resamples=200,
        seed=0,
    )


def _pooled_of_rows(rows: list[dict[str, Any]], system: str) -> Any:
    """The pooled share, from the row dicts: each measured row of the system a case, its
    groups the ``f:`` counts (weight 1 where none is given), groups in order of name."""
    cases = [
        {
            key.removeprefix("f:"): (c["matched"], c["total"], c.get("weight", 1.0))
            for key, c in sorted(r["counts"].items())
            if key.startswith("f:")
        }
        for r in sort_rows(rows)  # type: ignore[arg-type]
        if r["system"] == system and is_measured(r)
    ]
    return stats.pooled_share(cases, resamples=200, seed=0)


@settings(deadline=None, max_examples=25)
@given(rows_lists)
def test_corpus_and_pooled_values_from_the_table_are_those_of_the_rows(
    rows: list[dict[str, Any]],
) -> None:
    specs = {
        "cer": MetricSpec("lower", counts="cer"),
        "pass": MetricSpec("higher", pooled="f:"),
    }
    found = aggregates(Rows.of(rows).sorted(), specs, StatsConfig(resamples=200))
    for system, by_metric in found.items():
        if "cer" in by_metric:
            corpus = _corpus_of_rows(rows, system)
            assert _same(by_metric["cer"]["corpus"], corpus.mean)
            assert _same(by_metric["cer"]["corpus_ci_low"], corpus.ci_low)
        if "pass" in by_metric:
            pooled = _pooled_of_rows(rows, system)
            assert _same(by_metric["pass"]["corpus"], pooled.mean)
            assert _same(by_metric["pass"]["corpus_ci_high"], pooled.ci_high)


def test_a_row_without_a_number_has_none_in_its_column() -> None:
    table = RowTable()
    table.add({"case": "a", "system": "s", "outcome": "passed", "metrics": {"cer": 0.1}})
    table.add({"case": "b", "system": "s", "outcome": "passed", "metrics": {"wer": None}})
    table.add({"case": "c", "system": "s", "outcome": "error", "metrics": {"cer": "n/a"}})
    assert math.isnan(table.metrics["cer"][1]) and math.isnan(table.metrics["cer"][2])
    assert [math.isnan(v) for v in table.metrics["wer"]] == [True, True, True]
    assert table.values("cer", range(3)) == {"s": {"a": 0.1}}


def test_an_analysed_list_stays_a_list_of_copies() -> None:
    rows = [
        {"case": "b", "system": "s", "outcome": "passed", "metrics": {"cer": 0.2}},
        {"case": "a", "system": "s", "outcome": "passed", "metrics": {"cer": 0.1}},
    ]
    meta: Any = {"kind": "documents", "path": "p", "metrics": {"cer": {"direction": "lower"}}}
    section = analyse_suite(meta, rows, StatsConfig(resamples=200))
    results = section["results"]
    assert isinstance(results, list) and [r["case"] for r in results] == ["a", "b"]
    assert results[0] is not rows[1] and results[0] == rows[1]
    assert section["outcomes"] == {"passed": 2}
