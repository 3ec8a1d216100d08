"""LaTeX read as plain text, as OmniDocBench v1.6 reads it (its ``safe_latex_to_text``).

OmniDocBench turns LaTeX into text with pylatexenc's ``LatexNodes2Text`` (inline math in text
blocks, formula fragments it compares with text), but only after guards that keep text which
merely looks like LaTeX: no backslash, brace or dollar (returned as it is, stripped); prose
with a stray command; unbalanced braces, environments, ``\\left``/``\\right`` or math
delimiters; over 8,000 characters. Where a guard fires, or pylatexenc fails, the caller's
`fallback` stands.

Its own code converts in a child process with a 30 s timeout. Here the conversion runs in this
process and the deadline is checked when it returns: a conversion that took over 30 s gives the
fallback, as the reference's timeout would, and is counted (`slow_conversions`). Results are
cached (the matcher converts the same fragments many times); pylatexenc 2.10 is the version
OmniDocBench pins, and the one that gives its text.

OmniDocBench's environment switches (``OMNIDOCBENCH_DISABLE_LATEX_TO_TEXT``,
``OMNIDOCBENCH_MAX_LATEX_INPUT_LEN``, ...) are not read: the numbers are those of its defaults,
the ones its leaderboard is made with.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Final

from pytest_doceval.kinds.omnidocbench.page_log import note_deadline

CONVERSION_DEADLINE_S: Final = 30.0  # OmniDocBench's OMNIDOCBENCH_LATEX_TO_TEXT_TIMEOUT_SEC
MAX_TEXT_LATEX: Final = 8000  # its OMNIDOCBENCH_MAX_LATEX_INPUT_LEN

_ENV: Final = re.compile(r"\\(begin|end)\{([^{}]+)\}")
_LEFT: Final = re.compile(r"\\left\b")
_RIGHT: Final = re.compile(r"\\right\b")
_UNESCAPED_DOLLAR: Final = re.compile(r"(?<!\\)\$")
_LATEX_SIGNAL: Final = re.compile(r"\\[A-Za-z]+|[_^{}$]|\\[\[\]()]]|&|%|#")
_NATURAL_WORD: Final = re.compile(r"[A-Za-z]{3,}")
_COMMAND: Final = re.compile(r"\\[A-Za-z]+")
_PLAIN_NOISE_COMMANDS: Final = (
    "\\frac",
    "\\sqrt",
    "\\left",
    "\\right",
    "\\begin",
    "\\end",
    "\\sum",
    "\\int",
    "\\alpha",
    "\\beta",
)
PYLATEXENC_LOGGERS: Final = (
    "pylatexenc",
    "pylatexenc.latexwalker",
    "pylatexenc.latexwalker._walker",
    "pylatexenc.macrospec",
    "pylatexenc.macrospec._environmentbodyparser",
)


def braces_balanced(line: str) -> bool:
    """Every ``{`` closed in order; an escaped brace, bracket or parenthesis does not count."""
    depth = 0
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line) and line[i + 1] in "{}[]()":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def environments_balanced(line: str) -> bool:
    stack: list[str] = []
    for match in _ENV.finditer(line):
        kind, name = match.group(1), match.group(2)
        if kind == "begin":
            stack.append(name)
        elif not stack or stack.pop() != name:
            return False
    return not stack


def _math_delimiters_balanced(line: str) -> bool:
    return (
        line.count("\\(") == line.count("\\)")
        and line.count("\\[") == line.count("\\]")
        and len(_UNESCAPED_DOLLAR.findall(line)) % 2 == 0
    )


def unbalanced_latex(line: str, *, math: bool, max_len: int) -> bool:
    """OmniDocBench's ``likely_bad_latex``: too long, unbalanced braces or environments, and
    for math also unbalanced ``\\left``/``\\right`` or math delimiters."""
    stripped = line.strip()
    if not stripped:
        return False
    if max_len > 0 and len(stripped) > max_len:
        return True
    if not braces_balanced(stripped) or not environments_balanced(stripped):
        return True
    if math:
        left_right = len(_LEFT.findall(stripped)) == len(_RIGHT.findall(stripped))
        return not (left_right and _math_delimiters_balanced(stripped))
    return False


def _prose_with_little_latex(stripped: str) -> bool:
    """``looks_like_plaintext_formula_noise``: a long run of words with hardly any LaTeX."""
    if len(stripped) < 32 or len(_LATEX_SIGNAL.findall(stripped)) > 2:
        return False
    if any(c in stripped for c in "{}$^_") or any(c in stripped for c in _PLAIN_NOISE_COMMANDS):
        return False
    return len(_NATURAL_WORD.findall(stripped)) >= 6 and stripped.count(" ") >= 5


def _weak_latex(stripped: str) -> bool:
    """``looks_like_weak_latex_input`` for math: text that is not worth parsing as LaTeX."""
    if stripped in {"\\", "\\\\"}:
        return True
    commands = len(_COMMAND.findall(stripped))
    words = len(_NATURAL_WORD.findall(stripped))
    signals = sum(ch in "{}$^_=&%#" for ch in stripped)
    if stripped.endswith("\\") and not stripped.endswith("\\\\") and commands == 0:
        return True
    if "\\" in stripped and commands == 0 and signals == 0:
        return True
    if words >= 2 and commands == 0 and signals <= 1:
        return True
    return words >= 4 and commands <= 1 and signals <= 2


@contextlib.contextmanager
def quiet_pylatexenc() -> Iterator[None]:
    """pylatexenc logs a warning per parse problem; OmniDocBench raises its loggers to ERROR."""
    loggers = [logging.getLogger(name) for name in PYLATEXENC_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


_TIMED_OUT: Final = "\0timed out"


@lru_cache(maxsize=1)
def _converter() -> Any:
    """One ``LatexNodes2Text`` with its default context (building the context takes ms; the
    converter keeps no state between calls)."""
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text()


@lru_cache(maxsize=1 << 16)
def _converted(stripped: str) -> str | None:
    """pylatexenc's text of `stripped`, None when it fails, `_TIMED_OUT` past the deadline."""
    start = time.monotonic()
    try:
        with quiet_pylatexenc():
            text: str = _converter().latex_to_text(stripped)
    except Exception:  # pylatexenc raises many kinds on malformed input; OmniDocBench's too
        return None
    if time.monotonic() - start > CONVERSION_DEADLINE_S:
        return _TIMED_OUT
    return text


def latex_to_text(latex: str, fallback: str) -> str:
    """`latex` as text, or `fallback` where OmniDocBench would keep it (module docstring)."""
    stripped = latex.strip()
    if not stripped:
        return fallback
    if not any(c in stripped for c in "\\{}$"):
        return stripped
    if _prose_with_little_latex(stripped) or _weak_latex(stripped):
        return fallback
    if unbalanced_latex(stripped, math=True, max_len=MAX_TEXT_LATEX):
        return fallback
    text = _converted(stripped)
    if text == _TIMED_OUT:
        note_deadline(f"LaTeX-to-text conversion over {CONVERSION_DEADLINE_S:g} s")
        return fallback
    return fallback if text is None else text
