"""The store's table of small entries (`pytest_doceval.store.table`): the store's rules (checksum,
run, mode) hold for its rows as for its files; rows are written in batches and at close;
processes share the file; a damaged file is a miss, never trusted."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.store import Store, table
from pytest_doceval.store.store import JsonCodec
from pytest_doceval.store.table import BATCH, FILE_NAME, TABLE_VERSION


class SmallJson(JsonCodec):
    name = "small"
    in_table = True


SMALL = SmallJson()


def _key(i: int) -> str:
    return f"{i:064x}"


def test_a_row_is_read_back_before_and_after_it_is_written(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.put(_key(1), {"m": [1.0, 2]}, SMALL, {"row": "s/c[a]"})
    assert not (tmp_path / FILE_NAME).exists() or _rows(tmp_path) == {}  # kept in memory
    assert store.get_with_meta(_key(1), SMALL) == ({"m": [1.0, 2]}, {"row": "s/c[a]"})
    assert store.has(_key(1), SMALL)
    store.close()
    assert set(_rows(tmp_path)) == {_key(1)}
    again = Store(tmp_path)
    assert again.get_with_meta(_key(1), SMALL) == ({"m": [1.0, 2]}, {"row": "s/c[a]"})
    assert not again.has(_key(2), SMALL) and again.get(_key(2), SMALL) is None
    assert not list(tmp_path.rglob("*.small.json"))  # no file per entry


def test_rows_are_written_a_batch_at_a_time(tmp_path: Path) -> None:
    store = Store(tmp_path)
    for i in range(BATCH + 3):
        store.put(_key(i), i, SMALL)
    assert len(_rows(tmp_path)) == BATCH  # another process sees the first batch already
    store.close()
    assert len(_rows(tmp_path)) == BATCH + 3
    assert [Store(tmp_path).get(_key(i), SMALL) for i in range(BATCH + 3)] == list(range(BATCH + 3))


def test_a_tampered_row_is_a_miss(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.put(_key(1), {"m": 1}, SMALL)
    store.put(_key(2), {"m": 2}, SMALL)
    store.close()
    with sqlite3.connect(tmp_path / FILE_NAME) as connection:
        connection.execute("UPDATE entries SET value = '{\"m\": 3}' WHERE key = ?", (_key(1),))
        connection.execute("UPDATE entries SET codec = 'json' WHERE key = ?", (_key(2),))
    reader = Store(tmp_path)
    assert reader.get(_key(1), SMALL) is None  # its checksum no longer matches
    assert reader.get(_key(2), SMALL) is None  # another codec's


def test_modes_read_write_and_off(tmp_path: Path) -> None:
    Store(tmp_path / "none", "read").put(_key(1), 1, SMALL)
    reading = Store(tmp_path / "none", "read")
    assert reading.get(_key(1), SMALL) is None and not reading.has(_key(1), SMALL)
    reading.close()
    assert not (tmp_path / "none").exists()  # a run that only reads makes no table

    first = Store(tmp_path, "rw", run_id="first")
    first.put(_key(1), 1, SMALL)
    first.close()
    assert Store(tmp_path, "read").get(_key(1), SMALL) == 1
    refreshing = Store(tmp_path, "write", run_id="second")
    assert refreshing.get(_key(1), SMALL) is None  # an older run's row is being refreshed
    assert not refreshing.has(_key(1), SMALL)
    refreshing.put(_key(1), 2, SMALL)
    assert refreshing.get(_key(1), SMALL) == 2 and refreshing.has(_key(1), SMALL)
    refreshing.close()
    assert Store(tmp_path, "write", run_id="second").get(_key(1), SMALL) == 2
    assert Store(None, "rw").get(_key(1), SMALL) is None


@pytest.mark.parametrize("damage", [b"not a database at all" * 100, b""])
def test_a_damaged_table_is_set_aside_by_a_writer_and_missed_by_a_reader(
    tmp_path: Path, damage: bytes
) -> None:
    store = Store(tmp_path)
    store.put(_key(1), 1, SMALL)
    store.close()
    (tmp_path / FILE_NAME).write_bytes(damage + b"\0" * 10)
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"{FILE_NAME}{suffix}").unlink(missing_ok=True)
    assert Store(tmp_path, "read").get(_key(1), SMALL) is None
    writer = Store(tmp_path)
    assert writer.get(_key(1), SMALL) is None
    writer.put(_key(2), 2, SMALL)
    writer.close()
    assert Store(tmp_path).get(_key(2), SMALL) == 2
    assert (tmp_path / f"{FILE_NAME}.damaged").read_bytes() == damage + b"\0" * 10


def test_a_table_of_another_version_is_not_read(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.put(_key(1), 1, SMALL)
    store.close()
    with sqlite3.connect(tmp_path / FILE_NAME) as connection:
        connection.execute(f"PRAGMA user_version = {TABLE_VERSION + 1}")
    assert Store(tmp_path, "read").get(_key(1), SMALL) is None
    assert Store(tmp_path).get(_key(1), SMALL) is None  # set aside, a new table made
    assert (tmp_path / f"{FILE_NAME}.damaged").is_file()


def _write_many(directory: str, start: int, count: int) -> None:
    store = Store(Path(directory), run_id="shared")
    for i in range(start, start + count):
        store.put(_key(i), {"i": i}, SMALL)
    store.close()


def test_processes_write_one_table_at_once(tmp_path: Path) -> None:
    """xdist workers share the store: each writes its batches while the others do."""
    context = multiprocessing.get_context("spawn")
    count = 3 * BATCH + 7
    workers = [
        context.Process(target=_write_many, args=(str(tmp_path), w * count, count))
        for w in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    reader = Store(tmp_path, "read")
    assert [reader.get(_key(i), SMALL) for i in range(3 * count)] == [
        {"i": i} for i in range(3 * count)
    ]


def _rows(directory: Path) -> dict[str, Any]:
    if not (directory / FILE_NAME).is_file():
        return {}
    with sqlite3.connect(directory / FILE_NAME) as connection:
        return dict(connection.execute("SELECT key, value FROM entries").fetchall())


def _put_in_copy(store: Store) -> None:
    store.put(_key(7), 7, SMALL)  # no close: a pool's process ends without one


def test_a_store_sent_to_another_process_writes_its_rows_there(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.put(_key(1), 1, SMALL)
    worker = multiprocessing.get_context("spawn").Process(target=_put_in_copy, args=(store,))
    worker.start()
    worker.join(timeout=120)
    assert worker.exitcode == 0
    store.close()
    assert Store(tmp_path).get(_key(7), SMALL) == 7 and Store(tmp_path).get(_key(1), SMALL) == 1


def test_a_table_another_process_holds_locked_is_waited_for_not_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """xdist workers starting together all make the table; one that found it locked took it
    for damaged and set it aside, with the rows another worker had written there."""
    first = Store(tmp_path)
    first.put(_key(1), 1, SMALL)
    first.close()
    monkeypatch.setattr(table, "BUSY_TIMEOUT", 0.01)
    monkeypatch.setattr(table, "OPEN_ATTEMPTS", 2)
    monkeypatch.setattr(table, "OPEN_BACKOFF", 0.0)
    holder = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of making the table
    second = Store(tmp_path)
    second.put(_key(2), 2, SMALL)
    second._table.flush()  # type: ignore[union-attr]
    assert second.get(_key(1), SMALL) is None  # cannot be read now: a miss, nothing more
    holder.execute("ROLLBACK")
    holder.close()
    assert not (tmp_path / f"{FILE_NAME}.damaged").exists()
    second.close()  # the kept row is written now that the table opens
    reader = Store(tmp_path)
    assert reader.get(_key(1), SMALL) == 1 and reader.get(_key(2), SMALL) == 2
