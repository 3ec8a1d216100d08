"""What a check returns (`FactResult`), and a page output prepared once for many checks.

A page has about ten facts; `PageOutput` normalises the output, parses its tables and finds its
equations once, lazily, however many facts are checked against it. `check` accepts a plain
string too and wraps it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pytest_doceval.kinds.facts.normalise import normalise_text

if TYPE_CHECKING:
    from pytest_doceval.kinds.facts.grid import TableData

__all__ = ["FactResult", "PageOutput", "as_output", "quote", "quote_pair"]


@dataclass(frozen=True)
class FactResult:
    """The verdict on one fact.

    `passed` is None when the fact was skipped (`explanation` says why). `score` is, for one
    output, the check's similarity in [0, 1] (present/absent: best partial alignment; table: the
    best candidate cell's weakest similarity; math: best equation similarity; order, baseline:
    1 or 0); for repeats (`check_repeats`), the fraction of repeats that passed, olmOCR-bench's
    per-test average, and `repeats` holds each repeat's own result. `caveat` says why a pass,
    olmOCR-bench's verdict, is to be read with care (`checks.SHORTER_OUTPUT`); empty otherwise.
    """

    passed: bool | None
    score: float
    explanation: str
    repeats: tuple[FactResult, ...] = ()
    caveat: str = ""

    @property
    def skipped(self) -> bool:
        return self.passed is None

    @property
    def pass_fraction(self) -> float | None:
        """Fraction of repeats passed (1.0/0.0 for a single output); None when skipped."""
        if self.passed is None:
            return None
        return self.score if self.repeats else float(self.passed)

    def to_dict(self) -> dict[str, Any]:
        """Builtins only, for report rows."""
        out: dict[str, Any] = {
            "passed": self.passed,
            "score": float(self.score),
            "explanation": self.explanation,
        }
        if self.repeats:
            out["repeats"] = [r.to_dict() for r in self.repeats]
        if self.caveat:
            out["caveat"] = self.caveat
        return out


# Math delimiters in olmOCR-bench's order; each kind's matches are removed before the next kind
# is searched, so the inside of \[..\] is never found again as $..$.
_MATH_DELIMITERS = (
    re.compile(r"\\\((.+?)\\\)", re.DOTALL),
    re.compile(r"\\\[(.+?)\\\]", re.DOTALL),
)
_DOLLAR_DELIMITERS = (
    re.compile(r"\$\$(.+?)\$\$", re.DOTALL),
    re.compile(r"\$(.+?)\$", re.DOTALL),
)


class PageOutput:
    """One page output with its derived forms computed on first use and kept."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def normalised(self) -> str:
        return normalise_text(self.text)

    @cached_property
    def normalised_lower(self) -> str:
        return self.normalised.lower()

    @cached_property
    def markdown_tables(self) -> list[TableData]:
        from pytest_doceval.kinds.facts.markdown_tables import parse_markdown_tables

        return parse_markdown_tables(self.text)

    @cached_property
    def html_tables(self) -> list[TableData]:
        from pytest_doceval.kinds.facts.html_tables import parse_html_tables

        return parse_html_tables(self.text)

    def equations(self, *, include_dollar: bool = True) -> list[str]:
        """The output's delimited equations, stripped (olmOCR-bench's extraction)."""
        key = "_equations_dollar" if include_dollar else "_equations_plain"
        cached: list[str] | None = self.__dict__.get(key)
        if cached is None:
            patterns = _MATH_DELIMITERS + (_DOLLAR_DELIMITERS if include_dollar else ())
            content = self.text
            found: list[str] = []
            for pattern in patterns:
                found.extend(m.strip() for m in pattern.findall(content))
                content = pattern.sub("", content)
            cached = self.__dict__[key] = found
        return cached


def as_output(output: str | PageOutput) -> PageOutput:
    return output if isinstance(output, PageOutput) else PageOutput(output)


_SPACES = re.compile(r"\s+")


def quote(text: str | None, limit: int = 60) -> str:
    """`text` on one line, clipped to `limit` characters, in single quotes, for explanations."""
    if text is None:
        return "(none)"
    flat = _SPACES.sub(" ", text)
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return "'" + flat.replace("'", "\\'") + "'"


def quote_pair(expected: str, found: str, limit: int = 60) -> tuple[str, str]:
    """Both strings quoted as by `quote`, but, when they share a prefix longer than the space
    there is, both start a little before their first difference, so the difference shows."""
    a, b = _SPACES.sub(" ", expected), _SPACES.sub(" ", found)
    same = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        same += 1
    start = same - 15 if same > limit - 15 else 0
    if start <= 0:
        return quote(a, limit), quote(b, limit)
    return quote("…" + a[start:], limit), quote("…" + b[start:], limit)
