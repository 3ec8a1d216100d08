"""The ``exam`` kind (seed 001): multiple-choice questions asked of (model, track) systems.

Layout::

    cases/<suite>/suite.toml
    cases/<suite>/questions.jsonl                # see pytest_doceval.kinds.exam.questions
    cases/<suite>/images/*.png                   # as questions.jsonl names them
    cases/<suite>/outputs/<model>-<track>.jsonl  # optional saved answers: {"id", "output"} rows

``[suite]`` keys: ``kind = "exam"``; ``models`` and ``tracks`` (required lists; tracks among
A, B1, B2, C); ``answer_parser`` (``seed-001``, the default, or ``robust-v1``); ``ocr`` (what
reads the image for B1 and C: ``"rapidocr"``, the default, or a configured model's name);
``ocr_max_tokens`` (a model OCR's answer budget, default 2048); ``human_pass_marks`` (nation ->
fraction, reference lines in the report). ``[systems.<model>]`` sets ``temperature``,
``max_tokens`` and ``top_p`` of that model's exam requests (seed 001 4.3's 0, 10 and 1.0
otherwise, whatever the model's own pyproject table says) and ``tracks``, the subset it runs (a
text-only model: B1, B2); ``[systems.random] seed`` seeds the built-in ``random`` model.

A system is ``<model>-<track>`` with one test per question the track runs on (B2: questions
with ``oracle_text``). Its answer comes from, in this order: the built-in ``random`` model;
``outputs/<model>-<track>.jsonl`` (saved answers, no server); the model configured as
``[tool.doceval.models.<model>]``. A listed model with none of these skips its tests
(`SystemUnavailable`) saying how to configure it. A model that fails after its retries is an
error of that test (`ModelError`), never a wrong answer. The OCR step is
`pytest_doceval.kinds.exam.ocr`; bad rows of ``questions.jsonl`` break only their question
(`pytest_doceval.kinds.exam.inputs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_doceval.config import SuiteSpec
from pytest_doceval.engine import Plan, Stage, StageResults
from pytest_doceval.errors import CaseInputError, SuiteConfigError, SystemUnavailable
from pytest_doceval.html.analysis import AnalysisRenderer
from pytest_doceval.kinds.base import Analysis, CaseRef, RunContext, Suite
from pytest_doceval.kinds.exam.answering import (
    PRECOMPUTED,
    RANDOM,
    SERVED,
    ExamAnswer,
    ServedAnswer,
    random_stage,
    saved_answer_stages,
)
from pytest_doceval.kinds.exam.html import EXAM_RENDERERS
from pytest_doceval.kinds.exam.inputs import (
    KEYS,
    load_question_set,
    read_config,
    read_outputs,
)
from pytest_doceval.kinds.exam.ocr import OcrStep, OcrText, report_ocr
from pytest_doceval.kinds.exam.paper import accuracy_table, delta_table
from pytest_doceval.kinds.exam.prompts import (
    GENERATION,
    Track,
    get_track,
    prompt_report,
    scoring_id,
)
from pytest_doceval.kinds.exam.questions import QUESTIONS, Question
from pytest_doceval.kinds.exam.scoring import (
    EXAM_METRICS,
    RANDOM_MODEL,
    score_output,
    system_name,
)
from pytest_doceval.kinds.views import output_change
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.paper import TableBuilder
from pytest_doceval.results import CaseResult
from pytest_doceval.systems import SystemEnv
from pytest_doceval.systems.sources import cannot_read

if TYPE_CHECKING:
    from pytest_doceval.models.runtime import ModelHandle

OUTPUTS = "outputs"
_HANGUL = re.compile("[\uac00-\ud7a3]")


class _LazyAnalyses(Sequence[Analysis]):
    """`EXAM_ANALYSES`, imported on first use: they need scipy, which only the process that
    writes the report (never an xdist worker) should pay for (about 2 s)."""

    def _all(self) -> Sequence[Analysis]:
        from pytest_doceval.kinds.exam.analyses import EXAM_ANALYSES

        return EXAM_ANALYSES

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Analysis]:
        return iter(self._all())


class ExamSuite(Suite):
    kind = "exam"
    suite_keys = KEYS
    paper_tables: ClassVar[tuple[TableBuilder, ...]] = (accuracy_table, delta_table)
    html_analyses: ClassVar[Mapping[str, AnalysisRenderer]] = EXAM_RENDERERS
    metrics: ClassVar[Mapping[str, MetricSpec]] = {
        **EXAM_METRICS,
        "ocr_cer": MetricSpec(
            "lower",
            headline=False,
            counts="ocr_cer",
            description="CER of the OCR text (B1, C) against the oracle text, NFKC, spaces "
            "collapsed",
        ),
    }
    analyses: ClassVar[Sequence[Analysis]] = _LazyAnalyses()

    def __init__(self, spec: SuiteSpec, systems_env: SystemEnv) -> None:
        super().__init__(spec, systems_env)
        self.config = read_config(spec)
        self.models, self.tracks = self.config.models, self.config.tracks
        loaded = load_question_set(spec.path)
        self.questions, self.broken = loaded.questions, loaded.broken
        self.by_id = loaded.by_id
        self.ocr = OcrStep(self.config.ocr, systems_env, max_tokens=self.config.ocr_max_tokens)
        self.ocr.reader  # noqa: B018 - a system that cannot read images fails the suite now

    @property
    def scoring_id(self) -> str:
        """The answer parser plus the tracks' prompt hashes and seed 001's generation settings:
        the protocol. The OCR and a model's own settings are part of the system under test
        (its fingerprint), so changing them shows as a baseline delta, not a new protocol."""
        return scoring_id(self.config.parser, self.tracks, GENERATION)

    def case_refs(self) -> list[CaseRef]:
        cases = [
            (q.line, q.id, {"nation": q.nation, "task": q.task}, q.has_oracle)
            for q in self.questions
            if q.id not in self.broken
        ]
        cases += [(b.line, name, b.labels, b.oracle) for name, b in self.broken.items()]
        refs = []
        for _, case, labels, has_oracle in sorted(cases, key=lambda c: (c[0], c[1])):
            for model, track in self._pairs():
                if get_track(track).runs_on(has_oracle):
                    all_labels = {"model": model, "track": track, **labels}
                    refs.append(CaseRef(case, system_name(model, track), all_labels))
        return refs

    def _pairs(self) -> list[tuple[str, str]]:
        return self.config.pairs()

    def system_names(self) -> list[str]:
        present = {ref.system for ref in self.case_refs()}
        return [system_name(m, t) for m, t in self._pairs() if system_name(m, t) in present]

    def source(self, model: str, track: str) -> str:
        """``random``, ``precomputed`` (saved answers exist) or ``served``."""
        if model == RANDOM_MODEL:
            return RANDOM
        return PRECOMPUTED if self._outputs_path(model, track).is_file() else SERVED

    def _outputs_path(self, model: str, track: str) -> Path:
        return self.spec.path / OUTPUTS / f"{system_name(model, track)}.jsonl"

    def _reads_images(self) -> bool:
        """Whether any served system's track needs the OCR."""
        return any(
            get_track(t).text == "ocr" and self.source(m, t) == SERVED for m, t in self._pairs()
        )

    def describe(self) -> dict[str, object]:
        prompts: dict[str, Any] = prompt_report(self.tracks)
        uses_ocr = any(get_track(t).text == "ocr" for t in self.tracks)
        if uses_ocr and self.ocr.prompt():
            prompts["ocr"] = self.ocr.prompt()
        return {
            "models": list(self.models),
            "tracks": list(self.tracks),
            "model_tracks": dict(self.config.model_tracks),
            "answer_parser": self.config.parser,
            "ocr": self.config.ocr if uses_ocr else None,
            "prompts": prompts,
            "generation": {"default": dict(GENERATION), "models": self.config.settings},
            "sources": {system_name(m, t): self.source(m, t) for m, t in self._pairs()},
            "human_pass_marks": dict(self.config.pass_marks),
        }

    def notes(self) -> list[str]:
        notes = []
        listed = {system_name(m, t) for m, t in self._pairs()}
        folder = self.spec.path / OUTPUTS
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            if path.stem not in listed:
                notes.append(f"{OUTPUTS}/{path.name} is not a listed <model>-<track>: not run")
        for model, track in self._pairs():
            if self.source(model, track) == PRECOMPUTED:
                try:
                    unknown = sorted(set(read_outputs(self._outputs_path(model, track))))
                except CaseInputError:
                    continue  # its tests report it
                unknown = [q for q in unknown if q not in self.by_id and q not in self.broken]
                if unknown:
                    notes.append(
                        f"{OUTPUTS}/{system_name(model, track)}.jsonl answers "
                        f"{len(unknown)} question(s) not in {QUESTIONS}: {', '.join(unknown[:5])}"
                    )
        korean = any(
            q.extra.get("language") in ("ko", "mixed") or _HANGUL.search(q.oracle_text or "")
            for q in self.questions
        )
        unread = cannot_read(self.ocr.name, self.ocr.reader, "ko") if korean else None
        if unread and self._reads_images():
            notes.append(f"{unread}: B1 and C on Korean questions measure that gap")
        return notes

    # -- the plan and the scoring -------------------------------------------------------------

    def plan(self, ref: CaseRef) -> Plan:
        """The stages making `ref`'s answer, by its source (`answering`); results: ``output``
        (an `ExamAnswer`) and, on tracks B1 and C of a served model, ``ocr`` (the image's text).
        Every system reads the image: a question whose image is broken errors everywhere, so no
        system is scored on a question another could not be asked."""
        model, track = ref.labels["model"], get_track(ref.labels["track"])
        if ref.case in self.broken:
            raise CaseInputError("\n".join(self.broken[ref.case].messages))
        question = self.by_id[ref.case]
        image = question.read_image(self.spec.path)
        source = self.source(model, track.name)
        if source == RANDOM:
            seed = int(self.config.settings.get(model, {}).get("seed", 0))
            stages: list[Stage] = [random_stage(question, seed)]
        elif source == PRECOMPUTED:
            path, shown = self._outputs_path(model, track.name), f"{OUTPUTS}/{ref.system}.jsonl"
            stages = saved_answer_stages(path, shown, model, question, self.store)
        else:
            return self._served_plan(ref, question, track, image)
        return Plan(tuple(stages), {"output": stages[-1].key})

    def _served_plan(self, ref: CaseRef, question: Question, track: Track, image: bytes) -> Plan:
        """A served model's answer as a model stage, after the image's OCR stage on tracks B1
        and C (one OCR stage per image: B1 and C, and every model, share it)."""
        handle = self._model(ref.labels["model"], ref.system)
        stages: list[Stage] = []
        results: dict[str, str] = {}
        if track.text == "ocr":
            stages.append(self.ocr.stage(question, image))
            results["ocr"] = stages[0].key
        answer = ServedAnswer(
            handle,
            question,
            track,
            image,
            self.config.settings.get(handle.name, {}),
            ocr_fingerprint=stages[0].fingerprint if stages else None,
            store=self.store,
        )
        needs = tuple(s.key for s in stages)
        stages.append(answer.stage(f"{ref.system} answering {question.id}", needs))
        results["output"] = stages[-1].key
        return Plan(tuple(stages), results)

    def evaluate(self, ref: CaseRef, results: StageResults, ctx: RunContext) -> CaseResult:
        question = self.by_id[ref.case]
        answer: ExamAnswer = results["output"]
        result = CaseResult(
            {},
            fingerprint=dict(answer.fingerprint),
            cache_key=answer.cache_key,
        )
        if "ocr" in results:
            fingerprint = dict(results.fingerprint("ocr") or {})
            ocr = OcrText(results["ocr"], self.ocr.engine, results.key("ocr"), fingerprint)
            report_ocr(question, ocr, result)
        if answer.prompt is not None:
            result.details["prompt"] = answer.prompt
        score = score_output(question, answer.text, self.config.parser)
        result.metrics.update(score.metrics())
        result.details = {**score.details(), "source": answer.source, **result.details}
        result.views = {
            **score.views(),
            **result.views,
            **output_change(answer.text, result.cache_key, ctx),
        }
        return result

    def _model(self, model: str, system: str) -> ModelHandle:
        try:
            return self.systems_env.model(model)
        except SuiteConfigError:
            raise SystemUnavailable(
                f"{system} needs model {model!r}: add [tool.doceval.models.{model}] with base_url "
                f"and model to pyproject.toml, or save its answers as {OUTPUTS}/{system}.jsonl "
                f'beside {self.spec.file.name} (rows {{"id": ..., "output": ...}})'
            ) from None
