"""Which cases a shard runs (run/shards.py): every case in exactly one shard, by hash or
balanced by recorded durations, the same whatever order the cases come in."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_doceval.run.shards import (
    HASH_BASIS,
    ShardPlan,
    basis,
    durations_reports,
    hash_shard,
    how_split,
    load_durations,
    parse_shard,
    recorded_durations,
    select,
    split,
)

names = st.text(alphabet="abcxyz019_-", min_size=1, max_size=6)
cases = st.lists(st.tuples(names, names), max_size=40)
seconds = st.floats(min_value=0, max_value=1e4, allow_nan=False)


@settings(max_examples=200)
@given(cases, st.integers(1, 9), st.data())
def test_every_case_lands_in_exactly_one_shard(
    run: list[tuple[str, str]], n: int, data: st.DataObject
) -> None:
    known = data.draw(st.dictionaries(st.sampled_from(run), seconds) if run else st.just({}))
    shards = split(run, n, known)
    assert set(shards) == set(run)
    assert all(0 <= k < n for k in shards.values())
    # Each shard's selection, put together, is the run's cases, each once.
    picked: list[tuple[str, str]] = []
    for k in range(1, n + 1):
        kept, dropped, plan = select(run, lambda case: case, (k, n), known)
        assert sorted(kept + dropped) == sorted(run)
        assert plan.total == len(set(run)) and plan.basis == basis(known)
        picked += sorted(set(kept))
    assert sorted(picked) == sorted(set(run))
    # The same split in any order the cases are collected in (every machine, every worker).
    shuffled = list(run)
    random.Random(n).shuffle(shuffled)
    assert split(shuffled, n, dict(reversed(list(known.items())))) == shards


def brute_force_makespan(costs: list[float], n: int) -> float:
    """The best possible longest shard, over every assignment (an independent optimum)."""
    best = float("inf")
    for assignment in itertools.product(range(n), repeat=len(costs)):
        loads = [0.0] * n
        for cost, k in zip(costs, assignment, strict=True):
            loads[k] += cost
        best = min(best, max(loads))
    return best


@settings(max_examples=150)
@given(st.lists(st.floats(0.01, 100), min_size=1, max_size=7), st.integers(1, 3))
def test_a_duration_split_is_within_grahams_bound_of_the_best(costs: list[float], n: int) -> None:
    """Longest-processing-time first is at most 4/3 - 1/(3n) of the optimum (Graham, 1969)."""
    run = [("s", f"c{i}") for i in range(len(costs))]
    shards = split(run, n, dict(zip(run, costs, strict=True)))
    loads = [0.0] * n
    for case, cost in zip(run, costs, strict=True):
        loads[shards[case]] += cost
    assert max(loads) <= (4 / 3 - 1 / (3 * n)) * brute_force_makespan(costs, n) + 1e-9


def test_uneven_cases_are_balanced_longest_first() -> None:
    # By hand: 9 -> A; 5 -> B; 4 -> B (9); 3 -> A (tie at 9: the lower shard) = 12;
    # 2 -> B (11); 1 -> B (12). Twelve seconds each, where a split by count could give 18/6.
    durations = {("t", "c00"): 9.0, ("t", "c01"): 5.0, ("t", "c02"): 4.0}
    durations |= {("t", "c03"): 3.0, ("t", "c04"): 2.0, ("t", "c05"): 1.0}
    shards = split(durations, 2, durations)
    first = sorted(c for (_, c), k in shards.items() if k == 0)
    assert first == ["c00", "c03"]


def test_a_case_without_a_recorded_duration_counts_as_the_mean() -> None:
    durations = {("t", "a"): 10.0, ("t", "b"): 2.0}  # mean 6: "new" is placed as a 6 s case
    shards = split([("t", "a"), ("t", "b"), ("t", "new")], 2, durations)
    assert shards == {("t", "a"): 0, ("t", "new"): 1, ("t", "b"): 1}


def test_without_durations_cases_go_by_hash() -> None:
    run = [("t", f"c{i:02d}") for i in range(20)]
    assert split(run, 3, {}) == {case: hash_shard(case, 3) for case in run}
    assert basis({}) == HASH_BASIS


def test_durations_come_from_a_whole_runs_report_not_a_shards(tmp_path: Path) -> None:
    row = {"case": "c00", "system": "sys", "duration": 1.25}
    results = [row, {**row, "system": "alt"}]
    report = {
        "schema": "doceval-report/1",
        "shard": None,
        "suites": {"tides": {"results": results}},
    }
    assert recorded_durations(report) == {("tides", "c00"): 2.5}
    assert recorded_durations({**report, "shard": "1/2"}) == {}  # part of a run only
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert load_durations(path) == {("tides", "c00"): 2.5}
    path.write_text("{not json", encoding="utf-8")
    assert load_durations(path) == {}
    path.write_text(json.dumps({**report, "schema": "other/1"}), encoding="utf-8")
    assert load_durations(path) == {}  # another schema's rows may not be ours
    assert load_durations(tmp_path / "missing.json") == {}
    # The first whole run's report of several: a shard's own report, then the project's.
    shard = tmp_path / "s1.json"
    shard.write_text(json.dumps({**report, "shard": "1/2"}), encoding="utf-8")
    whole = tmp_path / "doceval-report.json"
    whole.write_text(json.dumps(report), encoding="utf-8")
    found = load_durations([shard, whole])
    assert found == {("tides", "c00"): 2.5} and found.source == whole
    assert "balanced by the case durations in " in how_split(found)
    assert load_durations([shard]).source is None
    assert "by a hash of the case names (no whole run's report at " in how_split(
        load_durations([shard, tmp_path / "missing.json"])
    )
    assert durations_reports(None, shard, whole) == (shard, whole)
    assert durations_reports(None, whole, whole) == (whole,)
    assert durations_reports(tmp_path / "given.json", shard, whole) == (tmp_path / "given.json",)
    assert basis({("tides", "c00"): 2.5}).startswith("durations:")
    assert basis({("tides", "c00"): 2.5}) != basis({("tides", "c00"): 3.0})


def test_non_case_items_stay_in_every_shard() -> None:
    items = ["plain-test", "t/c0", "t/c1"]

    def case_of(item: str) -> tuple[str, str] | None:
        return tuple(item.split("/")) if "/" in item else None  # type: ignore[return-value]

    for k in (1, 2):
        kept, _, _ = select(items, case_of, (k, 2), {})
        assert "plain-test" in kept


def test_a_plan_crosses_as_json_and_knows_when_it_is_empty() -> None:
    plan = ShardPlan((2, 2), HASH_BASIS, total=2, selected=0)
    assert ShardPlan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    assert plan.empty and "shard 2/2 holds none of the run's 2 case(s)" in plan.empty_line()
    assert not ShardPlan((1, 2), HASH_BASIS, total=0, selected=0).empty  # no case at all


@pytest.mark.parametrize(
    ("text", "message"), [("3", "expected K/N"), ("0/2", "need 1 <= K <= N"), ("a/b", "K/N")]
)
def test_a_bad_shard_says_what_is_expected(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_shard(text)
    assert parse_shard("2/5") == (2, 5) and parse_shard(None) is None
