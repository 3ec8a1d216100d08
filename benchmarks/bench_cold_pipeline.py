"""Cold multi-stage runs against a model server with fixed latency: does the engine keep the
server as busy as the CPU stages and ``max_concurrency`` allow?

    python benchmarks/bench_cold_pipeline.py [--quick] [--latency 0.5] [--concurrency 16]

Three suites, each run cold (empty cache) plain and with ``-n 2`` against the test model
server (tests/model_server.py, its own process, `--latency` seconds per answer):

(a) documents: one-page PDFs (made here with PyMuPDF) through ``pymupdf+vlm``;
(b) exam track B1: question images (rendered here) read by RapidOCR, answered by the model;
(c) facts: one-page PDFs with two facts each through ``pymupdf+vlm``.

Each cold run is followed by a warm run of the same project (everything answered from the
cache: start-up, collection and scoring only). The ideal of a cold run is
``max(CPU stage time / cores, requests x latency / max_concurrency) + warm run``, where the
CPU stage time is the run's own total (its last line: CPU seconds the stages used where they
ran, summed over processes, so the same plain and under ``-n 2``); the target is
``<= 1.3 x ideal + one latency``. Printed too: the peak of requests in flight the server saw,
and whether each request was sent exactly once.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from doceval_run import run_doceval
from served_model import server_stats, start_server

WORDS = "tidal storage moves water between two basins through pumps and turbines".split()


def sentence(i: int, n: int = 9) -> str:
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in range(n)).capitalize() + f" {i}."


def one_page_pdf(path: Path, lines: list[str]) -> None:
    import pymupdf

    path.parent.mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "\n".join(lines), fontsize=11)
    doc.save(path)
    doc.close()


def text_png(lines: list[str]) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=420, height=160)
    page.insert_text((12, 24), "\n".join(lines), fontsize=12)
    png: bytes = page.get_pixmap(dpi=110).tobytes("png")
    doc.close()
    return png


def pyproject(root: Path, base_url: str, concurrency: int) -> None:
    (root / "pyproject.toml").write_text(
        '[tool.doceval]\nsuites = ["cases"]\nvlm = "echo"\n\n[tool.doceval.models.echo]\n'
        f'base_url = "{base_url}"\nmodel = "echo-1"\nmax_concurrency = {concurrency}\n'
        "max_retries = 1\n"
    )


def documents(root: Path, n: int) -> int:
    suite = root / "cases" / "docs"
    for i in range(n):
        lines = [f"Tides {i}", sentence(i), sentence(i + 3), "- pumps", "- turbines"]
        one_page_pdf(suite / f"c{i:03d}" / "document.pdf", lines)
        (suite / f"c{i:03d}" / "truth.md").write_text("\n\n".join(lines) + "\n")
    (suite / "suite.toml").write_text('[suite]\nkind = "documents"\nsystems = ["pymupdf+vlm"]\n')
    return n  # one request per page


def exam_b1(root: Path, n: int) -> int:
    suite = root / "cases" / "exam"
    (suite / "images").mkdir(parents=True)
    rows = []
    for i in range(n):
        qid = f"q{i:03d}"
        lines = [f"Question {i}: {sentence(i, 6)}", "1) north  2) south  3) east  4) west"]
        (suite / "images" / f"{qid}.png").write_bytes(text_png(lines))
        row = {"id": qid, "image": f"images/{qid}.png", "answer": 1 + i % 4, "choices": 4}
        rows.append({**row, "nation": "ca", "task": "general"})
    (suite / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (suite / "suite.toml").write_text(
        '[suite]\nkind = "exam"\nmodels = ["echo"]\ntracks = ["B1"]\nocr = "rapidocr"\n'
    )
    return n  # one answer per question


def facts(root: Path, n: int) -> int:
    suite = root / "cases" / "facts"
    lines_out = []
    for i in range(n):
        lines = [f"Report {i}", sentence(i), sentence(i + 5)]
        one_page_pdf(suite / "pdfs" / f"doc{i:03d}.pdf", lines)
        for k, text in enumerate(lines[1:]):
            fact = {"pdf": f"doc{i:03d}.pdf", "page": 1, "id": f"f{i}-{k}", "type": "present"}
            lines_out.append(json.dumps({**fact, "text": text}))
    (suite / "facts.jsonl").write_text("\n".join(lines_out) + "\n")
    (suite / "suite.toml").write_text('[suite]\nkind = "facts"\nsystems = ["pymupdf+vlm"]\n')
    return n  # one request per page (its facts share it)


@dataclass
class Run:
    wall: float
    cpu: float
    out: str


def run_pytest(project: Path, workers: list[str]) -> Run:
    wall, result = run_doceval(project, workers, failed_tests_ok=True)
    found = re.search(r"CPU stage time ([\d.]+) s", result.stdout)
    return Run(wall, float(found.group(1)) if found else 0.0, result.stdout)


def bench(
    name: str,
    make: Callable[[Path, int], int],
    n: int,
    args: argparse.Namespace,
    tmp: Path,
) -> None:
    cores = len(os.sched_getaffinity(0))
    for workers in ([], ["-n", "2"]):
        process, base_url = start_server(args.latency)
        try:
            project = tmp / f"{name}{len(workers)}"
            project.mkdir()
            pyproject(project, base_url, args.concurrency)
            requests = make(project, n)
            cold = run_pytest(project, workers)
            stats = server_stats(base_url)
            warm = run_pytest(project, workers)
        finally:
            process.terminate()
            process.wait(timeout=10)
        model_time = requests * args.latency / args.concurrency
        ideal = max(cold.cpu / cores, model_time) + warm.wall
        target = 1.3 * ideal + args.latency
        once = stats["total"] == stats["distinct"] == requests
        mode = "-n 2" if workers else "plain"
        print(
            f"{name:10s} {mode:5s} cold {cold.wall:6.1f} s | ideal {ideal:6.1f} s "
            f"(CPU {cold.cpu:5.1f} s / {cores} cores, model {model_time:4.1f} s, warm run "
            f"{warm.wall:4.1f} s) | ratio {cold.wall / ideal:4.2f} "
            f"({'within' if cold.wall <= target else 'OVER'} 1.3 x ideal + latency) | "
            f"peak in flight {stats['peak_active']:2d} | {stats['total']} requests"
            + (" each once" if once else f" NOT each once ({stats})")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller suites (about a minute)")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--only", action="append", choices=["documents", "exam-B1", "facts"], help="repeatable"
    )
    args = parser.parse_args()
    sizes = (
        {"documents": 16, "exam-B1": 12, "facts": 10}
        if args.quick
        else {
            "documents": 60,
            "exam-B1": 40,
            "facts": 30,
        }
    )
    print(
        f"latency {args.latency} s, max_concurrency {args.concurrency}, "
        f"{len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}"
    )
    makers = {"documents": documents, "exam-B1": exam_b1, "facts": facts}
    tmp = Path(tempfile.mkdtemp(prefix="doceval-cold-"))
    try:
        for name, make in makers.items():
            if args.only and name not in args.only:
                continue
            bench(name, make, sizes[name], args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
