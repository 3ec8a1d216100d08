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
``cdm`` (default true: Formula CDM where TeX Live is installed), ``base_pages`` (optional:
OmniDocBench v1.5's annotation file, or a text file of image names: those pages are the Base
tier, the others Hard), ``reference`` (optional: a checkout of OmniDocBench's code, likewise;
its own code then gives ``text_edit``, ``formula_edit`` and ``reading_order_edit``, the
opt-in cross-check of `reference`).

One test per (page, system): the case is the page image's name without its extension, labelled
with the page's ``page_attribute`` (language, layout, data_source, special_issue) and its tier.
Its metrics are `scoring.score_page`'s, OmniDocBench's own per-page numbers, and ``formula_cdm``
from the page's CDM stage; the report's ``omnidocbench`` analysis gives `scoring.leaderboard`
(with Overall) over the pages, per tier and per page-attribute group.

A registered parser's output is made only by its stage (`stages`); `evaluate` reads it from the
engine and scores it, and a stage output that is not there is an error naming the page and the
stage. CDM renders each formula with pdflatex (about a second a formula), so it is a CPU stage
of its own per page, after the output's and after the run's CDM canary (`cdm`): it runs on the
run's executor beside the parsing, counts as the evaluation's cost, and its scores are kept in
the run's cache (a warm run renders nothing).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pytest_doceval.config import SuiteSpec, find_project_root
from pytest_doceval.engine import CpuStage, Plan, Stage, StageResults, saved_output_stage
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
from pytest_doceval.kinds.omnidocbench.cdm import (
    CDM_REVISION,
    CdmTools,
    canary,
    cdm_tools,
    page_cdm,
    read_page_cdm,
)
from pytest_doceval.kinds.omnidocbench.identity import ScorerIdentity, annotations_sha256
from pytest_doceval.kinds.omnidocbench.markdown_tables import predicted_tables
from pytest_doceval.kinds.omnidocbench.paper import leaderboard_lines, leaderboard_table
from pytest_doceval.kinds.omnidocbench.reference import checkout_of
from pytest_doceval.kinds.omnidocbench.scoring import (
    PageScore,
    cdm_page,
    formula_lines,
    has_display_formula,
    score_page,
)
from pytest_doceval.kinds.omnidocbench.suite_analysis import (
    LeaderboardAnalysis,
    counts_key,
    row_counts,
)
from pytest_doceval.kinds.omnidocbench.suite_pages import (
    Page,
    base_page_names,
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
from pytest_doceval.store import cache_key, file_digest
from pytest_doceval.systems import SystemEnv
from pytest_doceval.systems.sources import SavedOutputs, precomputed_fingerprint, resolve_sources
from pytest_doceval.systems.staged import parse_stages

OUTPUTS = "outputs"
CDM_RESULT = "cdm/"  # the plan's results "cdm/0", "cdm/1", ...: a page's CDM shares
CDM_SHARES = 4


def _edit(what: str, metric: str) -> MetricSpec:
    return MetricSpec(
        "lower",
        pooled=counts_key(metric),
        bounds=SHARE,
        description=f"{what}: OmniDocBench v1.6's per-page Σ edits / Σ max(len) over its blocks",
    )


def cdm_note(why: str) -> str:
    """Why ``formula_cdm`` and ``overall`` are absent (`why`: what is missing, or "off")."""
    return f"formula_cdm and overall: not computed ({why})"


class OmniDocBenchSuite(Suite):
    kind = "omnidocbench"
    suite_keys = frozenset(
        {"kind", "annotations", "images", "systems", "reference", "cdm", "base_pages"}
    )
    metrics: ClassVar[Mapping[str, MetricSpec]] = {
        "text_edit": _edit("Text Edit (text blocks)", "text_edit"),
        "formula_edit": _edit("display formulas' edit distance", "formula_edit"),
        "formula_cdm": MetricSpec(
            "higher",
            pooled=counts_key("formula_cdm"),
            bounds=SHARE,
            description="Formula CDM: the mean over the page's display formulas of CDM's F1 "
            "(rendered with pdflatex, rasterised by PyMuPDF)",
        ),
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
    terminal_lines = (leaderboard_lines,)
    html_views: ClassVar[Mapping[str, ViewRenderer]] = {"blocks": html.blocks}
    html_analyses: ClassVar[Mapping[str, AnalysisRenderer]] = {"omnidocbench": html.leaderboard}

    def __init__(self, spec: SuiteSpec, systems_env: SystemEnv) -> None:
        super().__init__(spec, systems_env)
        self.root = find_project_root(spec.path)
        self.annotations = self._path("annotations", "OmniDocBench.json")
        self.images = self._path("images", "images")
        self.reference = checkout_of(spec.table.get("reference"), spec.path, spec.file)
        pages = load_pages(self.annotations, spec.file, self.shown)
        base = self._base_pages(spec.table.get("base_pages"))
        self.pages: dict[str, Page] = {p.case: p.with_tier(base) for p in pages}
        self.systems = system_list(spec.table.get("systems"), spec.file)
        check_system_settings(spec.system_settings, self.systems, spec.file)
        self.sources, self._notes = resolve_sources(
            systems_env, self.systems, self._saved, reads="reads the page images"
        )
        self._digests: dict[Path, str] = {}
        self.cdm: CdmTools | str = self._cdm_tools(spec.table.get("cdm", True))
        self.identity = ScorerIdentity(
            text=self._text_path(),
            annotations_sha256=annotations_sha256(self.annotations),
            cdm=self.cdm.identity() if isinstance(self.cdm, CdmTools) else "off",
        )

    def shown(self, path: Path) -> str:
        """`path` as reports show it: relative to the project's root (with ``..`` where it
        lies beside it), or as the user wrote it where ``suite.toml`` gives an absolute path
        (``annotations``, ``images``, ``reference``) it lies in; never this machine's folders
        otherwise."""
        normal = Path(os.path.normpath(path))
        try:
            relative = os.path.relpath(normal, self.root)
        except ValueError:  # another drive (Windows)
            return str(normal)
        if not relative.startswith(".."):
            return relative
        given = [self.spec.table.get(k) for k in ("annotations", "images", "reference")]
        absolute = [os.path.normpath(g) for g in given if isinstance(g, str) and os.path.isabs(g)]
        return str(normal) if any(normal.is_relative_to(a) for a in absolute) else relative

    def _path(self, key: str, default: str) -> Path:
        value = self.spec.table.get(key, default)
        if not isinstance(value, str) or not value:
            raise SuiteConfigError(f"{self.spec.file}: [suite] {key} must be a path (text)")
        return self.spec.path / value  # an absolute value replaces the folder

    def _saved(self, system: str) -> SavedOutputs:
        folder = self.spec.path / OUTPUTS / system
        return SavedOutputs(folder.is_dir(), f"folder {OUTPUTS}/{system}/ beside the suite")

    def _base_pages(self, value: object) -> frozenset[str] | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise SuiteConfigError(
                f"{self.spec.file}: [suite] base_pages must be a path (text): OmniDocBench "
                "v1.5's annotation file, or a text file of image names, one a line"
            )
        return base_page_names(self.spec.path / value, self.spec.file)

    def _cdm_tools(self, value: object) -> CdmTools | str:
        if not isinstance(value, bool):
            raise SuiteConfigError(f"{self.spec.file}: [suite] cdm must be true or false")
        if not value:
            return "cdm = false in suite.toml"
        return cdm_tools()

    def _text_path(self) -> str:
        return "native" if self.reference is None else self.reference.identity

    @property
    def scoring_id(self) -> str:
        """What the numbers were made with (`identity`): baselines under another never compare."""
        return self.identity.scoring_id

    def case_refs(self) -> list[CaseRef]:
        return [
            CaseRef(case, system, page.labels())
            for case, page in sorted(self.pages.items())
            for system in self.systems
        ]

    def system_names(self) -> list[str]:
        return list(self.systems)

    def describe(self) -> dict[str, object]:
        tiers = sorted({p.tier for p in self.pages.values() if p.tier})
        return {
            "annotations": self.shown(self.annotations),
            "images": self.shown(self.images),
            "pages": len(self.pages),
            "listed_attributes": listed_attributes(list(self.pages.values())),
            "tiers": tiers,
            "scorer": self.identity.describe(),
        }

    def notes(self) -> list[str]:
        """The systems' notes, which code made the text numbers, and why CDM is off if it is."""
        notes = list(self._notes)
        if self.reference is not None:
            notes.append(self.reference.note(self.shown(self.reference.path)))
        if not isinstance(self.cdm, CdmTools):
            notes.append(cdm_note(self.cdm))
        return notes

    # -- one test ------------------------------------------------------------------------------

    def plan(self, ref: CaseRef) -> Plan:
        """A registered parser's reading of the page image (a two-stage system's model stage
        after it), or the saved prediction: the result ``output``; where CDM runs and the page
        has a display formula, its CDM stage after the canary: the result ``cdm``. A missing
        image or prediction is the test's error."""
        page = self.pages[ref.case]
        if self.sources[ref.system].parsed:
            stages = self._stages(ref.system, page, self._image(page))
        else:
            label = f"prediction of {ref.system} for page {page.image}"
            path = self._prediction(ref, page)
            stages = [saved_output_stage(path, what="prediction", label=label)]
        results = {"output": stages[-1].key}
        if isinstance(self.cdm, CdmTools) and has_display_formula(page.annotation):
            cdm = self._cdm_stages(ref, page, stages[-1].key)
            stages += cdm
            results |= {f"{CDM_RESULT}{k}": stage.key for k, stage in enumerate(cdm[1:])}
        return Plan(tuple(stages), results)

    def _cdm_stages(self, ref: CaseRef, page: Page, output: str) -> list[Stage]:
        """The canary, then the page's CDM in shares of its formulas (about three each, four
        shares at most), so that one page of many formulas renders on every core."""
        tools = self.cdm
        assert isinstance(tools, CdmTools)
        what = {"cdm": CDM_REVISION, "tools": tools.identity()}
        check = CpuStage(
            key=cache_key({**what, "stage": "canary"}, CDM_REVISION),
            label="CDM canary (formulas against themselves)",
            call=canary,
            args=(tools.pdflatex,),
            fingerprint={**what, "stage": "canary"},
            scoring=True,
        )
        parts = max(1, min(CDM_SHARES, (formula_lines(page.annotation) + 2) // 3))
        page_key = json.dumps(page.annotation, sort_keys=True, ensure_ascii=False)
        shares: list[Stage] = [
            CpuStage(
                key=cache_key({**what, "page": page_key, "share": f"{part}/{parts}"}, output),
                label=f"CDM of page {page.image} ({ref.system}), share {part + 1} of {parts}",
                call=page_cdm,
                args=(dict(page.annotation), part, parts),
                needs=(check.key, output),
                fingerprint={**what, "stage": "page"},
                scoring=True,
            )
            for part in range(parts)
        ]
        return [check, *shares]

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
            key, empty = None, f"{self.shown(source)} is empty"
        notes = [] if prediction.strip() else [f"{empty}: scored as an empty page"]
        try:
            score = score_page(page.annotation, prediction, self.reference)
        except DocevalError as exc:
            raise type(exc)(f"page {page.image} ({self.annotations.name}): {exc}") from None
        metrics = {m: float(v) for m, v in score.metrics.items()}
        if "table_teds" in metrics:  # the page has tables: GriTS beside its TEDS
            truth = page_tables(page.annotation)
            metrics |= page_grits(truth, predicted_tables(prediction).tables)
        counts = row_counts(score)
        details: dict[str, Any] = {
            "image": page.image,
            "page": page.index + 1,
            "prediction": self.shown(source),
            "fallbacks": list(score.fallbacks),
            "deadlines": list(score.deadlines),
            "formula_candidate": score.formula_candidate,
        }
        shares = [results[name] for name in results.outputs if name.startswith(CDM_RESULT)]
        if shares:
            notes += self._cdm(shares, score, metrics, counts, details)
        notes += [n for n in score.notes if n not in notes]
        if not metrics:
            notes.append(
                "no metric: the page has no text block, display formula or table that "
                "OmniDocBench scores"
            )
        return CaseResult(
            metrics=metrics,
            counts=counts,
            details=details,
            views={"blocks": blocks_view(score)},
            fingerprint=fingerprint,
            cache_key=key,
            notes=notes,
        )

    def _cdm(
        self,
        shares: list[str],
        score: PageScore,
        metrics: dict[str, float],
        counts: dict[str, dict[str, float]],
        details: dict[str, Any],
    ) -> list[str]:
        """The page's formula_cdm from its CDM stage's scores (notes: formulas that did not
        compile, and scores the alternative prediction gave)."""
        rows = read_page_cdm(shares)
        if len(rows) != len(score.formulas):
            raise DocevalError(
                f"the CDM stage scored {len(rows)} formulas, the page has {len(score.formulas)}"
            )
        value = cdm_page([r.score for r in rows], score.formula_page)
        if value is not None:
            metrics["formula_cdm"] = value
            counts[counts_key("formula_cdm")] = {
                "matched": sum(r.score for r in rows),
                "total": float(len(rows)),
            }
        details["cdm"] = [r.score for r in rows]
        notes = []
        truth = sum(not r.truth_compiled for r in rows)
        predicted = sum(not r.prediction_compiled for r in rows)
        if truth or predicted:
            notes.append(
                f"CDM: pdflatex did not compile {truth} truth and {predicted} predicted "
                "formula(s) of this page, scored as OmniDocBench scores them (0)"
            )
        if alternatives := sum(r.alternative for r in rows):
            notes.append(f"CDM: {alternatives} formula(s) scored by their sanitised form (higher)")
        return notes

    def _prediction(self, ref: CaseRef, page: Page) -> Path:
        """Where the saved prediction of `page` is, as OmniDocBench looks for it."""
        folder = self.spec.path / OUTPUTS / ref.system
        path = find_prediction(folder, page.image)
        if path is None:
            tried = ", ".join(p.name for p in prediction_candidates(folder, page.image))
            raise CaseInputError(
                f"page {page.image}: missing prediction of {ref.system} in "
                f"{self.shown(folder)} (tried {tried})"
            )
        return path

    def _image(self, page: Page) -> Path:
        image = self.images / page.image
        if not image.is_file():
            raise CaseInputError(f"page {page.image}: missing page image {self.shown(image)}")
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
