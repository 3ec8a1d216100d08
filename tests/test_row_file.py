"""Rows on disk (`row_file`) and the JSON report written and read a row at a time
(`report.json_report`): what is read back is what was written, as `json` reads the file whole;
a report cut short or damaged anywhere is an error naming the file and the byte, never a
report of fewer rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_doceval.errors import DocevalError
from pytest_doceval.report.json_report import load_report, report_text, save_report
from pytest_doceval.row_file import RowRecord, Rows, decode_row, encode_row
from pytest_doceval.rows import plain

texts = st.text(
    st.characters(blacklist_categories=("Cs",)) | st.sampled_from(['"', "\\", "\n", "\u2028"]),
    max_size=12,
)
values = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), texts)


@st.composite
def a_row(draw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "suite": "s",
        "case": draw(texts),
        "system": draw(st.sampled_from(["a", "b"])),
        "outcome": draw(st.sampled_from(["passed", "failed", "error"])),
        "message": draw(st.none() | texts),
        "metrics": draw(st.dictionaries(st.sampled_from(["cer", "wer"]), values, max_size=2)),
        "views": draw(st.dictionaries(texts, st.lists(values, max_size=3), max_size=2)),
    }
    if draw(st.booleans()):
        row["duration"] = draw(st.floats(0, 10))
    return row


def a_report(rows: list[dict[str, Any]], note: str = "") -> dict[str, Any]:
    return {
        "schema": "doceval-report/1",
        "created": "2026-01-01T00:00:00Z",
        "interrupted": False,
        "suites": {
            "one": {"kind": "documents", "notes": [note], "results": rows},
            "empty": {"kind": None, "error": "broken", "results": []},
            "two": {"kind": "facts", "results": rows[:1]},
        },
    }


@settings(deadline=None, max_examples=60)
@given(a_row())
def test_a_rows_line_is_its_json_with_the_duration_last(row: dict[str, Any]) -> None:
    data, line, steady = encode_row(row)
    assert json.loads(line) == json.loads(json.dumps(plain(row))) == data
    assert b"\n" not in line
    without = {k: v for k, v in data.items() if k != "duration"}
    assert json.loads(steady) == without
    assert list(json.loads(line))[-1] == "duration" or "duration" not in row


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=12,
)


@settings(deadline=None, max_examples=200)
@given(json_values, st.booleans())
def test_a_line_is_decoded_as_json_decodes_it(value: Any, ascii_only: bool) -> None:
    """orjson where it reads the line the same way, `json` elsewhere: always `json`'s value
    (floats to the bit, integers beyond 64 bits, escapes)."""
    line = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    try:
        expected = json.loads(line)
    except ValueError:  # a lone surrogate raw in UTF-8: not JSON for either
        with pytest.raises(ValueError):
            decode_row(line)
        return
    found = decode_row(line)
    assert json.dumps(found) == json.dumps(expected)  # floats compared by their repr
    for special in (b'{"a": NaN}', b'{"a": "\\ud800"}', b'{"a": 12345678901234567890123}'):
        assert repr(decode_row(special)) == repr(json.loads(special))


def test_a_lone_surrogate_is_written_as_an_escape_and_read_back(tmp_path: Path) -> None:
    row = {"case": "bad \ud800 text", "system": "a", "outcome": "passed", "metrics": {}}
    _, line, _ = encode_row(row)
    assert json.loads(line)["case"] == "bad \ud800 text"


def test_the_record_is_a_json_line_a_row_flushed_as_it_comes(tmp_path: Path) -> None:
    """What a run killed midway leaves: every row so far, a line each, readable by `json`."""
    path = tmp_path / "doceval-report.partial.jsonl"
    record = RowRecord(path)
    rows = [
        {"case": f"c{i}", "system": "a", "outcome": "passed", "metrics": {"cer": i / 10}}
        for i in range(5)
    ]
    for i, row in enumerate(rows):
        assert record.add("suite-a" if i % 2 else "suite-b", row) is (i < 2)
        # Read while the record is open, as another process would after a kill.
        lines = path.read_bytes().splitlines()
        assert [json.loads(line) for line in lines] == rows[: i + 1]
    assert list(record.rows("suite-a")) == rows[1::2]
    assert list(record.rows("suite-b")) == rows[0::2]
    record.discard()
    assert not path.exists()


def test_the_digest_leaves_out_durations_only() -> None:
    row = {"case": "c", "system": "a", "outcome": "passed", "metrics": {"cer": 0.5}}
    slow, fast, other = dict(row, duration=9.0), dict(row, duration=0.1), dict(row, outcome="x")
    assert Rows.of([slow]).digest() == Rows.of([fast]).digest() == Rows.of([row]).digest()
    assert Rows.of([other]).digest() != Rows.of([row]).digest()
    record = RowRecord(None)
    record.add("g", fast)
    assert record.rows("g").digest() == Rows.of([slow]).digest()  # taken when recorded
    record.discard()


@settings(
    deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(a_row(), max_size=6), texts)
def test_a_report_read_back_is_the_report_written(
    tmp_path: Path, rows: list[dict[str, Any]], note: str
) -> None:
    report = a_report(rows, note)
    path = tmp_path / "report.json"
    saved = save_report(report, path)  # type: ignore[arg-type]
    expected = json.loads(json.dumps(plain(report)))
    assert json.loads(path.read_text(encoding="utf-8")) == expected
    assert path.read_text(encoding="utf-8") == report_text(report) + "\n"
    loaded = load_report(path)
    for name, section in expected["suites"].items():
        assert list(loaded["suites"][name]["results"]) == section["results"]
        assert list(saved["suites"][name]["results"]) == section["results"]
        rest = {k: v for k, v in loaded["suites"][name].items() if k != "results"}
        assert rest == {k: v for k, v in section.items() if k != "results"}
    again = tmp_path / "again.json"
    save_report(loaded, again)  # rows copied line by line from the file read
    assert again.read_bytes() == path.read_bytes()


def _written(tmp_path: Path, rows: int = 6) -> bytes:
    report = a_report(
        [
            {"case": f"c{i}", "system": "a", "outcome": "passed", "metrics": {"cer": i / 7}}
            for i in range(rows)
        ]
    )
    save_report(report, tmp_path / "whole.json")  # type: ignore[arg-type]
    return (tmp_path / "whole.json").read_bytes()


def test_a_report_cut_anywhere_is_an_error_naming_the_file_and_byte(tmp_path: Path) -> None:
    whole = _written(tmp_path)
    path = tmp_path / "cut.json"
    for end in range(1, len(whole) - 1):  # the last byte is the line break after the '}'
        path.write_bytes(whole[:end])
        with pytest.raises(DocevalError) as caught:
            load_report(path)
        message = str(caught.value)
        assert message.startswith(f"{path}: "), message
        assert "byte" in message, message
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DocevalError, match=rf"truncated at byte {len(whole) // 2:,}"):
        load_report(path)


def test_a_damaged_row_is_an_error_at_its_byte(tmp_path: Path) -> None:
    whole = _written(tmp_path)
    at = whole.index(b'"case": "c3"') + 2  # inside the fourth row's first key
    damaged = whole[:at] + b"\x00" + whole[at + 1 :]
    path = tmp_path / "damaged.json"
    path.write_bytes(damaged)
    with pytest.raises(DocevalError) as caught:
        load_report(path)
    start = whole.rindex(b"\n", 0, at) + 1 + len(b"      ")
    found = int(str(caught.value).split("damaged at byte ")[1].split(" ")[0].replace(",", ""))
    assert start <= found <= at, str(caught.value)


def test_a_report_not_written_a_row_a_line_is_read_whole(tmp_path: Path) -> None:
    report = a_report([{"case": "c", "system": "a", "outcome": "passed", "metrics": {}}])
    path = tmp_path / "compact.json"
    path.write_text(json.dumps(report))
    loaded = load_report(path)
    assert list(loaded["suites"]["one"]["results"]) == report["suites"]["one"]["results"]
    path.write_text(json.dumps(report)[:-40])
    with pytest.raises(DocevalError, match=r"compact.json: truncated at byte"):
        load_report(path)
