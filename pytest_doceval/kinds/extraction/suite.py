"""The ``extraction`` kind: structured data extracted from OCR text, scored against a JSON truth
(seeds 003 and 004), per OCR variant.

Layout::

    cases/<suite>/suite.toml
    cases/<suite>/schema.json                        # optional JSON Schema (Draft 2020-12)
    cases/<suite>/<page>/truth.json
    cases/<suite>/<page>/<variant>.txt               # one OCR text per variant
    cases/<suite>/<page>/outputs/<extractor>/<variant>.json   # saved predictions

``[suite]``: ``kind = "extraction"``; ``mode = "entries"`` (a list of entries aligned one to one,
IMQ; ``[suite.entries]`` names ``list``, ``name``, ``set`` and optionally ``threshold``) or
``"fields"`` (field verdicts, accuracies, NTED; ``[suite.fields]``: ``types``, ``weights``,
``unordered``, ``tau``, ``numeric_tolerance``, ``alpha``, ``day_first``, ``per_field``);
``variants`` (the OCR texts, the first being the reference unless ``reference_variant`` says
otherwise); ``systems``, the extractors. A name with ``outputs/<name>/<variant>.json`` in the
pages is precomputed; a configured model (``[tool.doceval.models.NAME]``) is the LLM extractor
(`extraction_llm`); anything else is an error. Saved outputs win over a model of the same name.
A test's plan is the one stage making its answer (`plan`: the saved file read, or the model's
request on the variant's text); `evaluate` scores that `Answer` and computes nothing else.

One test per (page, extractor, variant), its id ``page[extractor-variant]``, its row labelled
with ``extractor`` and ``variant``, so every aggregate is per variant and the analyses
(`extraction_analyses`) compare variants and extractors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_doceval.config import SuiteSpec
from pytest_doceval.engine import Plan, Stage, StageResults, saved_output_stage
from pytest_doceval.errors import CaseInputError, SuiteConfigError
from pytest_doceval.files import read_text
from pytest_doceval.html.analysis import AnalysisRenderer
from pytest_doceval.html.views import ViewRenderer
from pytest_doceval.kinds.base import CaseRef, RunContext, Suite
from pytest_doceval.kinds.extraction import html
from pytest_doceval.kinds.extraction.analyses import ExtractorPairs, OcrRobustness, VerdictCounts
from pytest_doceval.kinds.extraction.config import (
    MODES,
    EntriesConfig,
    FieldsConfig,
    read_entries,
    read_fields,
    read_names,
    read_schema,
)
from pytest_doceval.kinds.extraction.entries import ENTRY_METRICS, EntryFields, score_entries
from pytest_doceval.kinds.extraction.fields import FIELD_METRICS, score_fields
from pytest_doceval.kinds.extraction.llm import (
    ENTRIES_TASK,
    FIELDS_TASK,
    Answer,
    LLMExtractor,
    Prediction,
    entries_schema,
    entries_shape,
    read_saved_answer,
    read_truth,
)
from pytest_doceval.kinds.extraction.paper import per_variant
from pytest_doceval.kinds.extraction.schema import SCHEMA_METRICS, schema_validity
from pytest_doceval.kinds.extraction.verdicts import FieldOptions
from pytest_doceval.metrics.json_input import ExtractionInputError
from pytest_doceval.metrics.spec import SHARE, MetricSpec
from pytest_doceval.metrics.text import character_alignment
from pytest_doceval.metrics.tree_edit import tree_edit_score
from pytest_doceval.paper import TableBuilder
from pytest_doceval.results import CaseResult
from pytest_doceval.systems import SystemEnv

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

TRUTH = "truth.json"
SCHEMA = "schema.json"
OUTPUTS = "outputs"
# Bump when how a prediction is read or scored changes, so old baselines stop comparing.
# r2: entry names compared by Ratcliff/Obershelp without difflib's autojunk (names of 200+
# characters scored as unrelated before).
SCORING_REVISION = 2
MAX_NOTED_PROBLEMS = 3

# The tree edit distance is metrics.tree_edit's (TEDS uses the same algorithm); the kind that
# measures nTED declares it.
NTED = MetricSpec(
    "lower",
    bounds=SHARE,
    description="Zhang-Shasha tree edit distance / (gold nodes + predicted nodes) (004)",
)
JSON_VALID = MetricSpec(
    "higher",
    binary=True,
    bounds=SHARE,
    description="1 when the output was JSON; 0 (scored as an empty prediction) otherwise",
)


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


class ExtractionSuite(Suite):
    kind = "extraction"
    paper_tables: ClassVar[tuple[TableBuilder, ...]] = (per_variant,)
    html_views: ClassVar[Mapping[str, ViewRenderer]] = {
        "entry_alignment": html.entry_alignment,
        "field_verdicts": html.field_verdicts,
        "schema_errors": html.schema_errors,
    }
    html_analyses: ClassVar[Mapping[str, AnalysisRenderer]] = {
        "ocr_robustness": html.ocr_robustness,
        "verdict_counts": html.verdict_counts,
    }
    suite_keys = frozenset(
        {"kind", "mode", "variants", "reference_variant", "systems"} | set(MODES)
    )
    metrics: ClassVar[Mapping[str, MetricSpec]] = {
        **ENTRY_METRICS,
        **FIELD_METRICS,
        "nted": NTED,
        "json_valid": JSON_VALID,
        **SCHEMA_METRICS,
    }
    analyses = (OcrRobustness(), VerdictCounts(), ExtractorPairs())

    def __init__(self, spec: SuiteSpec, systems_env: SystemEnv) -> None:
        super().__init__(spec, systems_env)
        table, file = spec.table, spec.file
        self.mode = table.get("mode")
        if self.mode not in MODES:
            raise self._error(f'mode must be "entries" or "fields", not {self.mode!r}')
        other = MODES[1 - MODES.index(self.mode)]
        if other in table:
            raise self._error(f"[suite.{other}] does not apply to mode = {self.mode!r}")
        self.variants = read_names(table.get("variants"), "variants", file)
        self.reference = table.get("reference_variant", self.variants[0])
        if self.reference not in self.variants:
            raise self._error(f"reference_variant {self.reference!r} is not one of the variants")
        self.schema: dict[str, Any] | None = None
        self.validator: Draft202012Validator | None = None
        if (spec.path / SCHEMA).exists():
            self.schema, self.validator = read_schema(spec.path / SCHEMA)
        self.entries = EntriesConfig(EntryFields())
        self.fields = FieldsConfig(FieldOptions())
        if self.mode == "entries":
            self.entries = read_entries(table.get("entries"), file)
        else:
            self.fields = read_fields(table.get("fields", {}), file)
        self.cases = sorted(
            p.name
            for p in spec.path.iterdir()
            if p.is_dir() and not p.name.startswith((".", "_")) and p.name != OUTPUTS
        )
        if not self.cases:
            raise self._error("the suite has no page folders beside it")
        self.extractors = read_names(table.get("systems"), "systems", file)
        self.llms: dict[str, LLMExtractor] = {}
        self.kinds = {name: self._extractor_kind(name) for name in self.extractors}
        self._check_ids()

    # -- configuration ------------------------------------------------------------------------

    def _error(self, message: str) -> SuiteConfigError:
        return SuiteConfigError(f"{self.spec.file}: {message}")

    def _output_path(self, case: str, extractor: str, variant: str) -> Path:
        return self.spec.path / case / OUTPUTS / extractor / f"{variant}.json"

    def _extractor_kind(self, name: str) -> str:
        """``precomputed`` or ``llm``; builds the LLM extractor, checks settings."""
        settings = self.spec.system_settings.get(name)
        saved = any(
            self._output_path(c, name, v).is_file() for c in self.cases for v in self.variants
        )
        models = self.systems_env.models
        configured = sorted(models.configs) if models is not None else []
        if saved:
            if settings:
                raise self._error(f"[systems.{name}]: a precomputed extractor takes no settings")
            return "precomputed"
        if name not in configured:
            raise self._error(
                f"unknown extractor {name!r}: no page has {OUTPUTS}/{name}/<variant>.json and "
                f"no model [tool.doceval.models.{name}] is configured (configured: "
                f"{', '.join(configured) or 'none'})"
            )
        self.llms[name] = LLMExtractor.build(
            name,
            self.systems_env.model(name),
            settings or {},
            task=self._task(),
            schema=self._answer_schema(),
            where=str(self.spec.file),
        )
        return "llm"

    def _check_ids(self) -> None:
        extra = sorted(set(self.spec.system_settings) - set(self.extractors))
        if extra:
            raise self._error(f"[systems.{extra[0]}] configures an extractor not in systems")
        seen: dict[str, tuple[str, str]] = {}
        for extractor in self.extractors:
            for variant in self.variants:
                system = f"{extractor}-{variant}"
                if system in seen:
                    raise self._error(
                        f"test id {system!r} is both {seen[system]} and {(extractor, variant)}: "
                        "rename an extractor or a variant"
                    )
                seen[system] = (extractor, variant)

    def _task(self) -> str:
        if self.mode == "fields":
            return FIELDS_TASK
        f = self.entries.fields
        return ENTRIES_TASK.format(shape=entries_shape(f.list, f.name, f.set))

    def _answer_schema(self) -> dict[str, Any] | None:
        if self.schema is not None or self.mode == "fields":
            return self.schema
        f = self.entries.fields
        return entries_schema(f.list, f.name, f.set)

    # -- the Suite interface ------------------------------------------------------------------

    @property
    def scoring_id(self) -> str:
        """Mode, revision and a digest of everything that changes the numbers (entry keys and
        threshold, field options, the schema): numbers under other options do not compare."""
        o = self.fields.options
        options: dict[str, Any] = {
            "entries": [*vars(self.entries.fields).values(), self.entries.threshold]
        }
        if self.mode == "fields":
            options = {
                "types": dict(o.types),
                "weights": dict(o.weights),
                "unordered": sorted(o.unordered),
                "numbers": [o.fuzzy_threshold, o.numeric_tolerance, o.alpha, o.day_first],
            }
        options["schema"] = self.schema
        return f"{self.mode}@r{SCORING_REVISION}-{_digest(options)}"

    def system_names(self) -> list[str]:
        return [f"{e}-{v}" for e in self.extractors for v in self.variants]

    def case_refs(self) -> list[CaseRef]:
        return [
            CaseRef(case, f"{e}-{v}", {"extractor": e, "variant": v})
            for case in self.cases
            for e in self.extractors
            for v in self.variants
        ]

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {
            "mode": self.mode,
            "variants": list(self.variants),
            "reference_variant": self.reference,
            "extractors": dict(self.kinds),
            "schema": self.schema is not None,
        }
        if self.mode == "entries":
            f = self.entries.fields
            out["entries"] = {"list": f.list, "name": f.name, "set": f.set}
        return out

    def notes(self) -> list[str]:
        notes = []
        models = self.systems_env.models
        for name, kind in self.kinds.items():
            if kind == "precomputed" and models is not None and name in models.configs:
                notes.append(
                    f"{name}: its saved outputs are scored; the configured model of that name "
                    f"is not called (rename {OUTPUTS}/{name} to run it)"
                )
        return notes

    def plan(self, ref: CaseRef) -> Plan:
        """The stage making the extractor's answer for (page, variant): reading its saved
        output, or an LLM extractor's request on the variant's OCR text. Result: ``output``,
        the read `Answer`. A missing saved output or OCR text is the test's error."""
        extractor, variant = ref.labels["extractor"], ref.labels["variant"]
        llm = self.llms.get(extractor)
        if llm is None:
            stage = self._saved_answer_stage(ref.case, extractor, variant)
        else:
            stage = self._model_answer_stage(llm, ref.case, variant)
        return Plan((stage,), {"output": stage.key})

    def _saved_answer_stage(self, case: str, extractor: str, variant: str) -> Stage:
        """A precomputed extractor's saved output, read as bytes into an `Answer` (a file that
        is not UTF-8 scores as an empty prediction, not an error)."""
        path = self._output_path(case, extractor, variant)
        source = f"{OUTPUTS}/{extractor}/{variant}.json"
        return saved_output_stage(
            path,
            what=f"precomputed output of {extractor}",
            label=f"{source} of {case}",
            read=read_saved_answer,
            args=(path, extractor, source),
        )

    def _model_answer_stage(self, llm: LLMExtractor, case: str, variant: str) -> Stage:
        path = self.spec.path / case / f"{variant}.txt"
        text = read_text(path, f"OCR text of variant {variant!r}")
        return llm.stage(text, case=f"{case} ({variant})")

    def evaluate(self, ref: CaseRef, results: StageResults, ctx: RunContext) -> CaseResult:
        extractor, variant = ref.labels["extractor"], ref.labels["variant"]
        truth_path = self.spec.path / ref.case / TRUTH
        truth = read_truth(truth_path)
        answer: Answer = results["output"]
        prediction, source = answer.prediction, answer.source
        notes: list[str] = []
        if not prediction.valid:
            notes.append(f"{source} is {prediction.problem}: scored as an empty prediction")
        try:
            result = self._score(truth, prediction, notes)
        except ExtractionInputError as exc:
            raise CaseInputError(f"{truth_path} / {source}: {exc}") from None
        except RecursionError:  # a truth nested beyond what the tree walks can follow
            raise CaseInputError(f"{truth_path} / {source}: nested too deeply to score") from None
        metrics, details, views, counts = result
        details = {"extractor": extractor, "variant": variant, **details}
        return CaseResult(
            metrics=metrics,
            details=details,
            counts=counts,
            views=views,
            fingerprint={**answer.fingerprint, "variant": variant},
            notes=notes,
        )

    def _score(
        self, truth: Any, prediction: Prediction, notes: list[str]
    ) -> tuple[dict[str, float], dict[str, Any], dict[str, Any], dict[str, dict[str, float]]]:
        """Every metric of the suite's mode for one prediction, with details, views and
        counts."""
        value = prediction.value
        metrics: dict[str, float] = {"json_valid": float(prediction.valid)}
        details: dict[str, Any] = {"json_problem": prediction.problem}
        views: dict[str, Any] = {}
        counts: dict[str, dict[str, float]] = {}
        if self.mode == "entries":
            entries = score_entries(
                truth, value, self.entries.fields, threshold=self.entries.threshold
            )
            metrics.update(entries.metrics())
            missing = sum(p.pred is None for p in entries.pairs)
            spurious = sum(p.gold is None for p in entries.pairs)
            details["entry_counts"] = {
                "gold": entries.n_gold,
                "predicted": entries.n_pred,
                "matched": entries.true_positives,
                "below_threshold": entries.n_gold - missing - entries.true_positives,
                "missing": missing,
                "spurious": spurious,
                "unreadable": len(entries.problems),
            }
            views["entry_alignment"] = entries.view()
            problems = list(entries.problems) if prediction.valid else []
        else:
            fields = score_fields(truth, value, self.fields.options)
            metrics.update(fields.metrics(per_field=self.fields.per_field))
            metrics.update(tree_edit_score(truth, value).metrics())
            details["verdict_counts"] = fields.counts
            counts = fields.pooled_counts()
            views["field_verdicts"] = fields.view()
            problems = []
        if problems:
            shown = "; ".join(problems[:MAX_NOTED_PROBLEMS])
            more = len(problems) - MAX_NOTED_PROBLEMS
            notes.append(
                f"unreadable in the prediction: {shown}" + (f" (+{more})" if more > 0 else "")
            )
        if self.validator is not None:
            gold_check = schema_validity(truth, self.validator)
            if not gold_check.valid:
                notes.append(f"{TRUTH} does not follow {SCHEMA}: {gold_check.errors[0].message}")
            if prediction.valid:
                schema = schema_validity(value, self.validator)
                metrics.update(schema.metrics())
                if not schema.valid:
                    views["schema_errors"] = schema.to_dict()
            else:
                metrics["schema_valid"] = 0.0
        ops = character_alignment(_pretty(truth), _pretty(value)).ops
        views["text_diff"] = {"metric": "json", "ops": ops}
        return metrics, details, views, counts
