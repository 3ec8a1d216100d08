"""The baseline file's two layouts (`run/baseline_file.py`): each read back equal to what the
standard `json` parser reads from the whole file, an entry a line beyond `INDENTED_ENTRIES`,
and broken files or entries named in the error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.run import baseline_file
from pytest_doceval.run.baseline_file import entry_text, read_baseline, write_baseline
from pytest_doceval.run.baselines import load_baseline, update_baseline

HEADER = {"schema": "doceval-baseline/1", "scoring_id": "fair-v1", "suite": "s"}


def entry(cer: float, key: str = "k" * 64) -> dict[str, Any]:
    return {"cache_key": key, "fingerprint": {"system": "p"}, "metrics": {"cer": cer, "wer": 0.5}}


def written(path: Path, entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    write_baseline(path, HEADER, {k: entry_text(v) for k, v in entries.items()})
    return json.loads(path.read_text(encoding="utf-8"))  # the independent reading


@pytest.fixture
def lines_beyond_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(baseline_file, "INDENTED_ENTRIES", 2)


def test_a_small_baseline_is_indented_one_number_a_line(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    data = written(path, {"a[p]": entry(0.1), "b[p]": entry(0.2)})
    assert data == {**HEADER, "entries": {"a[p]": entry(0.1), "b[p]": entry(0.2)}}
    assert '      "cer": 0.1,\n' in path.read_text()
    header, entries = read_baseline(path)
    assert header == HEADER and entries.get("b[p]") == entry(0.2)


def test_a_big_baseline_has_an_entry_a_line(tmp_path: Path, lines_beyond_two: None) -> None:
    path = tmp_path / "s.json"
    entries = {f"case-{n}[p]": entry(n / 10) for n in (3, 1, 2)}
    data = written(path, entries)
    assert data == {**HEADER, "entries": entries}
    lines = path.read_text().splitlines()
    assert lines[2].startswith('    "case-1[p]": {"cache_key": ') and lines[2].endswith("},")
    assert len(lines) == 3 + 7  # {, "entries": {, 3 entries, }, 3 header lines, }
    header, read = read_baseline(path)
    assert header == HEADER and dict(read.texts) == {k: entry_text(v) for k, v in entries.items()}


KEYS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12).map(
    lambda case: f"{case}[p]"
)
ENTRIES = st.fixed_dictionaries(
    {
        "metrics": st.dictionaries(st.text(max_size=8), st.floats(allow_nan=False), max_size=4),
        "fingerprint": st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
    }
)


@settings(
    deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=st.dictionaries(KEYS, ENTRIES, min_size=3, max_size=8))
def test_any_keys_and_entries_read_back_as_json_reads_them(
    tmp_path: Path, lines_beyond_two: None, entries: dict[str, dict[str, Any]]
) -> None:
    """Keys with quotes, brackets, ``": "``, newlines or any script: the line reader decodes
    each key as JSON does, and the entries parse to what the whole file parses to."""
    path = tmp_path / "s.json"
    data = written(path, entries)
    header, read = read_baseline(path)
    assert header == HEADER
    assert {k: read.get(k) for k in read} == data["entries"] == entries


def test_an_unreadable_entry_is_its_tests_error_and_the_rest_reads(
    tmp_path: Path, lines_beyond_two: None
) -> None:
    path = tmp_path / "s.json"
    written(path, {f"c{n}[p]": entry(0.1) for n in range(4)})
    text = path.read_text().replace('"wer": 0.5}},\n', '"wer": 0.5.2}},\n', 1)
    path.write_text(text)
    baseline = load_baseline(path, suite="s")
    assert baseline is not None and baseline.entry("c1[p]") == entry(0.1)
    with pytest.raises(SuiteConfigError, match=r"s\.json: the entry of c0\[p\] is not a JSON"):
        baseline.entry("c0[p]")


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: text.replace('    "c2[p]"', '<<<<<<< HEAD\n    "c2[p]"', 1),  # a conflict
        lambda text: text.replace("  },\n", "  ]\n", 1),
    ],
)
def test_a_broken_file_is_a_clear_error(
    tmp_path: Path, lines_beyond_two: None, damage: Any
) -> None:
    path = tmp_path / "s.json"
    written(path, {f"c{n}[p]": entry(0.1) for n in range(4)})
    path.write_text(damage(path.read_text()))
    with pytest.raises(SuiteConfigError, match=r"s\.json: unreadable baseline"):
        load_baseline(path, suite="s")


def test_an_update_beyond_the_indented_size_keeps_untouched_lines_as_they_were(
    tmp_path: Path, lines_beyond_two: None
) -> None:
    path = tmp_path / "s.json"
    rows = [
        {"case": f"c{n}", "system": "p", "metrics": {"cer": n / 10}, "fingerprint": {"v": 1}}
        for n in range(5)
    ]
    keys = {f"c{n}[p]" for n in range(5)}
    update_baseline(
        path, suite="s", scoring_id="x", rows=rows, defined_keys=keys, today="2026-01-01"
    )
    before = path.read_text().splitlines()
    rows[3]["metrics"] = {"cer": 0.35}
    changes = update_baseline(
        path, suite="s", scoring_id="x", rows=rows[3:4], defined_keys=keys, today="2026-02-02"
    )
    assert [str(c) for c in changes] == ["changed c3[p]: cer 0.3000->0.3500"]
    after = path.read_text().splitlines()
    assert [n for n, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [5]
    assert json.loads(after[5].strip().removesuffix(",").partition(": ")[2]) == {
        "fingerprint": {"v": 1},
        "metrics": {"cer": 0.35},
        "updated": "2026-02-02",
    }


def test_a_checkout_with_windows_line_ends_reads_the_same(
    tmp_path: Path, lines_beyond_two: None
) -> None:
    path = tmp_path / "s.json"
    entries = {f"c{n}[p]": entry(n / 10) for n in range(4)}
    written(path, entries)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    baseline = load_baseline(path, suite="s")
    assert baseline is not None and baseline.scoring_id == "fair-v1"
    assert {k: baseline.entry(k) for k in baseline.entries} == entries
