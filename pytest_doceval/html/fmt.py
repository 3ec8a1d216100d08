"""Number formatting and defensive access to report values: the rules every part of the page
shares, so a number or a string looks the same everywhere. Escaping is not done here by hand:
the page is built from ``markupsafe.Markup`` templates, which escape every plain ``str`` they
are given and never escape a ``Markup`` twice."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_doceval.gates import format_pp

# What a number that is missing, NaN or infinite shows as (the JSON report writes NaN as null).
NA = "n/a"


def as_text(value: Any) -> str:
    """A report value as text: None shows as nothing (a ``Markup`` template would print
    ``None``). The template it goes into escapes it."""
    return "" if value is None else str(value)


def num(value: Any) -> float | None:
    """A finite number from the report, or None (bools, strings, NaN and infinities are not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def fmt_pp(value: Any) -> str:
    """A change in percentage points (an MDE); ``n/a`` where none was found (too few cases
    or discordances: the JSON cannot hold infinity)."""
    x = num(value)
    return NA if x is None else format_pp(x)


def fmt(value: Any, digits: int = 4) -> str:
    """A metric value with fixed decimals; ``n/a`` when absent or not finite."""
    x = num(value)
    return NA if x is None else f"{x:.{digits}f}"


def fmt_signed(value: Any, digits: int = 4) -> str:
    """A difference with its sign; one that rounds to zero is shown unsigned."""
    x = num(value)
    if x is None:
        return NA
    return f"{0:.{digits}f}" if round(x, digits) == 0 else f"{x:+.{digits}f}"


def fmt_p(value: Any) -> str:
    """A p-value: three decimals, ``<0.001`` below that."""
    x = num(value)
    if x is None:
        return NA
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def fmt_int(value: Any) -> str:
    x = num(value)
    return NA if x is None else f"{round(x):,}"


def fmt_ci(entry: Mapping[str, Any], signed: bool = True) -> str:
    """``[low, high]`` of an entry's ``ci_low``/``ci_high``."""
    f = fmt_signed if signed else fmt
    return f"[{f(entry.get('ci_low'))}, {f(entry.get('ci_high'))}]"


def fmt_cell(value: Any) -> str:
    """Any scalar from generic report data (an analysis or a view nobody wrote a renderer for)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return NA
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4f}"
    return json.dumps(plain(value), ensure_ascii=False)


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    """A list from the report; None, a string or a mapping give an empty list."""
    return list(value) if isinstance(value, list | tuple) else []


def mappings(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in items(value) if isinstance(item, Mapping)]


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(item) for item in items(value) if item is not None]


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def plain(value: Any, digits: int | None = None) -> Any:
    """JSON-safe builtins: non-finite floats become None (JSON has no NaN, and the report
    writes them as null too); with `digits`, floats keep that many significant digits."""
    # Exact builtin types first: a page of 200,000 rows calls this on every number they hold.
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if value - value != 0.0:  # NaN or infinite
            return None
        return float(f"{value:.{digits}g}") if digits else value
    if kind is dict:
        return {k if type(k) is str else str(k): plain(v, digits) for k, v in value.items()}
    if kind is list:
        return [plain(v, digits) for v in value]
    if isinstance(value, Mapping):
        return {str(k): plain(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v, digits) for v in value]
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.{digits}g}") if digits else value
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


def script_json(data: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` escaped, so
    ``</script>`` in data cannot end the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def tabular(value: Any) -> tuple[list[str], list[list[Any]]] | None:
    """Generic report data as a table, when it has that shape: a list of flat dicts (one row
    each), a dict of flat dicts (one row per key) or a flat dict (key, value); else None
    (shown as JSON). One rule for analyses and views without a renderer of their own."""
    if isinstance(value, list | tuple) and value:
        if all(isinstance(v, Mapping) and all(map(is_scalar, v.values())) for v in value):
            head = unique(str(k) for v in value for k in v)
            return head, [[mapping(v).get(k) for k in head] for v in value]
        return None
    if isinstance(value, Mapping) and value:
        if all(is_scalar(v) for v in value.values()):
            return ["key", "value"], [[str(k), v] for k, v in value.items()]
        if all(isinstance(v, Mapping) and all(map(is_scalar, v.values())) for v in value.values()):
            head = unique(str(k) for v in value.values() for k in v)
            return ["", *head], [[str(k), *(v.get(c) for c in head)] for k, v in value.items()]
    return None


def pretty_json(value: Any) -> str:
    return json.dumps(plain(value), ensure_ascii=False, indent=2)
