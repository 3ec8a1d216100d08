"""Word tokenisers for WER, chosen by a suite's `language` (seed 000 section 3.3.1).

* ``en``    -- whitespace tokens.
* ``ko``    -- Korean morphemes from Kiwi (kiwipiepy; its model ships as a PyPI package, so it
  works offline). Korean is agglutinative: a whitespace "word" bundles stem and particles, so one
  wrong particle would cost a whole word.
* ``mixed`` -- whitespace tokens; a token that contains Hangul is split into Kiwi morphemes
  ("primary Korean, whitespace for others").

Text is NFC-composed first, so decomposed (NFD) Hangul tokenises like its composed copy.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kiwipiepy import Kiwi

LANGUAGES = ("en", "ko", "mixed")
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff]")


@functools.cache
def _kiwi() -> Kiwi:
    # Loading the model takes seconds: once per process, and only for suites that need it.
    from kiwipiepy import Kiwi

    return Kiwi()


def whitespace_tokens(text: str) -> list[str]:
    return unicodedata.normalize("NFC", text).split()


def korean_tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFC", text)
    if not text.strip():
        return []
    return [token.form for token in _kiwi().tokenize(text) if token.form.strip()]


def mixed_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    for word in whitespace_tokens(text):
        tokens.extend(korean_tokens(word) if _HANGUL.search(word) else [word])
    return tokens


TOKENISERS: dict[str, Callable[[str], list[str]]] = {
    "en": whitespace_tokens,
    "ko": korean_tokens,
    "mixed": mixed_tokens,
}


def tokeniser_for(language: str) -> Callable[[str], list[str]]:
    try:
        return TOKENISERS[language]
    except KeyError:
        raise KeyError(
            f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}"
        ) from None
