"""The ``omnidocbench`` kind: OmniDocBench v1.6's end-to-end evaluation as a pytest suite.

Layout::

    cases/<suite>/suite.toml
    cases/<suite>/OmniDocBench.json                 the benchmark's annotation file
    cases/<suite>/images/<page image>               its page images
    cases/<suite>/outputs/<system>/<image stem>.md  a precomputed system (or .mmd)

``[suite]`` keys: ``kind = "omnidocbench"``, ``annotations`` (the annotation file, relative to
the suite folder or absolute; default ``OmniDocBench.json``), ``images`` (the folder of page
images, likewise; default ``images``), ``systems`` (required: registered parsers, which read each
page image as an engine stage, or folders ``outputs/<system>/`` of saved predictions),
``reference`` (optional: a checkout of OmniDocBench's code, likewise; its own code then gives
``text_edit``, ``formula_edit`` and ``reading_order_edit``, see `reference`).

One test per (page, system): the case is the page image's name without its extension, labelled
with the page's ``page_attribute`` (language, layout, data_source, special_issue). Its metrics
are `scoring.score_page`'s, OmniDocBench's own per-page numbers; the report's ``omnidocbench``
analysis gives `scoring.leaderboard` over the pages, overall and per page-attribute group.

A registered parser's output is made only by its stage (`stages`); `evaluate` reads it from the
engine and scores it, and a stage output that is not there is an error naming the page and the
stage. CDM (and so ``overall``) is not computed: the suite's notes say so, never a 0.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pytest_doceval.config import SuiteSpec
from pytest_doceval.engine import Plan, Stage, StageResults, saved_output_stage
from pytest_doceval.errors import CaseInputError, DocevalError, SuiteConfigError
from pytest_doceval.html.analysis import AnalysisRenderer
from pytest_doceval.html.views import ViewRenderer
from pytest_doceval.kinds.base import (
    CaseRef,
    RunContext,
    Suite,
    check_system_settings,
    system_list,
)
from pytest_doceval.kinds.omnidocbench import html
from pytest_doceval.kinds.omnidocbench.markdown_tables import predicted_tables
from pytest_doceval.kinds.omnidocbench.paper import leaderboard_table
from pytest_doceval.kinds.omnidocbench.reference import checkout_of
from pytest_doceval.kinds.omnidocbench.scoring import (
    PageScore,
    not_computed,
    score_page,
    scoring_id,
)
from pytest_doceval.kinds.omnidocbench.suite_analysis import (
    LeaderboardAnalysis,
    counts_key,
    row_counts,
)
from pytest_doceval.kinds.omnidocbench.suite_pages import (
    Page,
    find_prediction,
    listed_attributes,
    load_pages,
    parse_page_image,
    prediction_candidates,
)
from pytest_doceval.kinds.omnidocbench.tables import page_grits, page_tables
from pytest_doceval.metrics.spec import SHARE, MetricSpec
from pytest_doceval.paper import TableBuilder
from pytest_doceval.results import CaseResult
from pytest_doceval.store import file_digest
from pytest_doceval.systems import SystemEnv
from pytest_doceval.systems.sources import SavedOutputs, precomputed_fingerprint, resolve_sources
from pytest_doceval.systems.staged import parse_stages

OUTPUTS = "outputs"
CDM_TOOLS = {"TeX Live": "pdflatex", "ImageMagick": "convert", "Ghostscript": "gs"}


def _edit(what: str, metric: str) -> MetricSpec:
    return MetricSpec(
        "lower",
        pooled=counts_key(metric),
        bounds=SHARE,
        description=f"{what}: OmniDocBench v1.6's per-page Σ edits / Σ max(len) over its blocks",
    )


def cdm_note() -> str:
    """Why ``formula_cdm`` and ``overall`` are absent, naming what this machine lacks."""
    missing = [name for name, tool in CDM_TOOLS.items() if shutil.which(tool) is None]
    head = "formula_cdm and overall: not computed"
    needs = "needs TeX Live, ImageMagick, Ghostscript"
    if missing:
        return f"{head} ({needs}; missing here: {', '.join(missing)})"
    return f"{head} (CDM {needs}, and this package does not run it)"


class OmniDocBenchSuite(Suite):
    kind = "omnidocbench"
    suite_keys = frozenset({"kind", "annotations", "images", "systems", "reference"})
    metrics: ClassVar[Mapping[str, MetricSpec]] = {
        "text_edit": _edit("Text Edit (text blocks)", "text_edit"),
        "formula_edit": _edit("display formulas' edit distance", "formula_edit"),
        "table_teds": MetricSpec(
            "higher", bounds=SHARE, description="Table TEDS (its table normaliser and pairing)"
        ),
        "table_teds_s": MetricSpec(
            "higher", bounds=SHARE, description="Table TEDS-S: table structure only"
        ),
        "reading_order_edit": _edit("Read Order Edit", "reading_order_edit"),
        "grits_con": MetricSpec(
            "higher",
            bounds=SHARE,
            description="GriTS-Con of the page's tables (Smock et al. 2023; not an OmniDocBench "
            "number): cell texts on the tables' grids, F1 over cells",
        ),
        "grits_top": MetricSpec(
            "higher", bounds=SHARE, description="GriTS-Top: the tables' cell spans on their grids"
        ),
    }
    analyses = (LeaderboardAnalysis(),)
    paper_tables: ClassVar[tuple[TableBuilder, ...]] = (leaderboard_table,)
    html_views: ClassVar[Mapping[str, ViewRenderer]] = {"blocks": html.blocks}
    html_analyses: ClassVar[Mapping[str, AnalysisRenderer]] = {"omnidocbench": html.leaderboard}

    def __init__(self, spec: SuiteSpec, systems_env: SystemEnv) -> None:
        super().__init__(spec, systems_env)
        self.annotations = self._path("annotations", "OmniDocBench.json")
        self.images = self._path("images", "images")
        self.reference = checkout_of(spec.table.get("reference"), spec.path, spec.file)
        self.pages: dict[str, Page] = {p.case: p for p in load_pages(self.annotations, spec.file)}
        self.systems = system_list(spec.table.get("systems"), spec.file)
        check_system_settings(spec.system_settings, self.systems, spec.file)
        self.sources, self._notes = resolve_sources(
            systems_env, self.systems, self._saved, reads="reads the page images"
        )
        self._digests: dict[Path, str] = {}

    def _path(self, key: str, default: str) -> Path:
        value = self.spec.table.get(key, default)
        if not isinstance(value, str) or not value:
            raise SuiteConfigError(f"{self.spec.file}: [suite] {key} must be a path (text)")
        return self.spec.path / value  # an absolute value replaces the folder

    def _saved(self, system: str) -> SavedOutputs:
        folder = self.spec.path / OUTPUTS / system
        return SavedOutputs(folder.is_dir(), f"folder {OUTPUTS}/{system}/ beside the suite")

    @property
    def scoring_id(self) -> str:
        """OmniDocBench's version and commit whose definitions the numbers follow (and whether
        its own code from `reference` made the text numbers)."""
        return scoring_id(self.reference)

    def case_refs(self) -> list[CaseRef]:
        return [
            CaseRef(case, system, page.labels())
            for case, page in sorted(self.pages.items())
            for system in self.systems
        ]

    def system_names(self) -> list[str]:
        return list(self.systems)

    def describe(self) -> dict[str, object]:
        return {
            "annotations": str(self.annotations),
            "images": str(self.images),
            "pages": len(self.pages),
            "listed_attributes": listed_attributes(list(self.pages.values())),
        }

    def notes(self) -> list[str]:
        """The systems' notes, then each metric the scoring does not give, with its reason."""
        missing = [f"{metric}: {why}" for metric, why in not_computed(self.reference).items()]
        used = [self.reference.note()] if self.reference is not None else []
        return [*self._notes, *used, *missing, cdm_note()]

    # -- one test ------------------------------------------------------------------------------

    def plan(self, ref: CaseRef) -> Plan:
        """A registered parser's reading of the page image (a two-stage system's model stage
        after it), or the saved prediction: the result ``output``. A missing image or
        prediction is the test's error."""
        page = self.pages[ref.case]
        if self.sources[ref.system].parsed:
            stages = self._stages(ref.system, page, self._image(page))
        else:
            label = f"prediction of {ref.system} for page {page.image}"
            path = self._prediction(ref, page)
            stages = [saved_output_stage(path, what="prediction", label=label)]
        return Plan(tuple(stages), {"output": stages[-1].key})

    def evaluate(self, ref: CaseRef, results: StageResults, ctx: RunContext) -> CaseResult:
        page = self.pages[ref.case]
        prediction: str = results["output"]
        key: str | None
        saved = results.stages["output"].saved_file
        if saved is None:  # read by the system
            fingerprint = dict(results.fingerprint("output") or {})
            key, source = results.key("output"), self.images / page.image
            empty = f"{ref.system} returned no text for {page.image}"
        else:
            source = saved
            fingerprint = precomputed_fingerprint(ref.system, prediction)
            key, empty = None, f"{source} is empty"
        notes = [] if prediction.strip() else [f"{empty}: scored as an empty page"]
        try:
            score = score_page(page.annotation, prediction, self.reference)
        except DocevalError as exc:
            raise type(exc)(f"page {page.image} ({self.annotations.name}): {exc}") from None
        metrics = {m: float(v) for m, v in score.metrics.items()}
        if "table_teds" in metrics:  # the page has tables: GriTS beside its TEDS
            truth = page_tables(page.annotation)
            metrics |= page_grits(truth, predicted_tables(prediction).tables)
        return CaseResult(
            metrics=metrics,
            counts=row_counts(score),
            details={"image": page.image, "page": page.index + 1, "prediction": str(source)},
            views={"blocks": blocks_view(score)},
            fingerprint=fingerprint,
            cache_key=key,
            notes=notes + [n for n in score.notes if n not in notes],
        )

    def _prediction(self, ref: CaseRef, page: Page) -> Path:
        """Where the saved prediction of `page` is, as OmniDocBench looks for it."""
        folder = self.spec.path / OUTPUTS / ref.system
        path = find_prediction(folder, page.image)
        if path is None:
            tried = ", ".join(p.name for p in prediction_candidates(folder, page.image))
            raise CaseInputError(
                f"page {page.image}: missing prediction of {ref.system} in {folder} (tried {tried})"
            )
        return path

    def _image(self, page: Page) -> Path:
        image = self.images / page.image
        if not image.is_file():
            raise CaseInputError(f"page {page.image}: missing page image {image}")
        return image

    def _stages(self, system: str, page: Page, image: Path) -> list[Stage]:
        if image not in self._digests:
            self._digests[image] = file_digest(image)
        return parse_stages(
            system,
            self.systems_env.system,
            input_digest=self._digests[image],
            call=parse_page_image,
            args=(image,),
            what=f"page {page.image}",
            case=page.case,
        )


def blocks_view(score: PageScore) -> dict[str, Any]:
    """``blocks``: the page's blocks as matched (normalised texts, edit, reading order)."""
    return {
        "blocks": [
            {
                "category": b.category,
                "truth": b.truth,
                "prediction": b.prediction,
                "edit": b.edit,
                "max_len": b.max_len,
                "order_truth": b.order_truth,
                "order_prediction": b.order_prediction,
            }
            for b in score.blocks
        ]
    }
