"""How one extracted value is read and compared (seed 004, "기본 필드 비교 함수").

Three readings of a leaf value, each with its match rule:

* **text** -- `canonical_text`: NFC, whitespace runs collapsed to one space, trimmed (the seed's
  ``normalize_value``; NFC added so that a decomposed Hangul string equals its composed form).
  JSON scalars are written as JSON writes them (``true``, ``null``) and an integral float as an
  integer (``1500000.0`` -> ``1500000``), so that a value's text does not depend on which Python
  type a JSON parser picked. Exact match is equality of these strings; fuzzy match is a
  normalised edit distance (rapidfuzz Levenshtein over the longer length, as the seed's NED)
  at most tau.
* **number** -- `parse_number`: thousands separators (``,``), spaces and currency marks
  (``CURRENCY_MARKS``: ₩, 원, $, €, and the few other common symbols and codes) are removed,
  then the rest must be a plain decimal (``-1234.5``); ``inf``/``nan``/exponents are not
  numbers here. `numeric_match` accepts a relative error at most ``tolerance`` (0 = equal); a
  gold 0 needs a predicted 0. European ``1.234,56`` is not read (ambiguous with ``1,234.56``).
* **date** -- `parse_date` reads ISO ``2024-03-15``, dotted ``2024.03.15``, slashed
  ``2024/03/15``, Korean ``2024년 3월 15일``, day-first ``15/03/2024`` (and ``15-03-24``), and
  English month names (``15 March 2024``, ``Mar 15, 2024``, ``15-Mar-24``), anywhere in the
  string as the seed searches (so ``Date: 15.03.2024 10:00`` compares as its date). For type
  inference a gold string must *be* a date (optionally with a time of day), so that a note
  mentioning one stays a string. A numeric date whose first two numbers could be either day or
  month is read day-first unless ``day_first=False``; a number above 12 decides it. Two-digit
  years follow POSIX ``%y`` (69-99 -> 19xx, 00-68 -> 20xx). Impossible dates (``2024-02-30``)
  are not dates.

When either side does not parse as a number (a date), the match falls back to exact text, as
the seed's ``numeric_match`` and ``date_match`` do. `infer_kind` reads an untyped gold value
as the seed does, so an id made only of digits (an invoice number, a postcode) is a number
and ``00123`` matches ``123``; a suite names such fields ``string`` in its field types.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import unicodedata
from typing import Any, Final, Literal

from rapidfuzz.distance import Levenshtein

ValueKind = Literal["string", "number", "date"]
VALUE_KINDS: Final = ("string", "number", "date")

# The seed strips ₩ and 원; the issue adds $ and €. The others are the same kind of mark and
# cost nothing: a mark is never part of a number's value.
CURRENCY_MARKS: Final = ("₩", "원", "$", "€", "£", "¥", "KRW", "USD", "EUR", "RM")
_CURRENCY = re.compile("|".join(re.escape(mark) for mark in CURRENCY_MARKS), re.IGNORECASE)
_MARK = r"(?:" + _CURRENCY.pattern + r")?"
# A sign, a currency mark before or after, digits with separators: "-$1,234.50", "1 500 000원".
_NUMBER_TEXT = re.compile(
    rf"\s*(?P<sign>[+-]?)\s*{_MARK}\s*(?P<sign2>[+-]?)(?P<digits>[\d,\s]*\.?\d*)\s*{_MARK}\s*",
    re.IGNORECASE,
)
_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
_SPACE = re.compile(r"\s+")

_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
_Y_M_D = re.compile(
    r"(?<!\d)(?P<y>\d{4})\s*[-./년]\s*(?P<m>\d{1,2})\s*[-./월]\s*(?P<d>\d{1,2})(?!\d)\s*일?"
)
_COMPACT = re.compile(r"(?<!\d)(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})(?!\d)")
_A_B_Y = re.compile(
    r"(?<!\d)(?P<a>\d{1,2})\s*[-./]\s*(?P<b>\d{1,2})\s*[-./]\s*(?P<y>\d{4}|\d{2})(?!\d)"
)
_D_MON_Y = re.compile(
    r"(?<!\d)(?P<d>\d{1,2})(?:st|nd|rd|th)?[\s\-/.,]*"
    + _MONTH
    + r"[\s\-/.,]*(?P<y>\d{4}|\d{2})(?!\d)",
    re.IGNORECASE,
)
_MON_D_Y = re.compile(
    r"(?<![a-z])"
    + _MONTH
    + r"[\s\-/.]*(?P<d>\d{1,2})(?:st|nd|rd|th)?,?[\s\-/.]*(?P<y>\d{4})(?!\d)",
    re.IGNORECASE,
)


def canonical_text(value: Any) -> str:
    """The text a value is compared as (see the module docstring); ``None`` is ``""``."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    elif isinstance(value, int | float):
        text = repr(value)
    else:  # a container: its JSON, keys sorted, so that equal values read alike
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = unicodedata.normalize("NFC", text)
    return _SPACE.sub(" ", text).strip()


def text_ned(pred: Any, gold: Any) -> float:
    """The seed's NED of two values' canonical texts: Levenshtein distance over the longer
    length (rapidfuzz), 0.0 for equal texts, two empty ones included."""
    return Levenshtein.normalized_distance(canonical_text(pred), canonical_text(gold))


def parse_number(value: Any) -> float | None:
    """The number a value states, or ``None``. Booleans are not numbers."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    match = _NUMBER_TEXT.fullmatch(unicodedata.normalize("NFKC", value))
    if match is None or (match["sign"] and match["sign2"]):
        return None
    digits = _SPACE.sub("", match["digits"]).replace(",", "")
    if not _PLAIN_NUMBER.fullmatch(digits):
        return None
    return -float(digits) if "-" in (match["sign"], match["sign2"]) else float(digits)


def looks_numeric(value: Any) -> bool:
    """Whether an untyped gold value is read as a number: one that `parse_number` reads (a JSON
    number, or digits with separators and currency marks only, as the seed infers)."""
    return parse_number(value) is not None


def numeric_match(pred: Any, gold: Any, tolerance: float = 0.0) -> bool:
    """Relative error ``|pred - gold| / |gold|`` at most `tolerance`; exact text otherwise."""
    p, g = parse_number(pred), parse_number(gold)
    if p is None or g is None:
        return canonical_text(pred) == canonical_text(gold)
    if g == 0:
        return p == 0
    return abs(p - g) / abs(g) <= tolerance


def _year(text: str) -> int:
    year = int(text)
    if len(text) == 2:  # POSIX %y pivot
        year += 1900 if year >= 69 else 2000
    return year


def _make(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _find_date(
    text: str, day_first: bool, compact: bool
) -> tuple[dt.date | None, re.Match[str]] | None:
    """The first date form found in `text`, read (None if impossible), and where it was."""
    if match := _Y_M_D.search(text):
        return _make(int(match["y"]), int(match["m"]), int(match["d"])), match
    if match := _D_MON_Y.search(text):
        return _make(_year(match["y"]), _MONTHS[match["mon"].lower()], int(match["d"])), match
    if match := _MON_D_Y.search(text):
        return _make(int(match["y"]), _MONTHS[match["mon"].lower()], int(match["d"])), match
    if match := _A_B_Y.search(text):
        a, b, year = int(match["a"]), int(match["b"]), _year(match["y"])
        day_month = a > 12 or (day_first and b <= 12)
        return (_make(year, b, a) if day_month else _make(year, a, b)), match
    if compact and (match := _COMPACT.search(text)):
        return _make(int(match["y"]), int(match["m"]), int(match["d"])), match
    return None


def parse_date(value: Any, *, day_first: bool = True, compact: bool = True) -> dt.date | None:
    """The calendar date a value states, or ``None`` (see the module docstring). `compact`
    also reads ``20240315``."""
    if not isinstance(value, str):
        return None
    found = _find_date(unicodedata.normalize("NFKC", value), day_first, compact)
    return None if found is None else found[0]


# What may follow a date in a value that is a date: a time of day.
_TIME = re.compile(r"\s*(?:T|\s)?\s*(?:\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:[AaPp][Mm])?)?\s*")


def looks_like_date(value: Any) -> bool:
    """Whether an untyped gold value is read as a date: a string that is one date (with
    separators, so that an id of 8 digits is not one), optionally followed by a time. A longer
    text that mentions a date is a string."""
    if not isinstance(value, str):
        return False
    text = unicodedata.normalize("NFKC", value).strip()
    found = _find_date(text, True, False)
    if found is None or found[0] is None:
        return False
    match = found[1]
    return match.start() == 0 and _TIME.fullmatch(text, match.end()) is not None


def date_match(pred: Any, gold: Any, *, day_first: bool = True) -> bool:
    """Same calendar date when both parse; exact text otherwise."""
    p, g = parse_date(pred, day_first=day_first), parse_date(gold, day_first=day_first)
    if p is None or g is None:
        return canonical_text(pred) == canonical_text(gold)
    return p == g


def infer_kind(gold: Any) -> ValueKind:
    """The seed's type inference from a gold value: a JSON number is a number; a string is a
    date if it reads as one (checked first, as ``2024.03.15`` also looks numeric), a number if
    it is only digits, separators and currency marks, else a string."""
    if isinstance(gold, str) and looks_like_date(gold):
        return "date"
    if looks_numeric(gold):
        return "number"
    return "string"
