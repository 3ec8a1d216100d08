"""Atomic writes: whole files or none, the mode an ordinary write gives, no debris."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_doceval import atomic
from pytest_doceval.atomic import write_bytes_atomic, write_json_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_umask_mode_and_its_missing_folders(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    target = tmp_path / "a" / "b" / "entry.json"
    assert write_bytes_atomic(target, b"x" * 70_000) == target
    assert target.read_bytes() == b"x" * 70_000
    assert _mode(target) == 0o666 & ~umask
    assert os.listdir(target.parent) == ["entry.json"]  # no temporary file left


def test_an_existing_file_keeps_its_mode_and_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    target.chmod(0o640)
    write_json_atomic(target, {"new": 1})
    assert target.read_text() == '{\n  "new": 1\n}\n'
    assert _mode(target) == 0o640


def test_a_failed_write_leaves_the_old_file_and_no_debris(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "baseline.json"
    target.write_text("old")

    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_bytes_atomic(target, b"new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["baseline.json"]


def test_debris_of_a_crashed_writer_with_the_same_name_is_stepped_over(tmp_path: Path) -> None:
    """A temporary name is the pid and a counter: one left by a dead process whose pid came
    back is not overwritten (O_EXCL), the next name is taken."""
    target = tmp_path / "entry.json"
    upcoming = next(atomic._TEMPORARY_NAMES) + 1
    debris = tmp_path / f".entry.json.{os.getpid()}.{upcoming}.tmp"
    debris.write_text("someone else's")
    write_bytes_atomic(target, b"mine")
    assert target.read_bytes() == b"mine"
    assert debris.read_text() == "someone else's"
