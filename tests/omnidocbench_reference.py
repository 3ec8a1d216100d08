"""OmniDocBench v1.6's own code, run as its `configs/end2end.yaml` runs it: the parity reference.

Used by tests/test_omnidocbench_parity.py and benchmarks/bench_omnidocbench.py only; the
package never imports the peer. The peer's code lives in ``../shared/peers/omnidocbench-v1.6``
beside the repository (``DOCEVAL_PEERS`` points elsewhere); `load()` raises `Unavailable` when it
or its Python dependencies are absent, and the tests skip on that.

Three of the peer's imports are stood in for here, without changing any number it computes:
- ``Levenshtein`` (GPL-2.0) by rapidfuzz's Levenshtein (MIT), the same C++ distance that the
  ``Levenshtein`` package itself wraps;
- ``func_timeout`` (LGPL-3.0) by a direct call that counts as timed out when it took longer than
  its timeout (as the kill would have; the demo pages match far below 420 s, and a test sets a
  tiny timeout to make its fallback run);
- ``evaluate`` (Hugging Face, for BLEU/METEOR, which `end2end.yaml` does not ask for) and
  ``matplotlib`` (radar charts) by empty modules, when they are not installed.
Its LaTeX-to-text conversion (pylatexenc, for inline math in text) also runs in-process
(``OMNIDOCBENCH_LATEX_TO_TEXT_TIMEOUT_SEC=0``), not in a child process with a 30 s timeout per
formula: the same conversion, minus a process start per formula (minutes on the demo set).
CDM is not run (it needs TeX Live, ImageMagick and Ghostscript; our scoring says "not computed").
TEDS runs in-process (``timeout_sec: 0``) instead of in a child process per table: the same
function on the same strings, without a 120 s timeout that the demo tables never reach.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
import types
import warnings
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PEERS = Path(
    os.environ.get("DOCEVAL_PEERS")
    or Path(__file__).resolve().parents[1].parent / "shared" / "peers"
)
ODB = PEERS / "omnidocbench-v1.6"
DEMO = ODB / "demo_data"
DEMO_ANNOTATIONS = DEMO / "omnidocbench_demo" / "OmniDocBench_demo.json"
DEMO_PREDICTIONS = DEMO / "end2end"


class Unavailable(Exception):
    """The reference cannot run here (no peers folder, or a missing dependency)."""


def _stand_in_modules() -> None:
    from rapidfuzz.distance import Levenshtein as rf_levenshtein

    if "Levenshtein" not in sys.modules:
        lev = types.ModuleType("Levenshtein")
        lev.distance = rf_levenshtein.distance  # type: ignore[attr-defined]
        sys.modules["Levenshtein"] = lev
    if "func_timeout" not in sys.modules:
        ft = types.ModuleType("func_timeout")

        class FunctionTimedOut(Exception):
            pass

        def func_timeout(
            timeout: float, func: Any, args: tuple[Any, ...] = (), kwargs: Any = None
        ) -> Any:
            # The call runs to its end; one that took longer than `timeout` counts as stopped
            # (what func_timeout's kill would have done), so a test can make a page time out.
            started = time.monotonic()
            result = func(*args, **(kwargs or {}))
            if time.monotonic() - started > timeout:
                raise FunctionTimedOut()
            return result

        ft.FunctionTimedOut = FunctionTimedOut  # type: ignore[attr-defined]
        ft.func_timeout = func_timeout  # type: ignore[attr-defined]
        sys.modules["func_timeout"] = ft
    for name in ("evaluate", "matplotlib", "matplotlib.pyplot", "matplotlib.font_manager"):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
    font_manager = sys.modules["matplotlib.font_manager"]
    if not hasattr(font_manager, "FontProperties"):  # table_utils builds one at import time
        font_manager.FontProperties = lambda **_: None  # type: ignore[attr-defined]


_LOADED: dict[str, Any] = {}


def load() -> dict[str, Any]:
    """Import the reference's pipeline; raise Unavailable (with the cause) when it cannot run."""
    if _LOADED:
        return _LOADED
    if not (ODB / "src" / "dataset" / "end2end_dataset.py").is_file():
        raise Unavailable(f"OmniDocBench v1.6 reference not found at {ODB}")
    os.environ.setdefault("OMNIDOCBENCH_LATEX_TO_TEXT_TIMEOUT_SEC", "0")
    try:
        _stand_in_modules()
        if str(ODB) not in sys.path:
            sys.path.insert(0, str(ODB))
        from loguru import logger

        logger.remove()  # its per-page INFO lines would flood the test output
        # Its modules hold invalid escape sequences: their warnings are its own, not ours.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from src.core import pipeline_eval  # noqa: F401  (registers end2end_eval)
            from src.core.registry import (
                DATASET_REGISTRY,
                EVAL_TASK_REGISTRY,
                load_default_registrations,
            )

            load_default_registrations()
            from src.core.matching import match_gt2pred_simple
            from src.core.preprocess import md_tex_filter, normalized_table
            from src.metrics.table_metric import TEDS
    except ImportError as exc:
        raise Unavailable(f"OmniDocBench reference's dependencies missing: {exc}") from exc
    _LOADED.update(
        dataset=DATASET_REGISTRY,
        task=EVAL_TASK_REGISTRY,
        md_tex_filter=md_tex_filter,
        normalized_table=normalized_table,
        TEDS=TEDS,
        match_gt2pred_simple=match_gt2pred_simple,
    )
    return _LOADED


def table_path(page: Mapping[str, Any], markdown: str) -> list[tuple[float, float]]:
    """Only the reference's table path on one page, its own functions in its order
    (``process_get_matched_elements`` up to the table samples, then ``normalize_data`` and
    TEDS): the part of its run that our table scoring does, for the speed comparison."""
    ref = load()
    dataset = object.__new__(ref["dataset"].get("end2end_dataset"))
    truth = dataset.get_page_elements(page).get("table")
    if not truth:
        return []
    pairs, _ = ref["match_gt2pred_simple"](
        dataset.get_sorted_text_list(truth), tables_in(markdown), "html_table", image_name(page)
    )
    scores = []
    for pair in pairs:
        if pair["gt_idx"] == [""]:
            continue
        pred = ref["normalized_table"](pair["pred"], "html") or pair["pred"]
        gt = ref["normalized_table"](pair["gt"]) or pair["gt"]
        scores.append(teds(pred, gt))
    return scores


def tables_in(markdown: str) -> list[Any]:
    """The predicted tables the reference pairs, in its order (``process_get_matched_elements``:
    its HTML tables, then its LaTeX tables converted), as its block dicts."""
    ref = load()
    blocks = ref["md_tex_filter"](markdown)
    tables = list(blocks["html_table"])
    for item in blocks["latex_table"]:
        converted = dict(item, content=ref["normalized_table"](item["content"], "latex"))
        tables.append(dict(converted, category_type="html_table"))
    return tables


def table_texts_in(markdown: str) -> list[str]:
    return [str(item["content"]) for item in tables_in(markdown)]


def normalised_table(text: str) -> str:
    return str(load()["normalized_table"](text))


def teds(prediction: str, truth: str) -> tuple[float, float]:
    """The reference's (TEDS, TEDS-S), errors set to 0 as its metric runner does."""
    ref = load()
    try:
        return (
            float(ref["TEDS"](structure_only=False).evaluate(prediction, truth)),
            float(ref["TEDS"](structure_only=True).evaluate(prediction, truth)),
        )
    except Exception:
        return 0.0, 0.0


@dataclass(frozen=True)
class ReferenceRun:
    """What the reference computed: per page (by image name) and its leaderboard numbers."""

    pages: Mapping[str, Mapping[str, float]]  # image name -> our metric name -> value
    leaderboard: Mapping[str, float]
    samples: Mapping[str, list[dict[str, Any]]]  # element -> the reference's matched samples
    fallbacks: Mapping[str, frozenset[str]] = field(default_factory=dict)  # reason -> pages


@contextlib.contextmanager
def _in_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _image_name(sample: Mapping[str, Any]) -> str:
    img_id = str(sample["img_id"])
    if img_id.endswith((".jpg", ".png")):
        return img_id
    return "_".join(img_id.split("_")[:-1])


def same_rasteriser() -> None:
    """Make the reference's CDM rasterise as ours does (PyMuPDF at 200 dpi, on white) instead of
    calling ImageMagick 7's ``magick``, which Debian does not ship: its CDM code, our pixels."""
    import importlib

    from PIL import Image

    from pytest_doceval.kinds.omnidocbench.cdm_render import rasterised

    module = importlib.import_module("src.metrics.cdm.modules.latex2bbox_color")

    def convert(pdf: str, png: str, timeout_sec: float = 30, all_pages: bool = False) -> bool:
        image = rasterised(Path(pdf).read_bytes(), all_pages)
        if image is None:
            return False
        Image.fromarray(image).save(png)
        return True

    module.convert_pdf2img = convert
    os.environ["CDM_SAVE_VIS"] = "0"


def run(
    pages: Sequence[Mapping[str, Any]],
    predictions: Mapping[str, str | None],
    dataset: Mapping[str, Any] | None = None,
    *,
    tables: bool = True,
    cdm: bool = False,
) -> ReferenceRun:
    """Run End2EndDataset (quick_match) and End2EndEval on `pages`.

    `predictions` maps an image name to its markdown (None: no prediction file, as the
    reference scores a missing file: an empty page); `dataset` overrides keys of the dataset
    configuration (its timeouts); `tables` False leaves TEDS out (faster), `cdm` True adds its
    CDM (one worker, `same_rasteriser`).
    """
    registries = load()
    if cdm:
        same_rasteriser()
    with tempfile.TemporaryDirectory(prefix="odb-ref-") as tmp:
        root = Path(tmp)
        gt_path = root / "gt.json"
        gt_path.write_text(json.dumps(list(pages), ensure_ascii=False), encoding="utf-8")
        pred_dir = root / "pred"
        pred_dir.mkdir()
        for image_name, markdown in predictions.items():
            if markdown is not None:
                stem = os.path.splitext(image_name)[0]
                (pred_dir / f"{stem}.md").write_text(markdown, encoding="utf-8")
        metrics: dict[str, Any] = {
            "text_block": {"metric": ["Edit_dist"]},
            "display_formula": {"metric": ["Edit_dist", *(["CDM"] if cdm else [])]},
            "table": {"metric": ["TEDS", "Edit_dist"], "teds_workers": 1, "timeout_sec": 0},
            "reading_order": {"metric": ["Edit_dist"]},
        }
        if cdm:
            metrics["display_formula"]["cdm_workers"] = 1
        if not tables:
            del metrics["table"]
        cfg = {
            "metrics": metrics,
            "dataset": {
                "dataset_name": "end2end_dataset",
                "ground_truth": {"data_path": str(gt_path)},
                "prediction": {"data_path": str(pred_dir)},
                "match_method": "quick_match",
                "match_workers": 1,
                "quick_match_truncated_timeout_sec": 300,
                "match_timeout_sec": 420,
                "timeout_fallback_max_chunk_span": 10,
                "timeout_fallback_order_penalty": 0.10,
                **(dataset or {}),
            },
        }
        with (
            _in_directory(root),
            open(os.devnull, "w") as quiet,
            contextlib.redirect_stdout(quiet),
            contextlib.redirect_stderr(quiet),
        ):
            dataset = registries["dataset"].get("end2end_dataset")(cfg)
            table_pages = set(dataset.gt_pages_by_element.get("table", ()) if tables else ())
            formula_pages = set(dataset.gt_pages_by_element.get("display_formula", ()))
            taken = dataset.match_debug_info.get("text_match_fallback_pages", {})
            fallbacks = {str(k): frozenset(v) for k, v in taken.items()}
            registries["task"].get("end2end_eval")(dataset, cfg["metrics"], str(gt_path), "ref")
            result = json.loads((root / "result" / "ref_metric_result.json").read_text("utf-8"))
            summary_file = root / "result" / "ref_run_summary.json"
            summary = json.loads(summary_file.read_text("utf-8")) if summary_file.is_file() else {}
            overall = (summary.get("notebook_metric_summary") or {}).get("overall_notebook")
            samples = {
                element: json.loads(
                    (root / "result" / f"ref_{element}_result.json").read_text("utf-8")
                )
                for element in cfg["metrics"]
            }
            per_page_edit = {
                element: json.loads(
                    (root / "result" / f"ref_{element}_per_page_edit.json").read_text("utf-8")
                )
                if (root / "result" / f"ref_{element}_per_page_edit.json").is_file()
                else {}
                for element in ("text_block", "display_formula", "reading_order")
            }
    per_page: dict[str, dict[str, float]] = defaultdict(dict)
    for element, metric in (
        ("text_block", "text_edit"),
        ("display_formula", "formula_edit"),
        ("reading_order", "reading_order_edit"),
    ):
        for image_name, value in per_page_edit[element].items():
            if value is not None and value == value:  # NaN: the page had no characters at all
                per_page[image_name][metric] = float(value)
    if cdm:
        formulas: dict[str, list[float]] = defaultdict(list)
        for sample in samples["display_formula"]:
            formulas[_image_name(sample)].append(float(sample["metric"]["CDM"]))
        for image_name in formula_pages:
            found = formulas.get(image_name, [])
            per_page[image_name]["formula_cdm"] = sum(found) / len(found) if found else 0.0
    tables: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for sample in samples.get("table", []):
        scores = sample.get("metric", {})
        tables[_image_name(sample)].append((scores["TEDS"], scores["TEDS_structure_only"]))
    for image_name, pairs in tables.items():
        per_page[image_name]["table_teds"] = sum(p[0] for p in pairs) / len(pairs)
        per_page[image_name]["table_teds_s"] = sum(p[1] for p in pairs) / len(pairs)
    for image_name in table_pages - set(tables):
        # A page with a truth table but no table sample: its page split adds it with 0
        # (``_append_missing_page_rows``).
        per_page[image_name]["table_teds"] = per_page[image_name]["table_teds_s"] = 0.0

    def pick(*keys: str) -> float | None:
        node: Any = result
        for key in keys:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return float(node) if isinstance(node, int | float) else None

    board = {
        "text_edit_whole": pick("text_block", "all", "Edit_dist", "edit_whole"),
        "formula_edit_whole": pick("display_formula", "all", "Edit_dist", "edit_whole"),
        "reading_order_edit_whole": pick("reading_order", "all", "Edit_dist", "edit_whole"),
        "text_edit": pick("text_block", "all", "Edit_dist", "ALL_page_avg"),
        "formula_edit": pick("display_formula", "all", "Edit_dist", "ALL_page_avg"),
        "formula_cdm": pick("display_formula", "page", "CDM", "ALL"),
        "table_teds": pick("table", "page", "TEDS", "ALL"),
        "table_teds_s": pick("table", "page", "TEDS_structure_only", "ALL"),
        "reading_order_edit": pick("reading_order", "all", "Edit_dist", "ALL_page_avg"),
    }
    if overall is not None:
        board["overall"] = float(overall)  # its leaderboard's Overall (the notebook's cell 2)
    return ReferenceRun(
        pages=dict(per_page),
        leaderboard={k: v for k, v in board.items() if v is not None},
        samples=samples,
        fallbacks=fallbacks,
    )


def demo_pages() -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = json.loads(DEMO_ANNOTATIONS.read_text("utf-8"))
    return pages


def image_name(page: Mapping[str, Any]) -> str:
    return os.path.basename(str(page["page_info"]["image_path"]))


def demo_prediction(page: Mapping[str, Any]) -> str | None:
    stem = os.path.splitext(image_name(page))[0]
    path = DEMO_PREDICTIONS / f"{stem}.md"
    return path.read_text("utf-8") if path.is_file() else None
