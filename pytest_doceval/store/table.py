"""The store's table of small entries: values written by the thousand in one run (a test's
stored score) kept as rows of one SQLite file, ``<store>/table.sqlite3``, not a file each.

Why: creating a file costs about 0.19 ms on the ext4 disks of these machines, more than all the
rest of the framework's work for a test (issue 24's per-case overhead), and a warm run opened a
file per test again to read it back. A row costs a few microseconds to write in a batch and
about 15 us to read by its key, whatever the table holds (there is no scan to build an index).

The store's rules hold here as for its files (`pytest_doceval.store.store`): a row keeps the
codec, the run that wrote it, its meta and the SHA-256 of its encoded value, and the store
checks them on every read exactly as for a file entry. What this module adds:

* **Batches.** Rows are kept in memory and written `BATCH` at a time, and at `close` (the
  session closes its store at the end of every process's run, xdist workers included), in one
  short transaction, so processes sharing the file wait for each other's writes only briefly
  (a transaction held open across tests would make them take turns). A process that dies
  loses at most its last unwritten batch: those results are scored again next time.
* **Many processes.** SQLite's write-ahead log lets xdist workers read while another writes;
  a writer waits up to `BUSY_TIMEOUT` for the lock. A table another process holds locked is
  never taken for a damaged one: its rows stay kept and are written when it can be opened.
* **Damage is a miss.** A file that is not a readable table (truncated, overwritten) is set
  aside as ``table.sqlite3.damaged`` and a new one made, when this run writes; a run that only
  reads treats every key as missing. Nothing of it is ever trusted.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE_NAME = "table.sqlite3"
BATCH = 256  # rows written per transaction
BUSY_TIMEOUT = 60.0  # seconds a writer waits for another process's transaction
# Opening tries again when the file is locked in a way SQLite's busy wait does not cover.
OPEN_ATTEMPTS = 8
OPEN_BACKOFF = 0.05  # seconds, times the attempt's number
# Bumped with the columns' meaning; a file of another version is set aside, not read.
TABLE_VERSION = 1


@dataclass(frozen=True)
class Entry:
    """One entry as the store keeps it (the fields of a file entry, less its schema; its meta
    as JSON text, decoded only by a reader that asks for it)."""

    key: str
    codec: str
    run: str
    created: float
    meta: str
    sha256: str
    value: str


class EntryTable:
    """The rows under `directory`/table.sqlite3; opened at the first read or write."""

    def __init__(self, directory: Path, *, writes: bool) -> None:
        self._start(directory / FILE_NAME, writes, batch=BATCH)

    def _start(self, path: Path, writes: bool, *, batch: int) -> None:
        self.path = path
        self.writes = writes
        self._batch = batch
        self._connection: sqlite3.Connection | None = None
        self._opened = False
        self._pending: dict[str, Entry] = {}
        # Tests are scored on pytest's thread, but a stage thread may ask as well.
        self._lock = threading.RLock()

    def __getstate__(self) -> dict[str, Any]:
        # The store goes to process-pool stages: a copy opens its own connection.
        return {"path": self.path, "writes": self.writes}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Nobody closes a copy in another process: it writes each row at once.
        self._start(state["path"], state["writes"], batch=1)

    def get(self, key: str) -> Entry | None:
        with self._lock:
            pending = self._pending.get(key)
            if pending is not None:
                return pending
            found = self._select(
                "SELECT codec, run, created, meta, sha256, value FROM entries WHERE key = ?", key
            )
        if found is None:
            return None
        codec, run, created, meta, sha256, value = found
        return Entry(
            key=key,
            codec=str(codec),
            run=str(run),
            created=float(created) if isinstance(created, (int, float)) else 0.0,
            meta=meta if isinstance(meta, str) else "{}",
            sha256=str(sha256),
            value=value if isinstance(value, str) else "",
        )

    def run_of(self, key: str) -> str | None:
        """The run that wrote the row of `key`, or None when there is none (`get`, less the
        value: a warm run asks it of every test while planning)."""
        with self._lock:
            pending = self._pending.get(key)
            if pending is not None:
                return pending.run
            found = self._select("SELECT run FROM entries WHERE key = ?", key)
        return None if found is None else str(found[0])

    def _select(self, query: str, key: str) -> tuple[Any, ...] | None:
        connection = self._open()
        if connection is None:
            return None
        try:
            found: tuple[Any, ...] | None = connection.execute(query, (key,)).fetchone()
        except sqlite3.Error:
            return None
        return found

    def put(self, entry: Entry) -> None:
        with self._lock:
            self._pending[entry.key] = entry
            if len(self._pending) >= self._batch:
                self.flush()

    def flush(self) -> None:
        """Write the rows kept in memory (in one transaction). Rows stay kept while the table
        cannot be opened (another process holds it locked): `close` tries once more."""
        with self._lock:
            if not self._pending:
                return
            connection = self._open()
            if connection is None:
                return
            rows = [
                (e.key, e.codec, e.run, e.created, e.meta, e.sha256, e.value)
                for e in self._pending.values()
            ]
            self._pending.clear()
            try:
                with connection:  # one transaction: all of the batch or none of it
                    connection.executemany(
                        "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows
                    )
            except sqlite3.Error:
                return  # a cache: the results are scored again next time

    def close(self) -> None:
        with self._lock:
            self.flush()
            self._pending.clear()  # a table that still cannot be opened: scored again
            if self._connection is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._connection.close()
            self._connection, self._opened = None, False

    # -- the file ------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection | None:
        """The connection, opened (and the table made) once; None when there is no usable
        table: none yet in a run that only reads, a damaged one, or one another process
        holds locked (then asked again at the next read or write)."""
        if self._opened:
            return self._connection
        if not self.writes and not self.path.is_file():
            self._opened = True
            return None
        set_aside = False
        for attempt in range(OPEN_ATTEMPTS):
            try:
                self._connection = self._connect()
            except sqlite3.OperationalError:
                # Locked, not damaged: xdist workers starting together all make the table,
                # and setting its journal mode takes the whole file. Setting it aside as
                # damaged lost the rows another worker had written there.
                time.sleep(OPEN_BACKOFF * (attempt + 1))
                continue
            except sqlite3.DatabaseError:  # not a table of this version: damaged
                if not self.writes or set_aside:
                    break
                self._set_aside()
                set_aside = True
                continue
            except sqlite3.Error:
                break
            self._opened = True
            return self._connection
        else:
            return None  # still locked: not given up on
        self._opened = True
        return None

    def _connect(self) -> sqlite3.Connection:
        if self.writes:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            target = str(self.path)
        else:
            target = f"{self.path.as_uri()}?mode=ro"
        connection = sqlite3.connect(
            target,
            timeout=BUSY_TIMEOUT,
            isolation_level=None,  # transactions only where `flush` opens one
            check_same_thread=False,  # guarded by the table's lock
            uri=not self.writes,
        )
        with _closing_on_error(connection):
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if self.writes:
                self._make_table(connection, version)
            elif version != TABLE_VERSION:
                raise sqlite3.DatabaseError(f"table version {version}")
        return connection

    def _make_table(self, connection: sqlite3.Connection, version: int) -> None:
        if version not in (0, TABLE_VERSION):
            raise sqlite3.DatabaseError(f"table version {version}")
        connection.execute("PRAGMA journal_mode = WAL")
        # A cache: no flush to the disk at all (a row cost 40 us with one at each checkpoint,
        # 25 us without). A process that dies loses nothing the OS was given; a machine that
        # loses power may leave a damaged table, which is set aside and scored again.
        connection.execute("PRAGMA synchronous = OFF")
        with connection:
            # A rowid table: rows of 2 kB in a WITHOUT ROWID table cost twice as much to write
            # and three times as much to read (SQLite advises it for small rows only).
            connection.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, codec TEXT, "
                "run TEXT, created REAL, meta TEXT, sha256 TEXT, value TEXT)"
            )
            connection.execute(f"PRAGMA user_version = {TABLE_VERSION}")

    def _set_aside(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.replace(f"{self.path}{suffix}", f"{self.path}.damaged{suffix}")


@contextlib.contextmanager
def _closing_on_error(connection: sqlite3.Connection) -> Iterator[None]:
    try:
        yield
    except BaseException:
        connection.close()
        raise
