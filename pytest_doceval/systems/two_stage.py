"""`pymupdf+vlm` and `rapidocr+vlm`: a parser's text restructured into markdown by a model
(seed 000 sections 3.2.3-3.2.4).

Stage 1 is the named parser, run (and cached) exactly as when it is evaluated alone. Stage 2
sends its text to the suite's model (``vlm = "NAME"`` in ``[suite]``, else ``[tool.doceval]
vlm``, or this system's own ``model`` setting) with a versioned system and user prompt at
temperature 0, and returns the markdown. A text longer than ``window_chars`` is cut at paragraph
breaks into windows (a stand-in for page windows: stage 1 joins pages with a blank line), each
sent on its own, and the answers are re-joined with a blank line. A model that wraps its answer
in one fenced code block has the fence removed; an empty answer is an error of that test,
never an empty output scored as a bad parse.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pytest_doceval.errors import SystemRunError, SystemUnavailable
from pytest_doceval.systems.base import BuiltinParser, SystemEnvLike
from pytest_doceval.text.markdown import FENCED_REPLY

PROMPT_VERSION = "restructure-v1"
MAX_TOKENS = 4096  # the kind's default answer budget of a window
SYSTEM_PROMPT = (
    "You restructure text extracted from a PDF into markdown. Keep every word of the text, in "
    "its order, and add nothing. Mark up the structure the text shows: headings with #, bulleted "
    "and numbered lists, tables as pipe tables, code as fenced blocks. Answer with the markdown "
    "only."
)
USER_TEMPLATE = "Restructure this extracted text into markdown:\n\n{text}"
PROMPT_HASH = hashlib.sha256(
    f"{PROMPT_VERSION}\n{SYSTEM_PROMPT}\n{USER_TEMPLATE}".encode()
).hexdigest()[:16]

_FENCE = FENCED_REPLY


def windows(text: str, limit: int) -> list[str]:
    """`text` cut at blank lines into pieces of at most `limit` characters (a paragraph longer
    than `limit` is a window of its own: it is never cut mid-paragraph)."""
    pieces: list[str] = []
    current = ""
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        if current and len(current) + 2 + len(paragraph) > limit:
            pieces.append(current)
            current = paragraph
        else:
            current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        pieces.append(current)
    return pieces


def unfence(answer: str) -> str:
    match = _FENCE.match(answer)
    return (match.group(1) if match else answer).strip()


class TwoStageParser(BuiltinParser):
    """A parser followed by a model; `stage1` names the parser."""

    stage1: ClassVar[str]
    revision = 1
    # max_tokens 0: not set here (the model's own max_tokens, else MAX_TOKENS; see
    # `ModelHandle.max_tokens`).
    defaults: ClassVar[Mapping[str, Any]] = {"model": "", "window_chars": 6000, "max_tokens": 0}

    def check(self) -> None:
        if self.settings["window_chars"] < 500:
            raise ValueError(f"{self.name} window_chars must be at least 500")
        if self.settings["max_tokens"] < 0:
            raise ValueError(f"{self.name} max_tokens must be at least 1")
        self.model_name: str = self.settings["model"] or (self._default_model() or "")

    def _default_model(self) -> str | None:
        value = self.env.defaults.get("vlm") if self.env is not None else None
        return value if isinstance(value, str) and value else None

    def _suite(self) -> SystemEnvLike:
        """The suite's systems and models (built by the registry, a two-stage parser always
        has them; one built by hand without them cannot reach its stage 1 or its model)."""
        if self.env is None:
            raise ValueError(f"{self.name} needs the suite's SystemEnv (its second argument)")
        return self.env

    def model(self) -> Any:
        """The configured model; `SystemUnavailable` (the test is skipped) when none is."""
        if not self.model_name:
            raise SystemUnavailable(
                f'{self.name} needs a model: add vlm = "NAME" to the suite\'s [suite] table (or '
                "to [tool.doceval]) and [tool.doceval.models.NAME] with base_url and model to "
                "pyproject.toml"
            )
        return self._suite().model(self.model_name)

    def max_tokens(self) -> int:
        """The answer budget: the model's max_tokens, else this system's, else 4096."""
        system = self.settings["max_tokens"] or None
        if not self.model_name:
            return system or MAX_TOKENS
        return self.model().max_tokens(system, MAX_TOKENS) or MAX_TOKENS

    def fingerprint(self) -> dict[str, Any]:
        stage1 = self._suite().system(self.stage1).fingerprint()
        model = self.model().fingerprint() if self.model_name else {}
        return {
            "system": self.name,
            "revision": self.revision,
            "stage1": stage1,
            "model": model,
            "prompt": PROMPT_HASH,
            "window_chars": self.settings["window_chars"],
            "max_tokens": self.max_tokens(),
        }

    def requests(self, stage1_text: str, *, case: str) -> list[Any]:
        """The chat requests stage 2 sends for `stage1_text` (one per window)."""
        from pytest_doceval.models.requests import message

        model = self.model()
        return [
            model.request(
                [
                    message("system", SYSTEM_PROMPT),
                    message("user", USER_TEMPLATE.format(text=window)),
                ],
                case=case,
                prompt_version=PROMPT_HASH,
                temperature=0.0,
                max_tokens=self.max_tokens(),
            )
            for window in windows(stage1_text, self.settings["window_chars"])
        ]

    def combine(self, answers: Sequence[str], *, case: str) -> str:
        """Stage 2's markdown from the answers to `requests` (one per window, in order); an
        empty answer is an error, never an empty output."""
        texts = []
        for number, answer in enumerate(answers, 1):
            text = unfence(answer)
            if not text:
                raise SystemRunError(
                    f"model {self.model_name!r} answered with nothing for window {number} of "
                    f"{case!r} ({self.name})"
                )
            texts.append(text)
        return "\n\n".join(texts)

    def refine(self, stage1_text: str, *, case: str) -> str:
        """Stage 2 synchronously: the model's markdown for `stage1_text` (empty when stage 1
        found nothing)."""
        model = self.model()
        requests = self.requests(stage1_text, case=case)
        return self.combine([model.complete(r) for r in requests], case=case)

    def parse(self, pdf: Path) -> str:
        """Both stages without the output cache (the documents kind caches each stage)."""
        return self.refine(self._suite().system(self.stage1).parse(pdf), case=pdf.parent.name)


class PyMuPDFWithVLM(TwoStageParser):
    name = "pymupdf+vlm"
    stage1 = "pymupdf"


class RapidOCRWithVLM(TwoStageParser):
    name = "rapidocr+vlm"
    stage1 = "rapidocr"
