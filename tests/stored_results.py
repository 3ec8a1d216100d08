"""The stored results of a project's store (rows of its table, `pytest_doceval.store.table`),
read and tampered with the way a user's hand or a half-synced disk would: plain SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pytest_doceval.store.table import FILE_NAME


def stored_results(cache: Path) -> dict[str, str]:
    """Every stored result's key and encoded value."""
    with sqlite3.connect(cache / FILE_NAME) as connection:
        rows = connection.execute("SELECT key, value FROM entries WHERE codec = 'result'")
        return dict(rows.fetchall())


def rewrite_result(cache: Path, key: str, value: str) -> None:
    """Replace a stored result's value, leaving its checksum as it was."""
    with sqlite3.connect(cache / FILE_NAME) as connection:
        connection.execute("UPDATE entries SET value = ? WHERE key = ?", (value, key))
