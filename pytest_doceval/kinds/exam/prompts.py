"""The four tracks of seed 001 (section 4.4) and the versioned prompt each one sends.

======  ===========================  =========  ===================
track   input                        model      prompt
======  ===========================  =========  ===================
A       the question image           VLM        ``seed-001-image``
B1      OCR text of the image        LLM        ``exam-text``
B2      oracle (human) text          LLM        ``exam-text``
C       the image and its OCR text   VLM        ``exam-image-text``
======  ===========================  =========  ===================

Track A sends seed 001's system and user prompts verbatim (section 4.1, line breaks included),
with its settings: temperature 0, max_tokens 10, top_p 1.0. The text tracks adapt it: the image
is replaced by the question's text, and "Look at the exam question image" becomes "Read the exam
question text". B1 and B2 share one prompt on purpose: Δ(B2-B1) is meant to measure the OCR's
quality, and a different wording would be measured with it. Track C keeps A's prompt and adds the
OCR text after the image.

A prompt is identified by name and version, and by the SHA-256 of everything it sends (its
``tag``, ``name-vN@<12 hex>``); the tag goes into the request's ``prompt_version`` (so into the
cache key) and into the report. Changing a word without bumping the version still changes the
hash, so stale cached answers are never reused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from pytest_doceval.models.requests import Message, canonical_json, image_part, message

TRACKS: tuple[str, ...] = ("A", "B1", "B2", "C")
TextSource = Literal["ocr", "oracle"]

# Seed 001, section 4.3.
GENERATION: Mapping[str, Any] = {"temperature": 0.0, "max_tokens": 10, "top_p": 1.0}

_TEXT = "{text}"

# Seed 001, section 4.1, character for character (its line breaks and the space before the
# first one included).
SEED_SYSTEM_PROMPT = (
    "You are taking a civil service examination. Look at the exam question \n"
    "image carefully and select the correct answer from the given choices.\n"
    "Respond with only the answer number (1, 2, 3, 4, or 5)."
)
SEED_USER_PROMPT = "What is the correct answer?"


@dataclass(frozen=True)
class ExamPrompt:
    """A system prompt and a user template (``{text}`` marks where a question's text goes;
    the image, when ``image`` is set, is the user message's first part, as the seed's
    ``<image>`` line puts it)."""

    name: str
    version: int
    system: str
    user: str
    image: bool

    @property
    def id(self) -> str:
        return f"{self.name}-v{self.version}"

    @cached_property
    def hash(self) -> str:
        """SHA-256 over everything the prompt sends (not the question: the request key covers
        that)."""
        payload = {
            "name": self.name,
            "version": self.version,
            "system": self.system,
            "user": self.user,
            "image": self.image,
        }
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()

    @property
    def tag(self) -> str:
        """``name-vN@<first 12 hex of the hash>``: the request's ``prompt_version``."""
        return f"{self.id}@{self.hash[:12]}"

    @property
    def takes_text(self) -> bool:
        return _TEXT in self.user

    def messages(self, *, image: bytes | None = None, text: str | None = None) -> list[Message]:
        """The chat messages for one question; `ValueError` if an input the prompt needs is
        missing or one it does not take is given."""
        if self.image != (image is not None):
            raise ValueError(f"prompt {self.id} {'needs' if self.image else 'takes no'} image")
        if self.takes_text != (text is not None):
            raise ValueError(f"prompt {self.id} {'needs' if self.takes_text else 'takes no'} text")
        # str.replace, not str.format: a question's text may hold braces.
        user = self.user.replace(_TEXT, text) if text is not None else self.user
        parts: list[str | dict[str, Any]] = [image_part(image)] if image is not None else []
        parts.append(user)
        return [message("system", self.system), message("user", *parts)]


SEED_IMAGE = ExamPrompt("seed-001-image", 1, SEED_SYSTEM_PROMPT, SEED_USER_PROMPT, image=True)
EXAM_TEXT = ExamPrompt(
    "exam-text",
    1,
    "You are taking a civil service examination. Read the exam question text carefully and "
    "select the correct answer from the given choices.\n"
    "Respond with only the answer number (1, 2, 3, 4, or 5).",
    f"{_TEXT}\n\n{SEED_USER_PROMPT}",
    image=False,
)
EXAM_IMAGE_TEXT = ExamPrompt(
    "exam-image-text",
    1,
    SEED_SYSTEM_PROMPT,
    f"Text extracted from the image by OCR:\n{_TEXT}\n\n{SEED_USER_PROMPT}",
    image=True,
)


@dataclass(frozen=True)
class Track:
    """What a track sends: the image or not, which text (``ocr``, ``oracle``) or none, and the
    prompt; ``model`` says which kind of model the seed runs it with."""

    name: str
    image: bool
    text: TextSource | None
    model: Literal["vlm", "llm"]
    prompt: ExamPrompt

    def runs_on(self, has_oracle: bool) -> bool:
        """Whether the track asks a question: B2 only where a human transcription exists."""
        return self.text != "oracle" or has_oracle


TRACK_SPECS: Mapping[str, Track] = {
    "A": Track("A", image=True, text=None, model="vlm", prompt=SEED_IMAGE),
    "B1": Track("B1", image=False, text="ocr", model="llm", prompt=EXAM_TEXT),
    "B2": Track("B2", image=False, text="oracle", model="llm", prompt=EXAM_TEXT),
    "C": Track("C", image=True, text="ocr", model="vlm", prompt=EXAM_IMAGE_TEXT),
}


def get_track(name: str) -> Track:
    """The track named `name`; `ValueError` listing the tracks otherwise."""
    try:
        return TRACK_SPECS[name]
    except KeyError:
        raise ValueError(f"unknown track {name!r} (tracks: {', '.join(TRACKS)})") from None


def build_messages(
    track: str, *, image: bytes | None = None, text: str | None = None
) -> list[Message]:
    """The messages `track` sends for one question (its image's PNG bytes and/or its text)."""
    return get_track(track).prompt.messages(image=image, text=text)


def prompt_report(tracks: Sequence[str]) -> dict[str, dict[str, str]]:
    """Per track: the prompt's id and full hash, for the report's suite section."""
    return {t: {"prompt": get_track(t).prompt.id, "hash": get_track(t).prompt.hash} for t in tracks}


def scoring_id(
    parser: str, tracks: Sequence[str], generation: Mapping[str, Any] = GENERATION
) -> str:
    """``<parser>@<12 hex>``: the answer parser, plus a digest of the tracks' prompt hashes, the
    generation settings and the parser's revision (`answers.PARSER_REVISIONS`) -- what must
    match for two runs' accuracies to be comparable."""
    from pytest_doceval.kinds.exam.answers import PARSER_REVISIONS

    payload: dict[str, Any] = {
        "tracks": {t: get_track(t).prompt.hash for t in sorted(tracks)},
        "generation": dict(generation),
    }
    if parser in PARSER_REVISIONS:  # absent for seed-001: its ids stay as they were
        payload["parser_revision"] = PARSER_REVISIONS[parser]
    digest = hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()
    return f"{parser}@{digest[:12]}"
