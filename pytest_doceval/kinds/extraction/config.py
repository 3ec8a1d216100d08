"""The extraction kind's ``[suite]`` table, read and checked: every mistake is a
`SuiteConfigError` naming ``suite.toml`` and the key, because a typo must not silently change
what is scored (an unknown key in ``[suite.fields]`` would otherwise drop a weight or a type).

``[suite.entries]`` (mode ``entries``): ``list``, ``name`` and ``set`` are required -- the key of
the list in ``truth.json`` (``""`` for a document that is the list itself) and the two keys of
an entry that d_n and d_p compare -- and ``threshold`` (default 0.5) is the quality a pair needs
to count for entry precision and recall.

``[suite.fields]`` (mode ``fields``, optional): ``types`` (field name -> ``string`` | ``number``
| ``date``), ``weights`` (field name -> weight >= 0), ``unordered`` (list fields paired by
content), ``tau`` (fuzzy text threshold, 0.1), ``numeric_tolerance`` (relative, 0),
``alpha`` (nested accuracy's depth decay, 0.5), ``day_first`` (true) and ``per_field`` (true:
also report ``field_accuracy:<name>`` for every field). These map one to one onto `FieldOptions`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.kinds.extraction.entries import DEFAULT_THRESHOLD, EntryFields
from pytest_doceval.kinds.extraction.llm import read_json_file
from pytest_doceval.kinds.extraction.nested import DEFAULT_ALPHA
from pytest_doceval.kinds.extraction.schema import compile_schema
from pytest_doceval.kinds.extraction.values import VALUE_KINDS
from pytest_doceval.kinds.extraction.verdicts import FieldOptions
from pytest_doceval.metrics.json_input import ExtractionInputError

MODES: Final = ("entries", "fields")
ENTRY_KEYS: Final = frozenset({"list", "name", "set", "threshold"})
FIELD_KEYS: Final = frozenset(
    {"types", "weights", "unordered", "tau", "numeric_tolerance", "alpha", "day_first"}
    | {"per_field"}
)
# Names that become file names and test ids: no path separators, brackets or spaces.
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class EntriesConfig:
    fields: EntryFields
    threshold: float = DEFAULT_THRESHOLD


@dataclass(frozen=True)
class FieldsConfig:
    options: FieldOptions
    per_field: bool = True


def read_names(value: object, key: str, file: Path) -> list[str]:
    """A non-empty list of distinct plain names (``variants``, ``systems``)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise SuiteConfigError(f"{file}: [suite] {key} must be a non-empty list of names")
    bad = [v for v in value if not _SAFE_NAME.fullmatch(v)]
    if bad:
        raise SuiteConfigError(
            f"{file}: {key}: {bad[0]!r} is not a plain name (letters, digits, _.+-)"
        )
    duplicates = sorted({v for v in value if value.count(v) > 1})
    if duplicates:
        raise SuiteConfigError(f"{file}: {key} listed twice: {', '.join(duplicates)}")
    return list(value)


def read_schema(path: Path) -> tuple[dict[str, Any], Any]:
    """``schema.json`` and its compiled validator: a JSON object that is a valid Draft 2020-12
    schema, else the suite fails to load (the schema is the suite's mistake, not a
    prediction's)."""
    schema = read_json_file(path, "JSON Schema", SuiteConfigError)
    if not isinstance(schema, dict):
        raise SuiteConfigError(f"{path}: a JSON Schema must be a JSON object here")
    try:
        return schema, compile_schema(schema)
    except ExtractionInputError as exc:
        raise SuiteConfigError(f"{path}: {exc}") from None


def read_entries(table: object, file: Path) -> EntriesConfig:
    where = f"{file}: [suite.entries]"
    if not isinstance(table, dict):
        raise SuiteConfigError(f'{file}: mode = "entries" needs [suite.entries] (list, name, set)')
    unknown = sorted(set(table) - ENTRY_KEYS)
    missing = sorted({"list", "name", "set"} - set(table))
    if unknown:
        allowed = ", ".join(sorted(ENTRY_KEYS))
        raise SuiteConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {allowed}")
    if missing:
        raise SuiteConfigError(f"{where}: missing {', '.join(missing)}")
    if not all(isinstance(table[k], str) for k in ("list", "name", "set")):
        raise SuiteConfigError(f"{where}: list, name and set must be strings")
    if not table["name"] or not table["set"]:
        raise SuiteConfigError(f"{where}: name and set must not be empty")
    threshold = table.get("threshold", DEFAULT_THRESHOLD)
    if not _number(threshold) or not 0 <= threshold <= 1:
        raise SuiteConfigError(f"{where}: threshold must be a number in [0, 1]")
    fields = EntryFields(table["name"], table["set"], table["list"] or None)
    return EntriesConfig(fields, float(threshold))


def _mapping(table: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise SuiteConfigError(f"{where}: {key} must be a table of field names")
    return dict(value)


def read_fields(table: object, file: Path) -> FieldsConfig:
    where = f"{file}: [suite.fields]"
    if not isinstance(table, dict):
        raise SuiteConfigError(f"{where} must be a table")
    unknown = sorted(set(table) - FIELD_KEYS)
    if unknown:
        allowed = ", ".join(sorted(FIELD_KEYS))
        raise SuiteConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {allowed}")
    types, weights = _mapping(table, "types", where), _mapping(table, "weights", where)
    for name, kind in types.items():
        if kind not in VALUE_KINDS:
            raise SuiteConfigError(f"{where}: types.{name} = {kind!r} is not one of {VALUE_KINDS}")
    for name, weight in weights.items():
        if not _number(weight):
            raise SuiteConfigError(f"{where}: weights.{name} must be a number")
    unordered = table.get("unordered", [])
    if not isinstance(unordered, list) or not all(isinstance(u, str) for u in unordered):
        raise SuiteConfigError(f"{where}: unordered must be a list of field names")
    numbers = {"tau": 0.1, "numeric_tolerance": 0.0, "alpha": DEFAULT_ALPHA}
    for key, default in numbers.items():
        numbers[key] = table.get(key, default)
        if not _number(numbers[key]):
            raise SuiteConfigError(f"{where}: {key} must be a number")
    for key in ("day_first", "per_field"):
        if not isinstance(table.get(key, True), bool):
            raise SuiteConfigError(f"{where}: {key} must be true or false")
    try:
        options = FieldOptions(
            types=types,
            weights={k: float(v) for k, v in weights.items()},
            unordered=frozenset(unordered),
            fuzzy_threshold=float(numbers["tau"]),
            numeric_tolerance=float(numbers["numeric_tolerance"]),
            alpha=float(numbers["alpha"]),
            day_first=table.get("day_first", True),
        )
    except ValueError as exc:  # ranges: FieldOptions is the one home of those rules
        raise SuiteConfigError(f"{where}: {exc}") from None
    return FieldsConfig(options, table.get("per_field", True))
