"""CER throughput on 50,000-character documents: pytest-doceval's `character_errors` (jiwer 4
on rapidfuzz, plus counts) against raw rapidfuzz `Levenshtein.distance` and `editops`.

    python benchmarks/bench_cer_throughput.py [--chars 50000] [--docs 20] [--edit-rate 0.03]

Prints characters per second for each and the ratio. The raw-rapidfuzz figure is the floor of
what any CER implementation on this machine can do; `editops` is the closer comparison, since
S/D/I counts need an alignment, not just a distance.
"""

from __future__ import annotations

import argparse
import random
import string
import time

from rapidfuzz.distance import Levenshtein

from pytest_doceval.metrics import character_alignment, character_errors


def make_pair(rng: random.Random, chars: int, edit_rate: float) -> tuple[str, str]:
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(800)]
    ref = []
    while sum(len(w) + 1 for w in ref) < chars:
        ref.append(rng.choice(words))
    reference = " ".join(ref)[:chars]
    hyp = list(reference)
    for _ in range(int(chars * edit_rate)):
        i = rng.randrange(len(hyp))
        op = rng.random()
        if op < 0.5:
            hyp[i] = rng.choice(string.ascii_lowercase)
        elif op < 0.75:
            del hyp[i]
        else:
            hyp.insert(i, rng.choice(string.ascii_lowercase))
    return reference, "".join(hyp)


def timed(fn, pairs) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for ref, hyp in pairs:
        fn(ref, hyp)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=50_000)
    parser.add_argument("--docs", type=int, default=20)
    parser.add_argument("--edit-rate", type=float, default=0.03)
    args = parser.parse_args()
    rng = random.Random(0)
    pairs = [make_pair(rng, args.chars, args.edit_rate) for _ in range(args.docs)]
    total = sum(len(r) for r, _ in pairs)
    # Warm up imports and caches once.
    character_errors(*pairs[0])

    runs = {
        "rapidfuzz Levenshtein.distance": lambda r, h: Levenshtein.distance(r, h),
        "rapidfuzz Levenshtein.editops": lambda r, h: Levenshtein.editops(r, h),
        "doceval character_errors (counts)": character_errors,
        "doceval character_alignment (counts + report diff)": character_alignment,
    }
    seconds = {name: timed(fn, pairs) for name, fn in runs.items()}
    # Same numbers: the counts agree with rapidfuzz's distance on every pair.
    for ref, hyp in pairs:
        assert character_errors(ref, hyp).errors == Levenshtein.distance(ref, hyp)
    print(f"{args.docs} documents of {args.chars:,} characters, {args.edit_rate:.0%} edits")
    base = seconds["rapidfuzz Levenshtein.distance"]
    for name, s in seconds.items():
        print(
            f"  {name:<52} {total / s / 1e6:8.2f} M chars/s  {s / args.docs * 1e3:8.1f} ms/doc"
            f"  x{s / base:6.1f} vs distance"
        )
    print("  (counts verified equal to rapidfuzz's distance on every document)")


if __name__ == "__main__":
    main()
