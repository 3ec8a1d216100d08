"""GriTS speed against its authors' package ``grits-metric`` (the ``dev`` extra), issue 36.

    python benchmarks/bench_grits.py [--sizes 5x4,20x6,40x12,64x4] [--repeat 5]

For each size, a truth table and an output with a parser's errors (misread cells, a dropped
row, an inserted row, a merged header cell) are scored by this project's GriTS-Con and
GriTS-Top (`pytest_doceval.metrics.grits`, best of `--repeat` runs) and by the package's
``hungarian_grits_con`` / ``hungarian_grits_top`` on the same grids (best of `--repeat`, at most
two runs past a second). Then the shipped `cases/tables` truths against themselves with one row
dropped, the documents kind's real input. Prints both times, their ratio and whether the scores
agree; measured in the same run, so the ratio holds under a shared machine's load.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path

from pytest_doceval.kinds.documents.table_grits import grid_of
from pytest_doceval.kinds.documents.table_trees import read_tables
from pytest_doceval.metrics.grits import GridCell, TableGrid, grits, table_grid

CASES = Path(__file__).resolve().parent.parent / "cases" / "tables"


def make_pair(n_rows: int, n_cols: int, seed: int) -> tuple[TableGrid, TableGrid]:
    rng = random.Random(seed)
    words = ["basalt", "12.5", "north", "0.031", "tide", "Shed 2", "n/a", "1,204", "kelp"]

    def text() -> str:
        return f"{rng.choice(words)} {rng.randint(0, 999)}"

    head = [GridCell(f"Column {j}") for j in range(n_cols)]
    body = [[GridCell(text()) for _ in range(n_cols)] for _ in range(n_rows - 1)]
    out_body = [[GridCell(c.text[:-1] + "7") if rng.random() < 0.1 else c for c in r] for r in body]
    del out_body[rng.randrange(len(out_body))]  # a dropped row
    out_body.insert(rng.randrange(len(out_body) + 1), [GridCell(text()) for _ in range(n_cols)])
    out_head = [GridCell("Column 0 Column 1", colspan=2), *head[2:]]  # a merged header
    return table_grid([head, *body]), table_grid([out_head, *out_body])


def package_grids(grid: TableGrid) -> tuple[list[list[str]], list[list[list[int]]]]:
    spans = grid.spans.tolist()
    rows = range(grid.rows)
    con = [list(grid.texts[r * grid.cols : (r + 1) * grid.cols]) for r in rows]
    return con, [spans[r * grid.cols : (r + 1) * grid.cols] for r in rows]


def best(call: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = call()
        times.append(time.perf_counter() - started)
        if times[-1] > 1.0 and len(times) >= 2:
            break
    return min(times), value


def compare(label: str, truth: list[TableGrid], output: list[TableGrid], repeat: int) -> None:
    from grits import hungarian_grits_con, hungarian_grits_top

    def ours() -> tuple[float, float]:
        return grits(truth, output, "con").f1, grits(truth, output, "top").f1

    ref_t = [package_grids(g) for g in truth]
    ref_o = [package_grids(g) for g in output]

    def theirs() -> tuple[float, float]:
        con = hungarian_grits_con([c for c, _ in ref_t], [c for c, _ in ref_o])[0]
        top = hungarian_grits_top([t for _, t in ref_t], [t for _, t in ref_o])[0]
        return con, top

    our_time, our_value = best(ours, repeat)
    ref_time, ref_value = best(theirs, repeat)
    assert isinstance(our_value, tuple) and isinstance(ref_value, tuple)
    agree = all(abs(a - b) < 1e-6 for a, b in zip(our_value, ref_value, strict=True))
    print(
        f"{label:>26}  ours {our_time * 1000:9.2f} ms  grits-metric {ref_time * 1000:10.2f} ms  "
        f"x{ref_time / our_time:7.1f} faster  GriTS-Con {our_value[0]:.4f} / Top "
        f"{our_value[1]:.4f}  {'agree' if agree else 'DIFFER ' + str(ref_value)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5x4,20x6,40x12,64x4")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("GriTS-Con + GriTS-Top of one document (best of runs; ratio = package / ours)")
    for size in args.sizes.split(","):
        n_rows, n_cols = (int(x) for x in size.split("x"))
        truth, output = make_pair(n_rows, n_cols, seed=n_rows * 100 + n_cols)
        compare(f"{size} with errors", [truth], [output], args.repeat)
    for truth_file in sorted(CASES.glob("*/truth.md")):
        tables = read_tables(truth_file.read_text(encoding="utf-8")).tables
        truth = [grid_of(t) for t in tables]
        dropped = [
            table_grid([[GridCell(c.text, c.colspan, c.rowspan) for c in r] for r in t.rows[1:]])
            for t in tables
        ]
        compare(f"{truth_file.parent.name} row dropped", truth, dropped, args.repeat)


if __name__ == "__main__":
    main()
