"""Our OmniDocBench scoring against OmniDocBench v1.6's own run on its 18 demo pages (issue 25).

    python benchmarks/bench_omnidocbench.py [--repeat 3]

Needs ../shared/peers (the reference's code and demo data) and the reference's dependencies
(the `dev` extra). Times, in the same run, so that the ratios hold under a shared machine's load:

- ours: `score_page` on every demo page with the shipped predictions (best of `--repeat`);
- the reference's table path: its own functions for what our scoring computes today (its block
  finder, its table pairing, its normaliser and TEDS / TEDS-S), on the same pages (best of
  `--repeat`);
- the reference's whole run: End2EndDataset (quick_match) + End2EndEval as `configs/end2end.yaml`
  runs it without CDM (once): this includes its text, formula and reading-order matching, which
  our scoring does not compute yet, so that ratio is not like for like;
- ours with ``reference`` set (`score_page` with a `Reference` to the peer checkout: its own
  code scores each page's text, formulas and reading order, one page at a time; best of
  `--repeat`): all five metrics, like for like with the whole run.

Prints each time, the ratios, and whether the TEDS (and, with the reference, the text) numbers
agree.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import omnidocbench_reference as reference

from pytest_doceval.kinds.omnidocbench.reference import checkout_of
from pytest_doceval.kinds.omnidocbench.scoring import leaderboard, score_page


def best_of(repeat: int, work: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        reference.load()
    except reference.Unavailable as exc:
        raise SystemExit(f"cannot run the reference: {exc}") from exc
    pages = reference.demo_pages()
    predictions = {reference.image_name(p): reference.demo_prediction(p) or "" for p in pages}

    ours_s, ours = best_of(
        args.repeat, lambda: [score_page(p, predictions[reference.image_name(p)]) for p in pages]
    )
    tables_s, theirs = best_of(
        args.repeat,
        lambda: [reference.table_path(p, predictions[reference.image_name(p)]) for p in pages],
    )
    start = time.perf_counter()
    whole = reference.run(pages, predictions)
    whole_s = time.perf_counter() - start
    checkout = checkout_of(str(reference.ODB), Path("."), Path("suite.toml"))
    with_ref_s, with_ref = best_of(
        args.repeat,
        lambda: [score_page(p, predictions[reference.image_name(p)], checkout) for p in pages],
    )

    ours_board = leaderboard(ours)
    agree = all(
        abs(ours_board[m] - whole.leaderboard[m]) <= 1e-9 for m in ("table_teds", "table_teds_s")
    )
    n_tables = sum(len(t) for t in theirs)
    print(f"{len(pages)} demo pages, {n_tables} truth tables; best of {args.repeat}")
    print(f"  ours (score_page)              {ours_s * 1000:9.1f} ms")
    print(f"  reference, table path only     {tables_s * 1000:9.1f} ms")
    print(f"  reference, whole run (no CDM)  {whole_s * 1000:9.1f} ms  (one run)")
    print(f"  ratio ours / reference tables  {ours_s / tables_s:9.2f}  (below 1: ours faster)")
    print(f"  ratio ours / reference whole   {ours_s / whole_s:9.2f}  (not like for like)")
    per_page = with_ref_s / len(pages) * 1000
    print(
        f"  ours + reference text path     {with_ref_s * 1000:9.1f} ms  ({per_page:.0f} ms a page)"
    )
    print(f"  ratio that / reference whole   {with_ref_s / whole_s:9.2f}  (like for like)")
    teds, teds_s = ours_board["table_teds"], ours_board["table_teds_s"]
    print(f"  leaderboard TEDS {teds:.12f}, TEDS-S {teds_s:.12f}")
    print(f"  equal to the reference's (1e-9): {agree}")
    board = leaderboard(with_ref)
    text = ("text_edit", "formula_edit", "reading_order_edit")
    text_agree = all(abs(board[m] - whole.leaderboard[m]) <= 1e-9 for m in text)
    print("  with the reference: " + ", ".join(f"{m} {board[m]:.12f}" for m in text))
    print(f"  equal to the reference's whole run (1e-9): {text_agree}")


if __name__ == "__main__":
    main()
