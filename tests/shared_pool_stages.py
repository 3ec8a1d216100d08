"""Stage calls for tests/test_shared_pool.py: module-level, so a pool process unpickles them."""

from __future__ import annotations

from pathlib import Path


def count_run(log: str, text: str) -> str:
    """Appends a line to `log` each time it runs (in whatever process), returns `text` upper."""
    with Path(log).open("a", encoding="utf-8") as file:
        file.write(text + "\n")
    return text.upper()


def fail_once(log: str) -> str:
    """Raises on its first run (a line in `log` says it ran), answers on the next."""
    path = Path(log)
    if not path.exists():
        path.write_text("ran\n", encoding="utf-8")
        raise ValueError("first run fails")
    return "second run"
