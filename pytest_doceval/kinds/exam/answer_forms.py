"""How a multiple-choice answer is written, and where a stated one stands in a model's output:
the token grammar (digits, full-width digits, circled digits, letters) and the readers of
robust-v1's levels (`answers` documents the levels and decides between what they find).

Each reader returns the `Mention`s it finds, in order; none decides anything.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

LETTERS = "ABCDE"

# Characters that glue onto a token and make it part of a longer word or number.
_ALNUM = r"0-9A-Za-z\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A"
_CIRCLED = "\u2460-\u2473\u2776-\u2793"  # ①-⑳, ❶-❿, ➀-➉, ➊-➓


def token_pattern(named: bool) -> str:
    """One option: a digit run, full-width digits, a circled digit or a letter, standing alone
    (not inside a word or a number such as "3.5"). `named` adds the groups `_mention` reads."""

    def group(name: str, body: str) -> str:
        return f"(?P<{name}>{body})" if named else f"(?:{body})"

    return (
        rf"(?<![{_ALNUM}])(?:"
        + group("circled", f"[{_CIRCLED}]")
        + "|"
        + group("fullwidth", r"[\uFF10-\uFF19]+")
        + "|"
        + group("digit", "[0-9]+")
        + "|"
        + group("letter", r"[A-E\uFF21-\uFF25]")
        + r"|(?<=[(\[])"
        + group("lower", "[a-e]")
        + r"(?=[)\]])"
        + rf")(?![{_ALNUM}]|[.,][0-9])"
    )


_TOKEN = token_pattern(named=True)
# Words that may stand between a marker and its answer: "answer is option (3)", "정답은 보기 ③".
FILLER = (
    r"(?:\s|\*|_|`|\(|\[|\{|[:：=]|(?i:(?:option|choice|number|is)\b|no\.)"
    r"|번호|보기|선지|바로)*"
)
# What may follow an answer: "3번", "(3)", "**3**", "{3}".
SUFFIX = r"(?:\s*(?:번|\)|\]|\}|\*\*))?"
# Connectors that turn a statement into two answers: "2 or 3", "②, ④", "2번과 3번".
_CONNECTOR = r"\s*(?:,|/|&|(?i:or|and)\b|또는|혹은|이나|및|와|과|나)\s*"

ANSWER_LIST = re.compile(
    rf"{FILLER}(?P<first>{token_pattern(False)}){SUFFIX}"
    rf"(?P<more>(?:{_CONNECTOR}{FILLER}{token_pattern(False)}{SUFFIX})*)"
)
_TOKEN_RE = re.compile(_TOKEN)

# The whole output as an answer (lowercase letters allowed: nothing else is there to misread).
_WHOLE_TOKEN = rf"[(\[]?\s*(?:[{_CIRCLED}]|[\uFF10-\uFF19]+|[0-9]+|[A-Ea-e\uFF21-\uFF25])\s*[)\]]?"
_WHOLE = re.compile(
    rf"(?:(?i:option|choice|answer|no\.?|number)\s*|보기\s*|선지\s*)?"
    rf"(?P<tokens>{_WHOLE_TOKEN}\s*번?(?:{_CONNECTOR}{_WHOLE_TOKEN}\s*번?)*)"
    # "3번입니다", "③이다": the Korean copula after the answer.
    r"(?:\s*(?:입니다|이다|예요|이에요|요))?"
)
_WHOLE_STRIP = " \t\r\n*_`\"'“”‘’.。!:"

_FINAL_MARKERS = [
    r"(?i:\bfinal\s+answer)\s*(?:\*\*|__)?\s*(?:(?i:is)\b|[:：=])?",
    r"최종\s*(?:정답|답)\s*(?:\*\*)?\s*(?:은|는|이|[:：=])?",
    r"\\boxed\s*\{",
]
_ANSWER_MARKERS = [
    r"(?i:\banswer)\s*(?:\*\*|__)?\s*"
    r"(?:(?i:is|was|would\s+be|should\s+be|must\s+be|will\s+be)\b|[:：=])",
    r"(?i:\b(?:correct|right|best)\s+(?:option|choice)\s+(?:is|would\s+be|should\s+be)\b)",
    r"(?i:\bI\s+(?:would\s+|will\s+|'d\s+|'ll\s+)?(?:choose|pick|select|go\s+with)\b)",
    # 정답 / 답, but not 대답 or 해답's first syllable glued to another word.
    r"(?<![가-힣])(?:정답|답)\s*(?:\*\*)?\s*(?:은|는|이|[:：=])?",
]
FINAL_RE = re.compile("|".join(f"(?:{m})" for m in _FINAL_MARKERS))
ANSWER_RE = re.compile("|".join(f"(?:{m})" for m in _ANSWER_MARKERS))


@dataclass(frozen=True)
class Mention:
    value: int
    form: str


def _mention(match: re.Match[str]) -> Mention:
    """The option a token names, and how it was written."""
    for form in ("circled", "fullwidth", "digit", "letter", "lower"):
        text = match.group(form)
        if text is None:
            continue
        if form == "circled":
            # unicodedata knows ① is 1, ❿ is 10 (NFKC would lose which form it was).
            return Mention(int(unicodedata.numeric(text)), form)
        if form in ("digit", "fullwidth"):
            return Mention(int(unicodedata.normalize("NFKC", text)), form)
        letter = unicodedata.normalize("NFKC", text).upper()
        return Mention(LETTERS.index(letter) + 1, "letter")
    raise AssertionError("a token without a form")  # pragma: no cover


def mentions_in(text: str, start: int = 0, end: int | None = None) -> list[Mention]:
    """The tokens starting in ``text[start:end]``, read in place: the brackets around a
    lowercase letter lie outside the span and must still be seen."""
    stop = len(text) if end is None else end
    found = []
    for match in _TOKEN_RE.finditer(text, start):
        if match.start() >= stop:
            break
        found.append(_mention(match))
    return found


def listed(text: str, start: int = 0) -> list[Mention]:
    """The answers listed at ``text[start:]`` ("3", "option (3)", "2 or 3"), else nothing."""
    found = ANSWER_LIST.match(text, start)
    if found is None:
        return []
    return mentions_in(text, *found.span("first")) + mentions_in(text, *found.span("more"))


def after_markers(text: str, markers: re.Pattern[str]) -> list[Mention]:
    """Every answer stated right after a marker (a marker followed by no answer is ignored:
    "the answer is not obvious")."""
    return [m for marker in markers.finditer(text) for m in listed(text, marker.end())]


def whole(text: str) -> list[Mention]:
    """The mentions of `text` when it is nothing but answers (with their brackets)."""
    stripped = text.strip(_WHOLE_STRIP)
    match = _WHOLE.fullmatch(stripped)
    if match is None:
        return []
    tokens = match.group("tokens")
    # Lowercase letters count here (the whole output is an answer), so read them as capitals.
    upper = re.sub(r"(?<![A-Za-z])[a-e](?![A-Za-z])", lambda m: m.group().upper(), tokens)
    return mentions_in(upper)


def final_line(text: str) -> list[Mention]:
    """The last line of several, when it is only an answer: the end of a chain of thought."""
    lines = [line for line in text.splitlines() if line.strip(_WHOLE_STRIP)]
    return whole(lines[-1]) if len(lines) >= 2 else []


# An option label at the head of "C) Paris", "(3) 국회", "③ 서울" (not "3.": that is how a
# numbered list of reasoning starts).
_LABEL_RE = re.compile(
    rf"(?<![{_ALNUM}])(?:[{_CIRCLED}]"
    rf"|[(\[]?\s*(?:[0-9]+|[\uFF10-\uFF19]+|[A-E\uFF21-\uFF25])\s*[)\]]"
    # "D. Pacific Ocean": a letter label with a full stop (a digit with one starts a list).
    r"|[A-E\uFF21-\uFF25]\.(?=\s))"
)


def leading(text: str) -> list[Mention]:
    """A one-line output that opens with an option label: every label in it (two different
    ones, as in "(1) and (2) are wrong", make it ambiguous)."""
    line = text.strip()
    if "\n" in line or _LABEL_RE.match(line) is None:
        return []
    return [m for label in _LABEL_RE.finditer(line) for m in mentions_in(label.group())]


# "3. Paris", "3) Paris", "(3) Paris": an option number and the rest of the line.
_NUMBERED_RE = re.compile(r"[(\[]?\s*(?P<number>[0-9]+|[\uFF10-\uFF19]+)\s*[.)\]]\s+(?P<text>.+)")
# A bracketed option closing a one-line output: "The capital is Canberra (3)."
_TRAILING_RE = re.compile(rf"[(\[]\s*({token_pattern(False)})\s*[)\]]\s*[.。]?\s*$")
_BRACKETED_RE = re.compile(rf"[(\[]\s*({token_pattern(False)})\s*[)\]]")


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).strip(" .。")


def numbered(text: str, options: Sequence[str]) -> list[Mention]:
    """A one-line ``3. Paris`` whose text after the number is option 3's own text."""
    line = text.strip()
    match = _NUMBERED_RE.fullmatch(line)
    if "\n" in line or match is None or not options:
        return []
    number = int(unicodedata.normalize("NFKC", match.group("number")))
    said = _folded(match.group("text"))
    if not 1 <= number <= len(options) or not said.startswith(_folded(options[number - 1])):
        return []
    return [Mention(number, "numbered")]


def bracketed(text: str) -> list[Mention]:
    """Every bracketed option of a one-line output that ends with one, else nothing."""
    line = text.strip()
    if "\n" in line or _TRAILING_RE.search(line) is None:
        return []
    return [m for found in _BRACKETED_RE.finditer(line) for m in mentions_in(found.group())]
