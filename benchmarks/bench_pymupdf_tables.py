"""What PyMuPDF's ``find_tables()`` costs the `pymupdf` parser, per page.

    python benchmarks/bench_pymupdf_tables.py [--pages 40] [--repeat 3]

Builds a PDF of `--pages` pages of running text, a third of them with a ruled table, parses it
with ``[systems.pymupdf] tables = true`` (the default) and ``tables = false``, and prints the
time per page of each, the share of the parse that table detection takes and the ratio. The
reference is the same parser with tables off, measured in the same run. Best of `--repeat`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pymupdf

from pytest_doceval.systems.pymupdf_text import PyMuPDFText

TEXT = (
    "Tidal storage moves water between two basins at the turn of the tide. The pumps run when "
    "power is cheap and the turbines when it is dear; the difference pays for the plant. "
) * 6


def make_pdf(path: Path, pages: int) -> None:
    doc = pymupdf.open()
    for number in range(pages):
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(50, 50, 545, 400), f"Page {number + 1}. {TEXT}")
        if number % 3 == 0:
            rows = "".join(
                f"<tr><td>basin {r}</td><td>{r * 12} m</td><td>{r * 3.5:.1f} GWh</td></tr>"
                for r in range(1, 8)
            )
            page.insert_htmlbox(
                pymupdf.Rect(50, 420, 545, 780),
                "<table border='1' style='border-collapse: collapse'>"
                f"<tr><th>basin</th><th>head</th><th>storage</th></tr>{rows}</table>",
            )
    doc.save(path)
    doc.close()


def best_time(parser: PyMuPDFText, pdf: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        parser.parse(pdf)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / "bench.pdf"
        make_pdf(pdf, args.pages)
        with_tables = best_time(PyMuPDFText({"tables": True}), pdf, args.repeat)
        without = best_time(PyMuPDFText({"tables": False}), pdf, args.repeat)
    per_page_with = with_tables / args.pages * 1000
    per_page_without = without / args.pages * 1000
    print(f"pages: {args.pages} (a ruled table on every third), best of {args.repeat}")
    print(f"tables = true : {with_tables:7.3f} s  {per_page_with:7.1f} ms/page")
    print(f"tables = false: {without:7.3f} s  {per_page_without:7.1f} ms/page  (reference)")
    share = (with_tables - without) / with_tables if with_tables else 0.0
    ratio = with_tables / without
    print(f"find_tables share of the parse: {share:.0%}; ratio with/without: x{ratio:.1f}")


if __name__ == "__main__":
    main()
