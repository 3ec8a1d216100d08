"""Our OmniDocBench scoring against OmniDocBench v1.6's own code on its 18 demo pages (issue 34).

    python benchmarks/bench_omnidocbench.py [--repeat 3] [--cdm 6]

Needs ../shared/peers (the reference's code and demo data) and the reference's dependencies
(the `dev` extra). Times, in the same run, so that the ratios hold under a shared machine's load,
fastest of `--repeat` each:

- ours: `score_page` on every demo page with the shipped predictions: every leaderboard number
  but CDM (the text matcher, formulas, reading order, tables), our caches emptied before each
  repeat (a cold process, as a run's first page meets them);
- the reference's whole run: End2EndDataset (quick_match) + End2EndEval as `configs/end2end.yaml`
  runs it without CDM: the same numbers, like for like;
- the text matcher alone, like for like: ours (`match_page` + `edit_scores`: Text Edit,
  Formula Edit, Read Order Edit) against the reference's own matcher and ``Edit_dist`` called
  on one page at a time (`Reference.score`, as the suite's ``reference`` key runs it).

With ``--cdm N`` (TeX Live installed), also CDM on N demo formula pairs, ours against the
reference's own CDM code with the same rasteriser (PyMuPDF), once each: seconds per formula.

Prints each time, the per-page ratios, and whether every number agrees (1e-9).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import omnidocbench_reference as reference

from pytest_doceval.kinds.omnidocbench import (
    cdm,
    formula_dp,
    formula_lines,
    latex_text,
    normalise,
    table_html,
)
from pytest_doceval.kinds.omnidocbench.cdm_inputs import CdmInputs
from pytest_doceval.kinds.omnidocbench.edit_scores import edit_scores
from pytest_doceval.kinds.omnidocbench.page_match import match_page
from pytest_doceval.kinds.omnidocbench.reference import checkout_of
from pytest_doceval.kinds.omnidocbench.scoring import leaderboard, score_page

COMPARED = ("text_edit", "formula_edit", "reading_order_edit", "table_teds", "table_teds_s")


def cold() -> None:
    """Empty every cache of the scoring: each repeat pays what a fresh process pays."""
    for cached in (
        normalise.normalised_text,
        normalise.normalised_formula,
        latex_text._converted,
        formula_lines.formula_rows,
        formula_dp.runs,
        table_html.normalised_table_html,
        cdm._rendered,
    ):
        cached.cache_clear()


def best_of(
    repeat: int, work: Callable[[], Any], before: Callable[[], None] = lambda: None
) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        before()
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def _cdm_pairs(count: int) -> list[tuple[str, str]]:
    formulas = []
    for page in reference.demo_pages():
        for d in page["layout_dets"]:
            if d.get("category_type") == "equation_isolated" and d.get("latex"):
                formulas.append(re.sub(r"^\$+|\$+$", "", str(d["latex"]).strip()))
    return [(formulas[i], formulas[(i + 1) % len(formulas)]) for i in range(count)]


def bench_cdm(count: int) -> None:
    tools = cdm.cdm_tools()
    if isinstance(tools, str):
        print(f"CDM: not measured ({tools})")
        return
    import importlib

    reference.same_rasteriser()
    theirs = importlib.import_module("src.metrics.cdm.cdm")
    pairs = _cdm_pairs(count)
    start = time.perf_counter()
    ours = []
    for gt, pred in pairs:
        cdm._rendered.cache_clear()
        ours.append(cdm.formula_cdm(CdmInputs(gt, pred, "", False), tools.pdflatex).score)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    expected = []
    for gt, pred in pairs:
        with tempfile.TemporaryDirectory() as folder:
            expected.append(
                theirs.cdm_metrics(gt, pred, save_vis=False, tmp_dir=folder)["F1_score"]
            )
    theirs_s = time.perf_counter() - start
    print(f"CDM on {len(pairs)} formula pairs (two renders each), once; {tools.identity()}")
    print(f"  ours                           {ours_s / len(pairs) * 1000:9.1f} ms a formula")
    print(f"  reference (same rasteriser)    {theirs_s / len(pairs) * 1000:9.1f} ms a formula")
    print(f"  ratio ours / reference         {ours_s / theirs_s:9.2f}")
    print(f"  every F1 equal: {ours == expected}  ({', '.join(f'{x:.3f}' for x in ours)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cdm", type=int, default=0, metavar="N")
    args = parser.parse_args()
    try:
        reference.load()
    except reference.Unavailable as exc:
        raise SystemExit(f"cannot run the reference: {exc}") from exc
    pages = reference.demo_pages()
    predictions = {reference.image_name(p): reference.demo_prediction(p) or "" for p in pages}
    n = len(pages)

    ours_s, ours = best_of(
        args.repeat,
        lambda: [score_page(p, predictions[reference.image_name(p)]) for p in pages],
        cold,
    )
    whole_s, whole = best_of(args.repeat, lambda: reference.run(pages, predictions))
    checkout = checkout_of(str(reference.ODB), Path("."), Path("suite.toml"))
    assert checkout is not None
    text_s, _ = best_of(
        args.repeat,
        lambda: [edit_scores(match_page(p, predictions[reference.image_name(p)])) for p in pages],
        cold,
    )
    their_text_s, _ = best_of(
        args.repeat,
        lambda: [checkout.score(p, predictions[reference.image_name(p)]) for p in pages],
    )

    board = leaderboard(ours)
    agree = all(
        math.isclose(board[m], whole.leaderboard[m], rel_tol=0, abs_tol=1e-9) for m in COMPARED
    ) and all(
        math.isclose(s.metrics[m], whole.pages[reference.image_name(p)][m], abs_tol=1e-9)
        for p, s in zip(pages, ours, strict=True)
        for m in s.metrics
    )
    print(f"{n} demo pages, every leaderboard number but CDM; fastest of {args.repeat}")
    for what, seconds in (
        ("ours (score_page, cold caches)", ours_s),
        ("reference, whole run", whole_s),
        ("ours, text matcher only (cold)", text_s),
        ("reference, text matcher a page", their_text_s),
    ):
        print(f"  {what:30} {seconds * 1000:9.1f} ms  ({seconds / n * 1000:.1f} ms a page)")
    print(f"  every number: reference whole run / ours   {whole_s / ours_s:6.1f} x faster")
    print(f"  text matcher: reference per page / ours    {their_text_s / text_s:6.1f} x faster")
    print("  leaderboard: " + ", ".join(f"{m} {board[m]:.12f}" for m in COMPARED))
    print(f"  every page's numbers and the leaderboard equal the reference's (1e-9): {agree}")
    if args.cdm:
        bench_cdm(args.cdm)


if __name__ == "__main__":
    main()
