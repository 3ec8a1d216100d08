"""Reading a model's multiple-choice answer out of its raw output.

Two parsers, both ``(output, choices, options=()) -> ParsedAnswer`` (``options``: the option
texts when the question lists them), named by the suite's ``answer_parser``:

``seed-001`` -- seed 001, section 4.1, verbatim: the answer is the first character of the
output matching the regex ``[1-5]`` (ASCII digits only); no match is a parse failure, which
counts as wrong. Nothing else: "10" reads as 1, "(1, 2, 3, 4, or 5)" as 1, and a 5 on a
four-choice question is an answer (a wrong one), not a parse failure, because the seed's regex
does not know how many choices there are. Use it to reproduce the seed's numbers.

``robust-v1`` -- reads the answer a model *states*, never one it merely mentions. It tries four
levels in order and stops at the first that names anything:

1. ``whole``: the entire output is an answer: ``3``, ``(3)``, ``3.``, ``**3**``, ``③``, ``３``,
   ``C``, ``(c)``, ``3번``, ``3번입니다``, ``Option 3``.
2. ``final``: an explicit final answer: ``Final answer: 3``, ``최종 정답: ③``,
   ``\\boxed{3}``, or -- after several lines of reasoning -- a last line that is only an answer.
   This is how a long chain of thought ends; the numbers discussed on the way are ignored.
3. ``answer-line``: an answer statement anywhere: ``정답: 3``, ``정답은 ③번``, ``답은 2``,
   ``Answer: C``, ``the answer is (B)``, ``the correct option is 4``, ``I choose 2``.
4. ``leading``: a one-line output that opens with an option label: ``C) Paris``, ``(3) 국회``,
   ``③ 서울``, ``D. Pacific Ocean`` (short outputs under ``max_tokens = 10`` look like this).
   ``3. ...`` is not a label: a numbered list of reasoning starts that way -- unless the
   question lists its option texts and what follows ``3.`` (or ``3)``...) *is* option 3's text
   (casefolded, spacing collapsed): ``3. Paris`` where option 3 is "Paris" (rule
   ``leading:numbered``). Without option texts ``3. Paris`` stays unread: nothing
   tells it from the first line of a numbered list.
   A one-line output that *ends* with a bracketed option, ``The capital is Canberra (3)``
   (a full stop after it allowed), is read as that option at level ``trailing``.
   Both are read together: every label, numbered option and bracketed option of the output
   must name the same answer, else it is a parse failure (``3. Paris (2)``, ``(1) is wrong,
   so (3)``).

A higher level outranks a lower one: an explicit final answer settles a chain of thought that
named other answers on the way. Every statement found at the deciding level must name the same
answer, else the output is a parse failure ("two different answers"): a model that says "the
answer is 2 ... the answer is 3" without marking one final has not answered. A stated answer
outside 1..choices (``6``, ``⑤`` on a four-choice question, ``E`` on four, ``12``) is a parse
failure too. There is no fallback: no first or last number in the text, no random answer -- a
harness that guesses turns the parse-failure rate into noise in the accuracy.

**Self-corrections** (r3) are followed, never averaged: the output is cut at every
correction marker -- ``no wait``, ``wait, no``, ``actually``, ``correction``, ``정정``, and the
constructions ``not X but Y``, ``X이 아니라 Y`` / ``X가 아니고 Y`` / ``X가 아닌 Y`` (X, the
negated option, is dropped; such a construction is a correction only when X is one of the
options: ``not 1987 but 1988`` is about a year) -- and the piece before the first marker is read
by the levels above. Then each marker in turn: if the text after it (up to the next marker)
states an answer -- the whole piece is one (``no wait, option 3.``), else it holds a final
answer, else an answer statement (``Actually, the answer is 3.``), else, after ``no wait``/
``wait, no``/``not X but``/``아니라``, it opens with options (``아니라 4번입니다``, ``no wait,
it's 3, since ...``; not ``no wait, 1987 was ...``) -- that answer replaces the earlier one
(level ``correction``), a later marker again replacing it. If
it states none, the earlier answer stands, unless it mentions another option (1..choices) it
does not state: two candidates the parser cannot order are a parse failure ("The answer is 3.
Actually, option 2 fits better."). A correction stating two answers, or one beyond the choices,
fails as above.

The rule that decided is recorded as ``<level>:<form>``, the form being how the answer was
written: ``digit`` (ASCII), ``fullwidth`` (``０``-``９``), ``circled`` (``①``-``⑳``, ``❶``...),
or ``letter`` (``A``-``E`` mapped to 1-5; lowercase only in brackets or as the whole output, since
"a" is also a word).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from pytest_doceval.kinds.exam.answer_forms import (
    ANSWER_RE,
    FILLER,
    FINAL_RE,
    LETTERS,
    SUFFIX,
    Mention,
    after_markers,
    bracketed,
    final_line,
    leading,
    listed,
    mentions_in,
    numbered,
    token_pattern,
    whole,
)

SEED_001 = "seed-001"
ROBUST_V1 = "robust-v1"


@dataclass(frozen=True)
class ParsedAnswer:
    """What a parser read: ``answer`` (1-based option) or None, ``rule`` that decided (None on
    a failure), ``failure``: why nothing was read (None on success)."""

    parser: str
    answer: int | None
    rule: str | None
    failure: str | None = None

    @property
    def failed(self) -> bool:
        return self.answer is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AnswerParser(Protocol):
    def __call__(
        self, output: str, choices: int, options: Sequence[str] = ..., /
    ) -> ParsedAnswer: ...


# ---------------------------------------------------------------------------------------------
# seed-001
# ---------------------------------------------------------------------------------------------

_SEED_REGEX = re.compile(r"[1-5]")


def parse_seed_001(output: str, choices: int = 5, options: Sequence[str] = (), /) -> ParsedAnswer:
    """Seed 001's parser: the first ``[1-5]`` in the output (``choices`` and ``options`` are not
    consulted)."""
    match = _SEED_REGEX.search(output)
    if match is None:
        return ParsedAnswer(SEED_001, None, None, "no digit 1-5 in the output")
    return ParsedAnswer(SEED_001, int(match.group()), "seed-001:[1-5]")


# ---------------------------------------------------------------------------------------------
# robust-v1
# ---------------------------------------------------------------------------------------------


def _decide(level: str, mentions: list[Mention], choices: int) -> ParsedAnswer:
    values = sorted({m.value for m in mentions})
    if len(values) > 1:
        named = ", ".join(map(str, values))
        return ParsedAnswer(ROBUST_V1, None, None, f"{level}: two different answers ({named})")
    value = values[0]
    if not 1 <= value <= choices:
        return ParsedAnswer(
            ROBUST_V1, None, None, f"{level}: answer {value} is not one of the {choices} choices"
        )
    return ParsedAnswer(ROBUST_V1, value, f"{level}:{mentions[0].form}")


# Self-corrections. `head`: markers after which the corrected answer comes first ("no wait,
# 3", "not 2 but 3", "3번이 아니라 4번"); the others ("actually", "정정") are followed by a
# statement somewhere in what follows. A negated option (the X of "not X but") is part of the
# marker, so it is no candidate.
_NEGATED = rf"{token_pattern(False)}{SUFFIX}"
_CORRECTIONS = {
    "head": [
        r"(?i:\bno\s*,?\s*wait\b|\bwait\s*[,.!]?\s*no\b)",
        rf"(?i:\bnot\b){FILLER}{_NEGATED}\s*,?\s*(?i:but(?:\s+rather)?\b)",
        rf"{_NEGATED}\s*(?:이|가)?\s*(?:아니라|아니고|아닌(?=\s))",
    ],
    "statement": [r"(?i:\bactually\b|\bcorrection\b)", "정정(?:하면|합니다|하겠습니다)?"],
}
_CORRECTION_RE = re.compile(
    "|".join(f"(?P<{kind}{i}>{m})" for kind, ms in _CORRECTIONS.items() for i, m in enumerate(ms))
)
# What may stand between a head marker and its answer: ", it's", "— make that".
_HEAD_LEAD = re.compile(
    r"[\s,;:.!\-\u2013\u2014]*(?i:(?:it'?s|it\s+is|that'?s|make\s+(?:it|that))\s+)?"
)


def _in_range(mentions: list[Mention], choices: int) -> bool:
    return all(1 <= m.value <= choices for m in mentions)


def _corrected(piece: str, head: bool, choices: int) -> list[Mention]:
    """The answer a correction's text states, by level (nothing when it states none). A head
    reading names options only: "no wait, 1987 was the year" states no answer."""
    start = _HEAD_LEAD.match(piece)
    rest = piece[start.end() if start else 0 :]
    levels: list[Callable[[], list[Mention]]] = [
        lambda: whole(rest),
        lambda: after_markers(piece, FINAL_RE),
        lambda: after_markers(piece, ANSWER_RE),
        lambda: _head(rest) if head and _in_range(_head(rest), choices) else [],
    ]
    for find in levels:
        mentions = find()
        if mentions:
            return mentions
    return []


def _head(rest: str) -> list[Mention]:
    """The answers a head marker's text opens with ("no wait, option 3, since ...")."""
    return listed(rest)


def _is_correction(marker: re.Match[str], choices: int) -> bool:
    """A marker that negates an option ("not X but", "X이 아니라") corrects an answer only
    when X is an option: "not 1987 but 1988" is about a year."""
    return _in_range(mentions_in(marker.group()), choices)


def _follow(earlier: ParsedAnswer, marker: re.Match[str], piece: str, choices: int) -> ParsedAnswer:
    """The answer after one correction marker and the text it governs."""
    mentions = _corrected(piece, (marker.lastgroup or "").startswith("head"), choices)
    if mentions:
        return _decide("correction", mentions, choices)
    others = {m.value for m in mentions_in(piece) if 1 <= m.value <= choices}
    others.discard(earlier.answer or 0)
    if earlier.answer is not None and others:
        named = ", ".join(map(str, sorted(others)))
        return ParsedAnswer(
            ROBUST_V1,
            None,
            None,
            f"correction: after {marker.group().strip()!r} the output mentions {named} without "
            f"stating it, against the earlier answer {earlier.answer}",
        )
    return earlier


def parse_robust(output: str, choices: int, options: Sequence[str] = (), /) -> ParsedAnswer:
    """The robust parser (``robust-v1``; see the module docstring for its rules)."""
    if not 1 <= choices <= len(LETTERS):
        raise ValueError(f"choices must be 1..{len(LETTERS)}, got {choices}")
    if not output.strip():
        return ParsedAnswer(ROBUST_V1, None, None, "empty output")
    markers = [m for m in _CORRECTION_RE.finditer(output) if _is_correction(m, choices)]
    if not markers:
        return _read(output, choices, options)
    parsed = _read(output[: markers[0].start()], choices, options)
    ends = [m.start() for m in markers[1:]] + [len(output)]
    for marker, end in zip(markers, ends, strict=True):
        parsed = _follow(parsed, marker, output[marker.end() : end], choices)
    return parsed


def _read(output: str, choices: int, options: Sequence[str]) -> ParsedAnswer:
    """The levels on text without corrections."""
    if not output.strip():
        return ParsedAnswer(ROBUST_V1, None, None, "no stated answer")
    levels: list[tuple[str, Callable[[], list[Mention]]]] = [
        ("whole", lambda: whole(output)),
        ("final", lambda: after_markers(output, FINAL_RE) + final_line(output)),
        ("answer-line", lambda: after_markers(output, ANSWER_RE)),
    ]
    for level, find in levels:
        mentions = find()
        if mentions:
            return _decide(level, mentions, choices)
    # The last level reads labels, numbered options and a closing bracketed option together,
    # so that two different ones are a failure, not a pick.
    opening = leading(output) + numbered(output, options)
    closing = bracketed(output)
    if opening or closing:
        return _decide("leading" if opening else "trailing", opening + closing, choices)
    return ParsedAnswer(ROBUST_V1, None, None, "no stated answer")


PARSERS: Mapping[str, AnswerParser] = {SEED_001: parse_seed_001, ROBUST_V1: parse_robust}
# A parser's revision enters the exam scoring id, so baselines read by an older revision stop
# comparing. robust-v1 r2: "3. Paris" with the question's option texts, a closing "(3)".
# r3: self-corrections ("no wait", "actually", "not X but Y", "아니라", "정정") are followed.
PARSER_REVISIONS: Mapping[str, int] = {ROBUST_V1: 3}


def get_parser(name: str) -> AnswerParser:
    """The parser named `name`; `ValueError` listing the known names otherwise."""
    try:
        return PARSERS[name]
    except KeyError:
        raise ValueError(
            f"unknown answer_parser {name!r} (known: {', '.join(sorted(PARSERS))})"
        ) from None


def parse_answer(name: str, output: str, choices: int) -> ParsedAnswer:
    return get_parser(name)(output, choices)
