"""The OCR step of exam tracks B1 and C: the question image read into text, cached and scored.

``ocr = "rapidocr"`` (the default) reads the PNG with the registered system of that name -- any
registered system that reads images (``read_image``: RapidOCR, offline) will do, found in the
systems' registry as every kind finds its systems; ``ocr = "<model>"`` asks that configured
model to transcribe it with `OCR_PROMPT` at temperature 0 (seed 001 ran Gemini as its OCR). The
text is kept in the store under the image's SHA-256 and the OCR's fingerprint (the system's, or
model, prompt tag and answer budget), so B1 and C share one reading and a second run reads
nothing. Where the question has an oracle text, the OCR
text is scored against it as ``ocr_cer`` (`OCR_TEXT` normalises both sides first).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pytest_doceval.engine import CpuStage, ModelStage, Stage
from pytest_doceval.errors import SuiteConfigError, SystemRunError, SystemUnavailable
from pytest_doceval.kinds.exam.prompts import ExamPrompt
from pytest_doceval.kinds.exam.questions import Question
from pytest_doceval.metrics.text import character_alignment
from pytest_doceval.results import CaseResult
from pytest_doceval.store import cache_key
from pytest_doceval.systems.base import ImageReader, run_system
from pytest_doceval.text.normalise import (
    Profile,
    collapse_whitespace,
    unicode_nfkc,
    unify_line_endings,
)

if TYPE_CHECKING:
    from pytest_doceval.models.requests import ChatRequest
    from pytest_doceval.models.runtime import ModelHandle
    from pytest_doceval.systems import SystemEnv

# A model's transcription of a question image.
OCR_PROMPT = ExamPrompt(
    "exam-ocr",
    1,
    "You transcribe scanned exam questions. Write out all the text in the image exactly as "
    "printed, line by line: the header, the question and every option with its label. Do not "
    "answer the question and add nothing.",
    "Transcribe the text in this image.",
    image=True,
)
# How the OCR text meets the oracle text: line breaks and spacing are layout (an engine breaks
# lines where the image does, a typist where the page does), and NFKC makes full-width and
# circled forms (③) the characters they stand for. Existing steps, composed: no new rule.
OCR_TEXT = Profile(
    "exam-ocr-v1",
    (
        ("unify_line_endings", unify_line_endings),
        ("unicode_nfkc", unicode_nfkc),
        ("collapse_whitespace", collapse_whitespace),
    ),
    "NFKC, every whitespace run one space",
)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class OcrText:
    text: str
    engine: str
    key: str
    fingerprint: dict[str, Any]


@dataclass(frozen=True)
class OcrPlan:
    """How one image will be read: the fingerprint and cache key of its text, and the model
    request when a model reads it."""

    fingerprint: dict[str, Any]
    key: str
    request: ChatRequest | None


class OcrStep:
    """The suite's OCR (``ocr`` in ``[suite]``), one per suite: the stage reading an image (the
    engine runs one stage per key: B1 and C, and every model, share one reading)."""

    def __init__(self, name: str, env: SystemEnv, *, max_tokens: int) -> None:
        self.name = name
        self.env = env
        self.max_tokens = max_tokens

    @cached_property
    def reader(self) -> ImageReader | None:
        """The registered system reading the images (None: a model does)."""
        if self.name not in self.env:
            return None
        system = self.env.system(self.name)
        if not isinstance(system, ImageReader):
            raise SuiteConfigError(
                f"{self.env.source}: ocr = {self.name!r} is a system that does not read images "
                "(it has no read_image); use one that does, or a model's name"
            )
        return system

    @property
    def engine(self) -> str:
        return self.name if self.reader is not None else f"model {self.name}"

    def prompt(self) -> dict[str, str] | None:
        """The model OCR's prompt for the report (None for a system's OCR)."""
        if self.reader is not None:
            return None
        return {"prompt": OCR_PROMPT.id, "hash": OCR_PROMPT.hash}

    def handle(self) -> ModelHandle:
        try:
            return self.env.model(self.name)
        except SuiteConfigError:
            raise SystemUnavailable(
                f"B1 and C read the questions with ocr = {self.name!r}, which is not configured: "
                f'add [tool.doceval.models.{self.name}] to pyproject.toml, or use ocr = "rapidocr"'
            ) from None

    def plan(self, question: Question, image: bytes) -> OcrPlan:
        if self.reader is not None:
            fingerprint, request = self.reader.fingerprint(), None
        else:
            handle = self.handle()
            max_tokens = handle.max_tokens(None, self.max_tokens)  # the model's, else ours
            request = handle.request(
                OCR_PROMPT.messages(image=image),
                case=question.id,
                prompt_version=OCR_PROMPT.tag,
                temperature=0.0,
                max_tokens=max_tokens,
                top_p=1.0,
            )
            fingerprint = {
                "ocr": "model",
                "model": handle.fingerprint(),
                "prompt": OCR_PROMPT.tag,
                "max_tokens": max_tokens,
            }
        return OcrPlan(fingerprint, cache_key(fingerprint, sha256(image)), request)

    def stage(self, question: Question, image: bytes) -> Stage:
        """Reading the image as an engine stage: RapidOCR a CPU stage, a model OCR a model
        stage; keyed (and its text kept in the output cache) by `plan`."""
        plan = self.plan(question, image)
        label = f"ocr ({self.engine}) of {question.image} ({question.id})"
        if plan.request is None:
            return CpuStage(
                plan.key,
                label,
                read_image_text,
                (self.name, self.reader, image, question),
                fingerprint=plan.fingerprint,
                system=self.name,
            )
        request = plan.request

        def read(answers: Sequence[str]) -> str:
            return self._checked(question, answers[0])

        return ModelStage(
            plan.key, label, self.name, lambda _: [request], read, fingerprint=plan.fingerprint
        )

    def _checked(self, question: Question, text: str) -> str:
        if not text.strip():
            # A model that transcribes nothing failed; scoring B1 on an empty text would count
            # the OCR's failure as the answering model's wrong answer.
            raise SystemRunError(f"OCR model {self.name!r} returned no text for {question.image}")
        return text


def read_image_text(system: str, reader: ImageReader, image: bytes, question: Question) -> str:
    """A system's text of a question image (a CPU stage's call: it may run in a worker)."""
    return run_system(system, f"{question.image} ({question.id})", lambda: reader.read_image(image))


def report_ocr(question: Question, ocr: OcrText, result: CaseResult) -> None:
    """Put the OCR text, and where the question has an oracle text its ``ocr_cer`` with counts
    and the aligned diff, into `result`."""
    result.details["ocr"] = {"engine": ocr.engine, "cache_key": ocr.key, "chars": len(ocr.text)}
    result.views["ocr"] = {"engine": ocr.engine, "text": ocr.text}
    if not ocr.text.strip():
        result.notes.append(f"{ocr.engine} read no text in {question.image}")
    if question.oracle_text is not None:
        aligned = character_alignment(OCR_TEXT(question.oracle_text), OCR_TEXT(ocr.text))
        result.metrics["ocr_cer"] = aligned.counts.rate
        result.counts = {**result.counts, "ocr_cer": aligned.counts.to_dict()}
        result.views["text_diff"] = {"metric": "ocr_cer", "ops": aligned.ops}
