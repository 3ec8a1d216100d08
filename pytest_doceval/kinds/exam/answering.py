"""How an exam test's answer is made, as stages (`ExamSuite.plan`): one small builder per source.

- ``random``, the built-in model: a pure stage of the question and the seed (`random_stage`);
- saved answers (``outputs/<model>-<track>.jsonl``): the file's rows, parsed once per system
  (one stage, keyed by the file's path and digest, shared by all its questions), then this
  question's answer (`saved_answer_stages`);
- a served model: its answer as a model stage (`ServedAnswer`), after the OCR stage of the image
  on tracks B1 and C.

Each ends in an `ExamAnswer`: the text scored, where it came from, and the fingerprint and
cache key its row records. Saved and served answers are kept in the run's store under that
key (as before the stages existed, so baselines' keys still find them), so that a later run
can show what a system now answers differently. The random model and saved answers cost the
system nothing: their stages are ``saved`` (on a thread, no cost reported).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_doceval.engine import CpuStage, ModelStage, Stage, saved_output_stage
from pytest_doceval.errors import CaseInputError
from pytest_doceval.files import output_digest
from pytest_doceval.kinds.exam.inputs import read_outputs
from pytest_doceval.kinds.exam.prompts import GENERATION, Track
from pytest_doceval.kinds.exam.questions import Question
from pytest_doceval.kinds.exam.scoring import RANDOM_MODEL, random_output
from pytest_doceval.store import cache_key, store_output

if TYPE_CHECKING:
    from pytest_doceval.models.requests import ChatRequest
    from pytest_doceval.models.runtime import ModelHandle
    from pytest_doceval.store import Store

RANDOM, PRECOMPUTED, SERVED = "random", "precomputed", "served"


@dataclass(frozen=True)
class ExamAnswer:
    """What a test scores: the answer's text and its source (``random``, ``precomputed`` or
    ``served``), the fingerprint and cache key of its row (None: nothing kept to compare a later
    answer with), and the prompt tag a served answer was asked with."""

    text: str
    source: str
    fingerprint: dict[str, Any]
    cache_key: str | None = None
    prompt: str | None = None


def remembered(
    store: Store | None,
    fingerprint: dict[str, Any],
    digest: str,
    text: str,
    source: str,
    prompt: str | None = None,
) -> ExamAnswer:
    """`text` as an answer keyed by (`fingerprint`, `digest`), kept in `store` (the run's) so
    that a later run can show what changed."""
    key = cache_key(fingerprint, digest)
    if store is not None:
        store_output(store, key, text, fingerprint)
    return ExamAnswer(text, source, fingerprint, key, prompt)


# -- random -------------------------------------------------------------------------------------


def random_stage(question: Question, seed: int) -> CpuStage:
    """The ``random`` model's answer: a function of (seed, question) only."""
    return CpuStage(
        key=cache_key(
            {"model": RANDOM_MODEL, "seed": seed, "question": question.id}, str(question.choices)
        ),
        label=f"{RANDOM_MODEL} answering {question.id}",
        call=random_answer_of,
        args=(question, seed),
        free=True,  # on a thread, no cost reported (a random row has no cost metrics)
    )


def random_answer_of(question: Question, seed: int) -> ExamAnswer:
    """A stage's call (module-level: picklable by name)."""
    return ExamAnswer(random_output(question, seed), RANDOM, {"model": RANDOM_MODEL, "seed": seed})


# -- saved answers ------------------------------------------------------------------------------


def saved_answer_stages(
    path: Path, shown: str, model: str, question: Question, store: Store | None
) -> list[Stage]:
    """The rows of `path` (`shown` as the user sees it) parsed -- one stage per file, its key
    made as `saved_output_stage` makes a saved file's, for the parsed rows -- then `question`'s
    answer among them. A missing file is a `CaseInputError` naming it."""
    rows = saved_output_stage(
        path, what="saved outputs", label=shown, read=read_outputs, args=(path,)
    )
    # The parsed rows, not the file's text: a key of their own.
    rows = replace(rows, key=cache_key({"saved answers": rows.key}, ""))
    pick = CpuStage(
        key=cache_key({"saved answer": question.id}, rows.key),
        label=f"{shown} answering {question.id}",
        call=saved_answer,
        args=(path, shown, model, question.id, store),
        needs=(rows.key,),
        free=True,
    )
    return [rows, pick]


def saved_answer(
    path: Path,
    shown: str,
    model: str,
    question: str,
    store: Store | None,
    answers: Mapping[str, str],
) -> ExamAnswer:
    """`question`'s saved answer, or a `CaseInputError` naming the file (a stage's call)."""
    if question not in answers:
        raise CaseInputError(f"{path}: no output for question {question!r}")
    output = answers[question]
    fingerprint = {
        "model": model,
        "precomputed": shown,
        # This question's saved answer: editing another's leaves this one unchanged.
        "output_sha256": output_digest(output),
    }
    digest = hashlib.sha256(f"{question}\n{output}".encode()).hexdigest()
    return remembered(store, fingerprint, digest, output, PRECOMPUTED)


# -- a served model -----------------------------------------------------------------------------


class ServedAnswer:
    """A served model's answer to one question on one track, as a model stage's `build` and
    `read`: `build` makes the request from the text the track reads (the OCR stage's output,
    the oracle text, or none); `read` records the answer under the fingerprint and cache key
    of the request that was sent. Both run in this process, one after the other, for one run
    of the stage: `build` keeps the request for `read`."""

    def __init__(
        self,
        handle: ModelHandle,
        question: Question,
        track: Track,
        image: bytes,
        settings: Mapping[str, Any],
        *,
        ocr_fingerprint: Mapping[str, Any] | None,
        store: Store | None,
    ) -> None:
        self.handle, self.question, self.track, self.image = handle, question, track, image
        self.settings = settings
        self.ocr_fingerprint = ocr_fingerprint
        self.store = store
        self._sent: ChatRequest | None = None

    def request(self, text: str | None) -> ChatRequest:
        """The one place an exam question's request is built."""
        messages = self.track.prompt.messages(
            image=self.image if self.track.image else None, text=text
        )
        return self.handle.request(
            messages,
            case=self.question.id,
            prompt_version=self.track.prompt.tag,
            **{**GENERATION, **self.settings},
        )

    def build(self, inputs: Sequence[Any]) -> list[ChatRequest]:
        oracle = self.question.oracle_text if self.track.text == "oracle" else None
        self._sent = self.request(inputs[0] if inputs else oracle)
        return [self._sent]

    def read(self, answers: Sequence[str]) -> ExamAnswer:
        request = self._sent
        assert request is not None, "read before build"
        fingerprint: dict[str, Any] = {"model": self.handle.fingerprint(), "track": self.track.name}
        if self.ocr_fingerprint is not None:
            fingerprint["ocr"] = dict(self.ocr_fingerprint)
        fingerprint |= {"prompt": self.track.prompt.tag, "generation": request.generation}
        tag = self.track.prompt.tag
        return remembered(self.store, fingerprint, request.cache_key(), answers[0], SERVED, tag)

    def stage(self, label: str, needs: tuple[str, ...]) -> ModelStage:
        """The model stage, after `needs` (the OCR stage, on B1 and C)."""
        return ModelStage(
            self.key(needs), label, self.handle.name, self.build, self.read, needs=needs
        )

    def key(self, needs: Sequence[str]) -> str:
        """The stage's key: the model and its settings, the track's prompt, the question and
        the key of the OCR text it reads (its request is only known once that is read)."""
        fingerprint = {
            "answer": self.handle.fingerprint(),
            "settings": self.settings,
            "track": self.track.name,
            "prompt": self.track.prompt.tag,
            "question": self.question.id,
            "image": self.question.image,
        }
        return cache_key(fingerprint, "+".join(needs))
