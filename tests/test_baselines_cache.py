from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.gates import parse_rule, parse_suite_gates
from pytest_doceval.metrics.cost import COST_METRICS
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.run.baselines import NoiseBands, load_baseline, update_baseline
from pytest_doceval.store import cache_key


def row(case: str, system: str, cer: float) -> dict:
    return {"case": case, "system": system, "metrics": {"cer": cer}, "fingerprint": {"v": 1}}


def update(path: Path, rows: list[dict], keys: set[str], today: str) -> list:
    return update_baseline(
        path, suite="s", scoring_id="fair-v1", rows=rows, defined_keys=keys, today=today
    )


def test_update_writes_stable_sorted_rounded_json(tmp_path: Path) -> None:
    path = tmp_path / "b" / "s.json"
    changes = update(
        path, [row("b", "p", 0.123456789), row("a", "p", 0.5)], {"a[p]", "b[p]"}, "2026-01-01"
    )
    assert [str(c) for c in changes] == ["added a[p]", "added b[p]"]
    text = path.read_text()
    assert text.endswith("\n") and text.index('"a[p]"') < text.index('"b[p]"')
    assert json.loads(text)["entries"]["b[p]"]["metrics"]["cer"] == 0.123457
    assert list(tmp_path.joinpath("b").iterdir()) == [path]  # no temp file left behind


def test_update_reports_changes_and_removals(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    update(path, [row("a", "p", 0.1), row("gone", "p", 0.2)], {"a[p]", "gone[p]"}, "2026-01-01")
    changes = update(path, [row("a", "p", 0.15)], {"a[p]"}, "2026-01-02")
    assert [str(c) for c in changes] == ["removed gone[p]", "changed a[p]: cer 0.1000->0.1500"]
    loaded = load_baseline(path, suite="s")
    assert loaded is not None and loaded.entry("a[p]")["metrics"] == {"cer": 0.15}  # type: ignore[index]


def test_unchanged_update_keeps_date_and_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    update(path, [row("a", "p", 0.1)], {"a[p]"}, "2026-01-01")
    before = path.read_text()
    assert update(path, [row("a", "p", 0.1)], {"a[p]"}, "2026-02-02") == []
    assert path.read_text() == before


def test_corrupt_baseline_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("{not json")
    with pytest.raises(SuiteConfigError, match="unreadable baseline"):
        load_baseline(path, suite="s")


def test_cache_key_depends_on_fingerprint_and_input_only() -> None:
    base = cache_key({"system": "x", "dpi": 300}, "d1")
    assert base == cache_key({"dpi": 300, "system": "x"}, "d1")
    assert base != cache_key({"system": "x", "dpi": 200}, "d1")
    assert base != cache_key({"system": "x", "dpi": 300}, "d2")


def test_fingerprint_change_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    update(path, [row("a", "p", 0.1)], {"a[p]"}, "2026-01-01")
    new = dict(row("a", "p", 0.1), fingerprint={"v": 2})
    changes = update(path, [new], {"a[p]"}, "2026-01-02")
    assert [str(c) for c in changes] == ["changed a[p]: same numbers, new output or system"]
    assert json.loads(path.read_text())["entries"]["a[p]"]["fingerprint"] == {"v": 2}


# -- noisy metrics (what computing an output cost) stay out, or move only beyond their gate ------

TIMED = NoiseBands(noisy=frozenset({"cpu_seconds", "wall_seconds"}))


def timed(case: str, cer: float, cpu: float, wall: float) -> dict:
    return {
        **row(case, "p", cer),
        "metrics": {"cer": cer, "cpu_seconds": cpu, "wall_seconds": wall},
    }


def test_noisy_metrics_stay_out_of_the_baseline_and_never_change_an_entry(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    update_baseline(
        path, suite="s", scoring_id="v", rows=[timed("a", 0.1, 0.3, 0.4)],
        defined_keys={"a[p]"}, today="2026-01-01", noise=TIMED,
    )  # fmt: skip
    before = path.read_text()
    assert json.loads(before)["entries"]["a[p]"]["metrics"] == {"cer": 0.1}
    # A fresh CI runner: the same output, other timings. Nothing changed, nothing written.
    changes = update_baseline(
        path, suite="s", scoring_id="v", rows=[timed("a", 0.1, 2.7, 9.1)],
        defined_keys={"a[p]"}, today="2026-02-02", noise=TIMED,
    )  # fmt: skip
    assert changes == [] and path.read_text() == before


def test_a_baseline_written_with_timings_drops_them_once(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    update(path, [timed("a", 0.1, 0.3, 0.4)], {"a[p]"}, "2026-01-01")  # an older release
    changes = update_baseline(
        path, suite="s", scoring_id="fair-v1", rows=[timed("a", 0.1, 0.5, 0.6)],
        defined_keys={"a[p]"}, today="2026-02-02", noise=TIMED,
    )  # fmt: skip
    assert [str(c) for c in changes] == ["changed a[p]: cpu_seconds dropped, wall_seconds dropped"]


def test_a_gated_timing_is_recorded_and_moves_only_beyond_its_tolerance(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    noise = NoiseBands(
        noisy=frozenset({"cpu_seconds", "wall_seconds"}),
        gated={"cpu_seconds": (parse_rule("cpu_seconds", "+50%"),)},
    )

    def run(cpu: float, today: str) -> list[str]:
        changes = update_baseline(
            path, suite="s", scoring_id="v", rows=[timed("a", 0.1, cpu, 5.0)],
            defined_keys={"a[p]"}, today=today, noise=noise,
        )  # fmt: skip
        return [str(c) for c in changes]

    assert run(1.0, "2026-01-01") == ["added a[p]"]
    entry = json.loads(path.read_text())["entries"]["a[p]"]
    assert entry["metrics"] == {"cer": 0.1, "cpu_seconds": 1.0}  # wall_seconds: not gated
    # 1.4 s and 0.6 s are within 50% of the recorded 1.0 s either way: noise, kept as 1.0.
    assert run(1.4, "2026-01-02") == [] and run(0.6, "2026-01-03") == []
    assert json.loads(path.read_text())["entries"]["a[p]"] == entry
    # 1.6 s is beyond it: the parser got slower, and accepting it is a change.
    assert run(1.6, "2026-01-04") == ["changed a[p]: cpu_seconds 1.0000->1.6000"]
    assert load_baseline(path, suite="s").entry("a[p]")["metrics"] == {
        "cer": 0.1,
        "cpu_seconds": 1.6,
    }


def test_a_bound_on_a_timing_needs_no_baseline_and_a_suite_gate_does() -> None:
    spec = SimpleNamespace(
        case_gates={"cpu_seconds": [parse_rule("cpu_seconds", "<= 30")]},
        suite_gates=parse_suite_gates({"wall_seconds": "significant:+2abs"}),
    )
    suite = SimpleNamespace(
        spec=spec, all_metrics=lambda: {"cer": MetricSpec("lower"), **COST_METRICS}
    )
    bands = NoiseBands.of(suite, ["cer", "cpu_seconds", "wall_seconds", "tokens_in"])  # type: ignore[arg-type]
    assert bands.noisy == {"cpu_seconds", "wall_seconds", "tokens_in"}
    assert [m for m in ("cer", "cpu_seconds", "wall_seconds", "tokens_in") if bands.kept(m)] == [
        "cer",
        "wall_seconds",
    ]
    assert bands.same("wall_seconds", 3.0, 4.9) and not bands.same("wall_seconds", 3.0, 5.1)
