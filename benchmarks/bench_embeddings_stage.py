"""A cold documents run whose Chunk Score embeds through ``embedder = "model:NAME"``: do the
embeddings stages keep the server as busy as ``max_concurrency`` allows?

    python benchmarks/bench_embeddings_stage.py [--cases 48] [--latency 0.5] [--concurrency 8]

A suite of `--cases` precomputed outputs (each about 40 distinct sentences: one embeddings
request) is run cold (empty cache), plain and with ``-n 2``, against the test model server
(tests/model_server.py, its own process, `--latency` seconds per answer), each followed by a
warm run of the same project (every vector from the store: start-up, collection, scoring). The
ideal of a cold run is ``requests x latency / max_concurrency + warm run``; before the stages,
each test embedded its own output when it ran, one request at a time: that serial computation
(`chunk_score` with `OpenAIEmbedder`, output after output) is timed here too, as the reference.
Printed: wall, ideal and their ratio, the peak of requests in flight the server saw, and
whether each request was sent exactly once.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from doceval_run import run_doceval
from served_model import server_stats, start_server

from pytest_doceval.kinds.documents.chunk_score import chunk_score
from pytest_doceval.kinds.documents.chunking import chunk_document
from pytest_doceval.models.embeddings import OpenAIEmbedder

WORDS = "tidal basin pump turbine grid peak storage water flow night day cost".split()
TRUTH = "# Tides\n\nTidal storage moves water between two basins.\n"


def output(seed: int, lines: int = 16) -> str:
    rng = random.Random(seed)
    said = []
    for line in range(lines):
        words = [" ".join(rng.choice(WORDS) for _ in range(7)).capitalize() for _ in range(2)]
        said.append(" ".join(f"{w} {seed}-{line}-{k}." for k, w in enumerate(words)))
    return "\n".join(said)


def project(root: Path, base_url: str, cases: int, concurrency: int) -> list[str]:
    (root / "pyproject.toml").write_text(
        '[tool.doceval]\nsuites = ["cases"]\n\n[tool.doceval.models.e5]\n'
        f'base_url = "{base_url}"\nmodel = "e5-1"\nmax_concurrency = {concurrency}\n'
    )
    suite = root / "cases" / "docs"
    texts = []
    for i in range(cases):
        folder = suite / f"c{i:03d}"
        (folder / "outputs").mkdir(parents=True)
        (folder / "truth.md").write_text(TRUTH)
        texts.append(output(i))
        (folder / "outputs" / "saved.md").write_text(texts[-1])
    (suite / "suite.toml").write_text(
        '[suite]\nkind = "documents"\nsystems = ["saved"]\nembedder = "model:e5"\n'
    )
    return texts


def run_pytest(project: Path, workers: list[str]) -> float:
    return run_doceval(project, workers)[0]


def serial(base_url: str, texts: list[str]) -> float:
    """The old computation: each test embeds its own output, one after the other."""
    embedder = OpenAIEmbedder(base_url, "e5-1")
    started = time.perf_counter()
    for text in texts:
        chunk_score(chunk_document(text), embedder)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=48)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    print(
        f"{args.cases} outputs, latency {args.latency} s, max_concurrency {args.concurrency}, "
        f"{len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="doceval-embed-"))
    try:
        for workers in ([], ["-n", "2"]):
            process, base_url = start_server(args.latency)
            try:
                root = tmp / f"run{len(workers)}"
                root.mkdir()
                texts = project(root, base_url, args.cases, args.concurrency)
                cold = run_pytest(root, workers)
                stats = server_stats(base_url)
                warm = run_pytest(root, workers)
                warm_sent = server_stats(base_url)["total"] - stats["total"]
                old = serial(base_url, texts) if not workers else None
            finally:
                process.terminate()
                process.wait(timeout=10)
            requests = stats["total"]
            ideal = requests * args.latency / args.concurrency + warm
            once = stats["distinct"] == requests == args.cases and stats["max_per_body"] == 1
            mode = "-n 2" if workers else "plain"
            print(
                f"{mode:5s} cold {cold:5.1f} s | ideal {ideal:5.1f} s ({requests} requests x "
                f"{args.latency} s / {args.concurrency} + warm run {warm:4.1f} s) | ratio "
                f"{cold / ideal:4.2f} | peak in flight {stats['peak_active']:2d} | "
                + ("each request once" if once else f"NOT each once ({stats})")
                + f" | warm run sent {warm_sent}"
            )
            if old is not None:
                print(
                    f"      reference: the old serial embedding of the same outputs {old:5.1f} s "
                    f"(cold run {old / (cold - warm):.1f}x faster on the embeddings, start-up "
                    "and scoring left out)"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
