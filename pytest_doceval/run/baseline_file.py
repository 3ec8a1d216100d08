"""How ``baselines/<suite>.json`` lies on disk: written so a pull request's diff reads, and read
in time and memory that stay small at 100,000 cases.

The file is one JSON document, ``{"entries": {key: entry}, "schema", "scoring_id", "suite"}``
(sorted keys), in one of two layouts any JSON reader reads alike:

* **indented** (up to `INDENTED_ENTRIES` entries): two-space indent, one number per line, so a
  diff shows the very number that moved;
* **an entry a line** (beyond): each entry on one line of its own, keys sorted. Indented, a
  documents suite of 100,000 cases and two systems is 8 million lines and 244 MB, 47 s to write
  and 12 s and 2.3 GB to read with the standard `json`; an entry a line is 200,000 lines and
  about 70 % of the bytes, written with the C encoder, and read a line at a time. A diff still
  shows one line per moved (case, system), and ``git diff --word-diff`` the number in it.

Reading keeps each entry as its JSON text (`BaselineEntries`): a test parses its own entry
when it asks for it, so a run holds the file's bytes, not 200,000 dictionaries. A file in the
entry-a-line layout is read a line at a time (the key decoded, the entry kept as text); any
other file, or one whose lines do not fit that layout (edited by hand, a merge's conflict
markers, cut short), is parsed whole, which says where it is broken. An entry that is not
valid JSON is that test's error, naming the file and the key.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_doceval.atomic import atomic_file, stable_json
from pytest_doceval.errors import SuiteConfigError

# Beyond this many entries a baseline is written an entry a line (see the module docstring):
# a file a reviewer reads whole stays one number a line.
INDENTED_ENTRIES = 2_000

_OPENING = ("{", '  "entries": {')
_ENTRY_INDENT = "    "
_ENTRY_START = _ENTRY_INDENT + '"'
_KEY = json.JSONDecoder()


def entry_text(entry: Mapping[str, Any]) -> str:
    """An entry's JSON text as the entry-a-line layout writes it (sorted keys)."""
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


class BaselineEntries:
    """A baseline's entries by key, each kept as its JSON text until a test asks for it."""

    def __init__(self, path: Path, texts: dict[str, str]) -> None:
        self.path = path
        self.texts = texts

    def __contains__(self, key: object) -> bool:
        return key in self.texts

    def __len__(self) -> int:
        return len(self.texts)

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry of `key`, parsed; None when there is none; a clear error when its text is
        not an entry."""
        text = self.texts.get(key)
        if text is None:
            return None
        try:
            entry = json.loads(text)
        except ValueError as exc:
            entry = exc
        if not isinstance(entry, dict):
            raise SuiteConfigError(
                f"{self.path}: the entry of {key} is not a JSON object ({entry}); fix or delete "
                "its line, then run pytest --doceval --doceval-update"
            )
        return entry


def read_baseline(path: Path) -> tuple[dict[str, Any], BaselineEntries]:
    """The file's header (every key but ``entries``) and its entries; `SuiteConfigError` when
    it is not JSON or has no ``entries`` object."""
    try:
        with path.open(encoding="utf-8") as lines:  # "\r\n" read as "\n"
            found = _read_entry_lines(lines)
        if found is not None:
            header, texts = found
            return header, BaselineEntries(path, texts)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteConfigError(f"{path}: unreadable baseline ({exc})") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SuiteConfigError(f"{path}: unreadable baseline ({exc})") from exc
    if not isinstance(data, dict):
        raise SuiteConfigError(f"{path}: not a baseline (a JSON object)")
    entries = data.pop("entries", None)
    if not isinstance(entries, dict):
        raise SuiteConfigError(f"{path}: 'entries' must be an object")
    texts = {
        str(k): entry_text(v) if isinstance(v, dict) else json.dumps(v) for k, v in entries.items()
    }
    return data, BaselineEntries(path, texts)


def _read_entry_lines(lines: Iterator[str]) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The header and entry texts of a file in the entry-a-line layout, read a line at a time
    (a 100,000-case file is never held whole); None when it is not one (then it is parsed
    whole)."""
    if tuple(line.rstrip("\n") for line in itertools.islice(lines, 2)) != _OPENING:
        return None
    texts: dict[str, str] = {}
    line = ""
    for line in lines:
        if not line.startswith(_ENTRY_START):
            break
        try:
            key, end = _KEY.raw_decode(line, len(_ENTRY_INDENT))
        except ValueError:
            return None
        value = line[end + 2 :].rstrip("\n").removesuffix(",")
        if not isinstance(key, str) or line[end : end + 2] != ": " or not value.startswith("{"):
            return None
        texts[key] = value
    if line.rstrip("\n") not in ("  },", "  }"):
        return None
    try:
        header = json.loads("{" + "".join(lines))
    except ValueError:
        return None
    return (header, texts) if isinstance(header, dict) else None


def write_baseline(path: Path, header: Mapping[str, Any], entries: Mapping[str, str]) -> None:
    """Write the baseline atomically: `header` and `entries` (entry texts, `entry_text`), in
    the layout their number calls for (the module docstring)."""
    if len(entries) <= INDENTED_ENTRIES:
        data = {**header, "entries": {k: json.loads(v) for k, v in entries.items()}}
        with atomic_file(path) as out:
            out.write(stable_json(data).encode("utf-8"))
        return
    keys = sorted(entries)
    with atomic_file(path) as out:
        out.write(("\n".join(_OPENING) + "\n").encode("utf-8"))
        for n, key in enumerate(keys):
            end = ",\n" if n < len(keys) - 1 else "\n"
            line = f"{_ENTRY_INDENT}{json.dumps(key, ensure_ascii=False)}: {entries[key]}{end}"
            out.write(line.encode("utf-8"))
        # The header's keys after "entries" (they sort after it), as the indented layout has them.
        out.write(("  },\n" + stable_json(dict(header)).removeprefix("{\n")).encode("utf-8"))
