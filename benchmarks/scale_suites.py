"""The generated suites of `bench_scale`: N precomputed cases of the ``documents`` kind, or
N facts of the ``facts`` kind (as `bench_facts_kind` writes them), two systems each."""

from __future__ import annotations

import json
import random
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_facts_kind import write_suite as write_facts_suite

DOCUMENT_SYSTEMS = ("clean", "noisy")
METRIC_SAMPLE = 400  # cases whose metrics are timed in-process (documents)


def write_documents_suite(root: Path, cases: int, chars: int, seed: int) -> list[tuple[str, str]]:
    """A documents suite of `cases` cases: a short markdown truth each (a heading, a paragraph
    of ~`chars` characters, a two-item list) and two precomputed systems' outputs, ``clean``
    (a few substitutions) and ``noisy`` (OCR-like: the heading lost, letters confused, a word
    dropped; one case in a hundred garbled, over the suite's absolute gate ``cer <= 0.08``).
    Returns the (truth, output) pairs of a sample of the cases (for timing the metrics)."""
    rng = random.Random(seed)
    suite = root / "cases" / "docs"
    suite.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.doceval]\nsuites = ['cases']\n")
    (suite / "suite.toml").write_text(
        "[suite]\n"
        'kind = "documents"\n'
        f"systems = {json.dumps(list(DOCUMENT_SYSTEMS))}\n"
        "[gates]\n"
        'cer = "<= 0.08"\n'
        "[gates.suite]\n"
        'cer = "significant:+0.5pp"\n',
        encoding="utf-8",
    )
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(800)]
    sample: list[tuple[str, str]] = []
    every = max(1, cases // METRIC_SAMPLE)
    for number in range(cases):
        body = " ".join(rng.choice(words) for _ in range(max(1, chars // 6)))
        truth = f"# Case {number}\n\n{body}.\n\n- first item\n- second item\n"
        clean = truth.replace("e", "c", rng.randint(0, 3))
        noisy = _noisy(rng, truth)
        folder = suite / f"case{number:06d}"
        (folder / "outputs").mkdir(parents=True)
        (folder / "truth.md").write_text(truth, encoding="utf-8")
        (folder / "outputs" / "clean.md").write_text(clean, encoding="utf-8")
        (folder / "outputs" / "noisy.md").write_text(noisy, encoding="utf-8")
        if number % every == 0:
            sample += [(truth, clean), (truth, noisy)]
    return sample


def _noisy(rng: random.Random, truth: str) -> str:
    chars = list(truth.replace("# ", "", 1))
    confusions = rng.randint(1, 1 + len(chars) // 40)
    if rng.random() < 0.01:
        confusions = len(chars) // 6  # a garbled page
    for _ in range(confusions):
        at = rng.randrange(len(chars))
        if chars[at].isalpha():
            chars[at] = rng.choice("ilcoau1")
    words = "".join(chars).split(" ")
    if len(words) > 4:
        del words[rng.randrange(1, len(words) - 1)]
    return " ".join(words)


def write_suite(kind: str, root: Path, cases: int, chars: int, seed: int) -> list[tuple[str, str]]:
    """A suite of `cases` cases of `kind`, two systems each; documents: the timing sample."""
    if kind == "documents":
        return write_documents_suite(root, cases, chars, seed)
    # facts: `cases` facts over cases / 10 pages, the second system with OCR noise
    write_facts_suite(root, max(1, cases // 10), max(2, cases), seed, systems=2)
    return []
