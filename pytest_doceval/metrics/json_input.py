"""JSON inputs of the extraction metrics: what counts as JSON, how a place in it is named, and
the error raised for an input that cannot be scored.

Paths are written the way jsonschema's ``json_path`` writes them, so that one field has one
name in the field verdicts and the schema errors: ``$`` is the document,
``$.total`` a key, ``$.items[2].code`` a key inside the third element of a list, and a key that
is not a plain identifier is quoted: ``$['unit price']``. A field's *name* (used for per-field
accuracy, weights and types) is its path without the ``$.`` and with the list indices dropped:
``items[].code``; the document itself is named ``$``. Both are built while walking the value,
never parsed back from a string, so a key holding ``.`` or ``[`` cannot confuse them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Final

from pytest_doceval.errors import CaseInputError

ROOT: Final = "$"
# The same rule as jsonschema's json_path, so that both name a key alike.
_IDENTIFIER = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*")
JSON_SCALARS: Final = (str, int, float, bool, type(None))


class ExtractionInputError(CaseInputError, ValueError):
    """A gold or predicted value that cannot be scored; the message names the place in it."""


def _key_step(key: str) -> str:
    if _IDENTIFIER.fullmatch(key):
        return f".{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"['{escaped}']"


@dataclass(frozen=True, slots=True)
class Place:
    """Where a value sits: its path, its field name and its depth (seed 004's ``depth``: a
    top-level field is 0 and each key or list index below it adds 1, so ``$.items[0].code`` is
    2; the document itself is 0 too)."""

    path: str
    name: str
    depth: int

    def key(self, key: str) -> Place:
        step = _key_step(key)
        if self.path == ROOT:
            return Place(ROOT + step, step.removeprefix("."), 0)
        return Place(self.path + step, self.name + step, self.depth + 1)

    def index(self, index: int) -> Place:
        name = "[]" if self.path == ROOT else self.name + "[]"
        depth = 0 if self.path == ROOT else self.depth + 1
        return Place(f"{self.path}[{index}]", name, depth)


DOCUMENT: Final = Place(ROOT, ROOT, 0)


def _first_problem(value: Any) -> Any | None:
    """The first value that is not JSON, or None; walks without building paths (the common
    case is valid JSON, and names are only needed for the error)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                if not isinstance(key, str):
                    return node
                stack.append(child)
        elif isinstance(node, list):
            stack.extend(node)
        elif not isinstance(node, JSON_SCALARS) or (
            isinstance(node, float) and not math.isfinite(node)
        ):
            return node
    return None


def check_json(value: Any, what: str) -> None:
    """Raise `ExtractionInputError` naming `what` and the path of the first value that is not
    JSON (a str/int/float/bool/None scalar, a list, or a dict with string keys). Non-finite
    numbers are not JSON either."""
    bad = _first_problem(value)
    if bad is None:
        return
    stack = [(value, DOCUMENT)]
    while stack:  # find where it is
        node, where = stack.pop()
        if node is bad and isinstance(node, dict):
            key = next(k for k in node if not isinstance(k, str))
            raise ExtractionInputError(f"{what}: key {key!r} at {where.path} is not a string")
        if node is bad:
            if isinstance(node, float):
                raise ExtractionInputError(
                    f"{what}: value at {where.path} is {node}, not a JSON number"
                )
            raise ExtractionInputError(
                f"{what}: value at {where.path} is a {type(node).__name__}, which JSON cannot hold"
            )
        if isinstance(node, dict):
            stack.extend((child, where.key(k)) for k, child in node.items() if isinstance(k, str))
        elif isinstance(node, list):
            stack.extend((child, where.index(i)) for i, child in enumerate(node))
