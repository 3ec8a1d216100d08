"""What OCR costs per page: Tesseract (the `tesseract` system) beside RapidOCR, issue 36.

    python benchmarks/bench_ocr_cost.py [--dpi 300] [--repeat 2]

Each page of a few shipped image-like cases (the scan, a paper, the Korean page) is rendered
once at `--dpi`, then read by Tesseract (English, or Korean with psm 4 for the Korean page, as
the shipped suites read them) and by RapidOCR (its models loaded by a warm-up call first), each
measured as the engine measures a stage in a pool process (`engine.stages.timed_call` after
`count_whole_process`: CPU of this process and of the programs it waits for, wall time, peak
resident memory), best of `--repeat`. Prints per page and in total, with the ratio of the two
measured in the same run (absolute times move with the machine's load; the ratio less).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path

import pymupdf

from pytest_doceval.engine import stages
from pytest_doceval.metrics.cost import StageCost
from pytest_doceval.systems.rapidocr_ocr import ocr_image as rapidocr_image
from pytest_doceval.systems.tesseract_ocr import ocr_image as tesseract_image

CASES = Path(__file__).resolve().parent.parent / "cases"
PAGES = (
    ("scans/allotment-water", "eng", 3),
    ("papers/tidal-storage", "eng", 3),
    ("korean/allotment-water-ko", "kor", 4),
)


def best(call: Callable[..., object], args: tuple[object, ...], repeat: int) -> StageCost:
    runs = [stages.timed_call(call, args)[1] for _ in range(repeat)]
    return min(runs, key=lambda cost: cost.cpu_seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dpi", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    stages.count_whole_process()  # measure as a pool process does
    images = []
    for case, lang, psm in PAGES:
        with pymupdf.open(CASES / case / "document.pdf") as doc:
            for number, page in enumerate(doc, start=1):
                png = page.get_pixmap(dpi=args.dpi).tobytes("png")
                images.append((f"{case} p{number}", lang, psm, png))
    rapidocr_image(images[0][3])  # load RapidOCR's models once, as a warm pool process has
    totals = {"tesseract": StageCost(), "rapidocr": StageCost()}
    print(f"per page at {args.dpi} DPI (best of {args.repeat}): CPU s / wall s / peak MiB")
    for label, lang, psm, png in images:
        read = functools.partial(tesseract_image, lang=lang, psm=psm, what=label)
        tess = best(read, (png,), args.repeat)
        rapid = best(rapidocr_image, (png,), args.repeat)
        totals["tesseract"] += tess
        totals["rapidocr"] += rapid
        print(
            f"  {label:32s} tesseract {tess.cpu_seconds:6.2f} / {tess.wall_seconds:6.2f} / "
            f"{tess.peak_rss_mib or 0:5.0f}   rapidocr {rapid.cpu_seconds:6.2f} / "
            f"{rapid.wall_seconds:6.2f} / {rapid.peak_rss_mib or 0:5.0f}   "
            f"CPU ratio rapidocr/tesseract {rapid.cpu_seconds / tess.cpu_seconds:5.1f}"
        )
    n = len(images)
    tess, rapid = totals["tesseract"], totals["rapidocr"]
    print(
        f"mean per page over {n} pages: tesseract {tess.cpu_seconds / n:.2f} s CPU, "
        f"{tess.wall_seconds / n:.2f} s wall; rapidocr {rapid.cpu_seconds / n:.2f} s CPU, "
        f"{rapid.wall_seconds / n:.2f} s wall; Tesseract takes "
        f"{tess.cpu_seconds / rapid.cpu_seconds:.0%} of RapidOCR's CPU"
    )


if __name__ == "__main__":
    main()
