from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.run.baselines import load_baseline, update_baseline
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
    assert loaded is not None and loaded.metrics("a[p]") == {"cer": 0.15}


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
