"""The ``documents`` kind: PDFs parsed by each system and scored against ``truth.md``.

Layout::

    cases/<suite>/suite.toml
    cases/<suite>/<case>/document.pdf
    cases/<suite>/<case>/truth.md
    cases/<suite>/<case>/outputs/<system>.md      # optional precomputed output

``[suite]`` keys: ``kind = "documents"``, ``systems`` (required), ``language`` (``en`` | ``ko``
| ``mixed``, default ``en``), ``normalization`` (default ``fair-v1``), ``teds`` (``fair``, the
default, or ``pubtabnet``: PubTabNet's own TEDS for ``table_teds``/``table_teds_s``). A name in
``systems`` that is not a registered parser but has ``outputs/<name>.md`` in the cases is a
precomputed system.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pytest_doceval.config import SuiteSpec
from pytest_doceval.engine import Plan, StageResults, saved_output_stage
from pytest_doceval.errors import CaseInputError, SuiteConfigError
from pytest_doceval.files import read_text
from pytest_doceval.html.views import ViewRenderer
from pytest_doceval.kinds.analyses import AllPairs
from pytest_doceval.kinds.base import CaseRef, RunContext, Suite, check_system_settings, system_list
from pytest_doceval.kinds.documents import html
from pytest_doceval.kinds.documents.chunks import (
    SentenceBatches,
    chunk_quality,
    embeddings_stage,
)
from pytest_doceval.kinds.documents.document_score import score_document
from pytest_doceval.kinds.documents.headings import HEADING_METRICS, heading_scores
from pytest_doceval.kinds.documents.insertions import CER_DOMINANCE
from pytest_doceval.kinds.documents.paper import per_parser, table3
from pytest_doceval.kinds.documents.reading_order import READING_ORDER_METRICS, reading_order
from pytest_doceval.kinds.documents.tables import TABLE_METRICS, TEDS_READINGS, score_tables
from pytest_doceval.kinds.views import output_change
from pytest_doceval.metrics.spec import RATE, SHARE, MetricSpec
from pytest_doceval.metrics.text import character_alignment
from pytest_doceval.models.embeddings import Embedder
from pytest_doceval.paper import TableBuilder
from pytest_doceval.results import CaseResult
from pytest_doceval.store import file_digest
from pytest_doceval.systems import SystemEnv
from pytest_doceval.systems.sources import (
    SavedOutputs,
    precomputed_fingerprint,
    resolve_sources,
    unread_language_notes,
)
from pytest_doceval.systems.staged import parse_file, parse_stages
from pytest_doceval.text.normalise import PROFILES
from pytest_doceval.text.tokenise import LANGUAGES

DOCUMENT = "document.pdf"
TRUTH = "truth.md"
OUTPUTS = "outputs"
# Bump when a normalisation step, the references split or a metric changes what it computes:
# baselines made before then stop comparing (their scoring id differs) instead of drifting.
# r2: line endings unified first, exact References headings, blank pages scored, fair-v1 steps
# fixed against seed 002 (footnotes, e-mail links, author-year, HTML tags, C1 controls).
# r3: Boundary Coherence counts only anchored cuts (the output's text on both sides of a cut
# must be the truth's there), so unrelated or degenerate outputs no longer score by chance.
# r4: the references cut recognises numbered, deeper, other-case and other-word headings
# (`7. REFERENCES`, `#### References`, `Works Cited`, `참고문헌`): body_cer moves; ned added.
# Boundary Coherence reads every run of line breaks as one paragraph break and leaves text the
# alignment inserted out of its chunking (repeats cannot lift it, separators cannot move it).
# Tables are read as pandoc reads them (a headerless table has no thead).
SCORING_REVISION = 4


def _rate(description: str, counts: str, **more: Any) -> MetricSpec:
    return MetricSpec("lower", counts=counts, description=description, bounds=RATE, **more)


class DocumentsSuite(Suite):
    kind = "documents"
    suite_keys = frozenset(
        {"kind", "systems", "language", "normalization", "vlm", "embedder", "teds"}
    )
    paper_tables: ClassVar[tuple[TableBuilder, ...]] = (table3, per_parser)
    html_views: ClassVar[Mapping[str, ViewRenderer]] = {"tables": html.tables}
    metrics: ClassVar[Mapping[str, MetricSpec]] = {
        "cer": _rate(
            "character error rate after the normalisation profile (seed 002); unbounded: "
            "insertions on a short truth can exceed 1",
            "cer",
            flag_dominance=CER_DOMINANCE,
            threshold=0.2,  # the tail: more than one character in five wrong
        ),
        "ned": MetricSpec(
            "lower",
            counts="ned",
            bounds=SHARE,
            description="normalised edit distance: CER's edits / the longer normalised text, "
            "in [0, 1] (OmniDocBench's text metric)",
        ),
        "wer": _rate("word error rate, tokenised for the suite's language", "wer"),
        "body_cer": _rate("CER of the bodies, both cut before their references", "body_cer"),
        "cer_raw": _rate("CER after Unicode NFC only (no fair normalisation)", "cer_raw"),
        "structure_f1": MetricSpec(
            "higher",
            bounds=SHARE,
            description="F1 of headings, list items, table rows, code blocks",
        ),
        "refs_delta": MetricSpec(
            "lower", description="cer - body_cer: what the references section adds to CER"
        ),
        "structure_precision": MetricSpec(
            "higher",
            bounds=SHARE,
            description="share of output structure elements found in the truth",
        ),
        "structure_recall": MetricSpec(
            "higher",
            bounds=SHARE,
            description="share of truth structure elements found in the output",
        ),
        "boundary_coherence": MetricSpec(
            "higher",
            bounds=SHARE,
            description="share of the truth's section and paragraph breaks where the output's "
            "500/50 chunks start (within 20 characters, with the truth's text on both sides); "
            "a perfect output reaches the truth's own ceiling, often below 1",
        ),
        "chunk_score": MetricSpec(
            "higher",
            bounds=SHARE,
            description="mean over chunks of their sentences' mean cosine similarity "
            "(1 - embedding variance); compares only under one embedder",
        ),
        **TABLE_METRICS,
        **READING_ORDER_METRICS,
        **HEADING_METRICS,
        "structure_precision_*": MetricSpec("higher", bounds=SHARE, headline=False),
        "structure_recall_*": MetricSpec("higher", bounds=SHARE, headline=False),
        "structure_f1_*": MetricSpec("higher", bounds=SHARE, headline=False),
    }
    analyses = (AllPairs(),)

    def __init__(self, spec: SuiteSpec, systems_env: SystemEnv) -> None:
        super().__init__(spec, systems_env)
        table = spec.table
        self.language = table.get("language", "en")
        if self.language not in LANGUAGES:
            raise SuiteConfigError(
                f"{spec.file}: language {self.language!r} is not one of {', '.join(LANGUAGES)}"
            )
        self.normalization: str = str(table.get("normalization", "fair-v1"))
        if self.normalization not in PROFILES or self.normalization == "raw":
            known = ", ".join(p for p in PROFILES if p != "raw")
            raise SuiteConfigError(
                f"{spec.file}: normalization {self.normalization!r} is not a profile ({known})"
            )
        self.teds: str = str(table.get("teds", "fair"))
        if self.teds not in TEDS_READINGS:
            raise SuiteConfigError(
                f"{spec.file}: teds {self.teds!r} is not one of {', '.join(TEDS_READINGS)}"
            )
        self.cases = sorted(
            p.name
            for p in spec.path.iterdir()
            if p.is_dir() and not p.name.startswith((".", "_")) and p.name != OUTPUTS
        )
        if not self.cases:
            raise SuiteConfigError(f"{spec.file}: the suite has no case folders beside it")
        embedder = table.get("embedder") or systems_env.defaults.get("embedder")
        self.embedder_setting: str | None = str(embedder) if embedder else None
        self._embedder: Embedder | None = None
        self._sentence_batches = SentenceBatches()
        self.systems = system_list(table.get("systems"), spec.file)
        check_system_settings(spec.system_settings, self.systems, spec.file)
        self.sources, self._source_notes = resolve_sources(
            systems_env,
            self.systems,
            self._saved,
            reads="parses each case's PDF",
            saved_names=self._saved_systems,
        )

    def _saved_systems(self) -> set[str]:
        return {p.stem for c in self.cases for p in (self.spec.path / c / OUTPUTS).glob("*.md")}

    def _saved(self, system: str) -> SavedOutputs:
        exist = any(self._output_path(case, system).is_file() for case in self.cases)
        return SavedOutputs(exist, f"{OUTPUTS}/{system}.md in any case")

    @property
    def scoring_id(self) -> str:
        """The normalisation profile and the revision of this kind's scoring rules: numbers
        under another profile, or from before a fix to the rules, do not compare."""
        scoring = f"{self.normalization}@r{SCORING_REVISION}"
        if self.teds != "fair":  # another TEDS: table numbers do not compare
            scoring += f"+teds-{self.teds}"
        return f"{scoring}+{self.embedder_setting}" if self.embedder_setting else scoring

    def embedder(self) -> Embedder | None:
        """The chunk-score embedder, built on first use (loading a model takes seconds)."""
        if self.embedder_setting and self._embedder is None:
            from pytest_doceval.kinds.documents.chunks import make_embedder

            self._embedder = make_embedder(
                self.embedder_setting, env=self.systems_env, source=str(self.spec.file)
            )
        return self._embedder

    def system_names(self) -> list[str]:
        return list(self.systems)

    def _output_path(self, case: str, system: str) -> Path:
        return self.spec.path / case / OUTPUTS / f"{system}.md"

    def case_refs(self) -> list[CaseRef]:
        return [CaseRef(case, system) for case in self.cases for system in self.systems]

    def describe(self) -> dict[str, object]:
        described: dict[str, object] = {
            "language": self.language,
            "normalization": self.normalization,
            "teds": self.teds,
        }
        if self.teds == "pubtabnet":
            from pytest_doceval.kinds.documents.teds_pubtabnet import pandoc_version

            # markdown tables are scored on the HTML this pandoc writes of them
            described["teds_markdown_html"] = pandoc_version() or "pandoc not installed"
        return described

    def notes(self) -> list[str]:
        unread = unread_language_notes(self.sources.values(), self.language)
        return [*self._source_notes, *unread]

    def plan(self, ref: CaseRef) -> Plan:
        """A registered system's parse of the case's PDF (a two-stage system's stage 1, then
        its model stage), or the saved ``outputs/<system>.md``; with an embedder, then the
        embeddings of the output's sentences. Results: ``output`` (and a two-stage system's
        ``stage1``, and ``vectors``)."""
        case_dir = self.spec.path / ref.case
        results: dict[str, str] = {}
        if self.sources[ref.system].parsed:
            pdf = case_dir / DOCUMENT
            if not pdf.is_file():
                raise CaseInputError(f"{pdf}: missing document for system {ref.system}")
            stages = parse_stages(
                ref.system,
                self.systems_env.system,
                input_digest=file_digest(pdf),
                call=parse_file,
                args=(pdf,),
                what=f"{ref.case}/{DOCUMENT}",
                case=ref.case,
            )
            if len(stages) > 1:  # a two-stage system: where did text get lost? (seed 000 3.2.6)
                results["stage1"] = stages[-2].key
        else:
            stages = [
                saved_output_stage(
                    self._output_path(ref.case, ref.system),
                    what="precomputed output",
                    label=f"{OUTPUTS}/{ref.system}.md of {ref.case}",
                )
            ]
        results["output"] = stages[-1].key
        embedder = self.embedder()
        if embedder is not None:
            kind, _, target = (self.embedder_setting or "").partition(":")
            embed = embeddings_stage(
                embedder,
                self.store,
                model=target if kind == "model" else None,
                output_key=stages[-1].key,
                label=f"sentence embeddings of {ref.system} on {ref.case}",
                case=ref.case,
                batches=self._sentence_batches,
            )
            stages.append(embed)
            results["vectors"] = embed.key
        return Plan(tuple(stages), results)

    def evaluate(self, ref: CaseRef, results: StageResults, ctx: RunContext) -> CaseResult:
        case_dir = self.spec.path / ref.case
        truth = read_text(case_dir / TRUTH, "truth file")
        if not truth.strip():
            raise CaseInputError(
                f"{case_dir / TRUTH}: truth file is empty (nothing but whitespace): there is no "
                "text to score against; write the page's text, or remove the case"
            )
        output: str = results["output"]
        notes: list[str] = []
        views: dict[str, Any] = {}
        fingerprint: Mapping[str, Any] | None = results.fingerprint("output")
        key: str | None = results.key("output")
        if results.stages["output"].saved_file is None:  # parsed by the system
            from pytest_doceval.systems.pdf import repair_note  # PyMuPDF: only when parsing

            repair = repair_note(case_dir / DOCUMENT)
            if repair and not output.strip():
                raise CaseInputError(
                    f"{case_dir / DOCUMENT}: damaged PDF: {repair}, and {ref.system} found no "
                    "text in what it rebuilt; fix or replace the file (nothing was scored)"
                )
            if repair:
                notes.append(f"damaged {DOCUMENT}: {repair}; scored on the repaired document")
            if not output.strip():
                notes.append(f"{ref.system} returned no text for {DOCUMENT}")
            stage1 = results.get("stage1")
            if stage1 is not None and stage1 != output:
                # Seed 000 3.2.6: where did text get lost, in the parser or in the model?
                ops = character_alignment(stage1, output).ops
                views["stage_diff"] = {"ops": ops, "stage1": results.stages["stage1"].system}
        else:
            if not output.strip():
                notes.append(f"{OUTPUTS}/{ref.system}.md is empty")
            fingerprint = precomputed_fingerprint(ref.system, output)
            key = None
        score = score_document(
            truth, output, language=self.language, normalization=self.normalization
        )
        tables = score_tables(truth, output, reading=self.teds)
        heads = heading_scores(truth, output)
        vectors = results.get("vectors")
        chunks = chunk_quality(truth, output, embedder=self.embedder(), vectors=vectors)
        if chunks.metrics.get("chunk_score", 0.0) != chunks.metrics.get("chunk_score", 0.0):
            del chunks.metrics["chunk_score"]  # NaN: no chunk with two sentences to compare
            notes.append("chunk_score: no chunk of the output has two sentences to compare")
        notes += chunks.notes
        return CaseResult(
            metrics={
                **score.metrics,
                **tables.metrics,
                **reading_order(truth, output),
                **heads.metrics,
                **chunks.metrics,
            },
            counts={**score.counts, **tables.counts},
            details={"structure_counts": score.structure_counts, **chunks.details},
            views={
                "text_diff": score.diff,
                **tables.views,
                **views,
                **output_change(output, key, ctx),
            },
            fingerprint=dict(fingerprint or {}),
            cache_key=key,
            notes=notes + score.notes + tables.notes + heads.notes,
            flags={**score.flags, **chunks.flags},
        )
