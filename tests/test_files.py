"""files: one wording for every problem of a suite's text and JSON Lines files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_doceval.errors import CaseInputError
from pytest_doceval.files import (
    MAX_LISTED,
    JsonLine,
    LineProblem,
    problems_error,
    read_jsonl,
    read_text,
)


def test_read_text_drops_a_bom_and_names_missing_and_bad_files(tmp_path: Path) -> None:
    good = tmp_path / "truth.md"
    good.write_bytes("\ufeff# Title\n".encode())
    assert read_text(good, "truth") == "# Title\n"
    with pytest.raises(CaseInputError, match=r"missing.md: missing truth$"):
        read_text(tmp_path / "missing.md", "truth")
    bad = tmp_path / "latin1.md"
    bad.write_bytes(b"caf\xe9")
    with pytest.raises(
        CaseInputError, match=r"latin1.md: truth is not UTF-8 \(byte 0xe9 at offset 3"
    ):
        read_text(bad, "truth")
    with pytest.raises(CaseInputError, match="is a folder"):
        read_text(tmp_path, "truth")


def test_read_jsonl_reports_each_bad_line_and_keeps_the_good_ones(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a"}\n\n{"id": \n\xff\xfe\n[1, 2]\n')
    got = list(read_jsonl(path, "questions"))
    assert got == [
        JsonLine(1, {"id": "a"}),
        LineProblem(3, "not valid JSON (Expecting value, column 8)"),
        LineProblem(4, "not UTF-8 (byte 0xff at offset 0)"),
        JsonLine(5, [1, 2]),
    ]
    assert got[1].where(path) == f"{path}:3: not valid JSON (Expecting value, column 8)"  # type: ignore[union-attr]


def test_read_jsonl_missing_file_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(CaseInputError, match="missing facts"):
        read_jsonl(tmp_path / "none.jsonl", "facts")


def test_problems_error_lists_at_most_max_listed() -> None:
    problems = [f"f.jsonl:{n}: bad" for n in range(MAX_LISTED + 3)]
    message = str(problems_error(problems))
    assert message.splitlines()[-1] == "... and 3 more problems"
    assert len(message.splitlines()) == MAX_LISTED + 1


@given(
    st.lists(
        st.one_of(st.none(), st.integers(), st.text(), st.dictionaries(st.text(), st.integers()))
    )
)
def test_read_jsonl_round_trips_any_values(values: list[object]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "v.jsonl"
        path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
        got = list(read_jsonl(path, "values"))
    assert got == [JsonLine(n, v) for n, v in enumerate(values, start=1)]


@given(st.binary(max_size=200))
def test_read_jsonl_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "v.jsonl"
        path.write_bytes(data)
        for item in read_jsonl(path, "values"):
            assert isinstance(item, (JsonLine, LineProblem))
