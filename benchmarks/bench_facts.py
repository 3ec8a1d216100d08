"""Throughput of the facts engine: 10,000 olmOCR-bench facts over 1,000 page outputs.

Generates (seeded) 1,000 markdown page outputs of about 3,000 characters -- prose paragraphs,
a markdown or HTML table on a third of the pages, inline and display math on a fifth -- and
10,000 facts about them in olmOCR-bench's mix: present/absent on sentences (some with OCR-like
edits in the output and max_diffs up to 3), order between paragraphs, table cells with
neighbours and headings, math, and one baseline per page. Each page output is wrapped once in a
`PageOutput` shared by its facts, as the suite kind will do. Times fact parsing, checking and the
pass_rate bootstrap (1,000 resamples) separately, and prints facts per second.

    python benchmarks/bench_facts.py [--pages 1000] [--facts 10000] [--seed 0]

Target: the whole scoring within 30 s on 2 cores (it runs in one process).
"""

from __future__ import annotations

import argparse
import random
import string
import time
from collections import Counter, defaultdict
from typing import Any

from pytest_doceval.kinds.facts import (
    FactResult,
    PageOutput,
    check,
    parse_fact,
    pass_rate_ci,
)

WORDS = [
    "".join(random.Random(i).choices(string.ascii_lowercase, k=random.Random(i).randint(2, 10)))
    for i in range(2000)
]


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 20))
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def ocr_noise(rng: random.Random, text: str, edits: int) -> str:
    chars = list(text)
    for _ in range(edits):
        i = rng.randrange(len(chars))
        chars[i] = rng.choice(string.ascii_lowercase)
    return "".join(chars)


def make_table(rng: random.Random, html: bool) -> tuple[str, list[list[str]]]:
    width, height = rng.randint(3, 6), rng.randint(4, 12)
    rows = [[rng.choice(WORDS).capitalize() for _ in range(width)]]
    rows += [[str(rng.randint(0, 99999)) for _ in range(width)] for _ in range(height - 1)]
    if html:
        head = "".join(f"<th>{c}</th>" for c in rows[0])
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows[1:])
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>", rows
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines), rows


def make_page(rng: random.Random, index: int) -> tuple[str, dict[str, Any]]:
    paragraphs = [" ".join(sentence(rng) for _ in range(rng.randint(2, 5))) for _ in range(8)]
    parts = [f"# Section {index}", *paragraphs]
    info: dict[str, Any] = {"paragraphs": paragraphs, "table": None, "math": None}
    if rng.random() < 1 / 3:
        table, rows = make_table(rng, html=rng.random() < 0.5)
        parts.insert(rng.randint(1, len(parts)), table)
        info["table"] = rows
    if rng.random() < 1 / 5:
        latex = rf"\frac{{a_{index}}}{{b}} \rightarrow \sum_{{i=1}}^{{n}} x_i^{rng.randint(2, 9)}"
        parts.insert(rng.randint(1, len(parts)), f"$$\n{latex}\n$$")
        info["math"] = latex
    noisy = [ocr_noise(rng, p, rng.randint(0, 3)) if p in paragraphs else p for p in parts]
    return "\n\n".join(noisy), info


def make_facts(rng: random.Random, pages: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = []
    for page in range(len(pages)):  # one baseline per page, as olmOCR-bench adds
        facts.append({"type": "baseline", "pdf": f"doc{page}.pdf"})
    while len(facts) < n:
        page = rng.randrange(len(pages))
        info = pages[page]
        base = {"pdf": f"doc{page}.pdf", "max_diffs": rng.choice([0, 0, 0, 1, 2, 3])}
        roll = rng.random()
        if roll < 0.45:
            text = rng.choice(info["paragraphs"]).split(". ")[0]
            facts.append({**base, "type": "present", "text": text})
        elif roll < 0.6:
            facts.append({**base, "type": "absent", "text": sentence(rng)})
        elif roll < 0.8:
            first, second = sorted(rng.sample(range(len(info["paragraphs"])), 2))
            before = info["paragraphs"][first][:40]
            after = info["paragraphs"][second][:40]
            facts.append({**base, "type": "order", "before": before, "after": after})
        elif roll < 0.95 and info["table"] is not None:
            rows = info["table"]
            r, c = rng.randrange(1, len(rows)), rng.randrange(1, len(rows[0]))
            facts.append(
                {
                    **base,
                    "type": "table",
                    "cell": rows[r][c],
                    "left": rows[r][c - 1],
                    "up": rows[r - 1][c],
                    "top_heading": rows[0][c],
                }
            )
        elif info["math"] is not None:
            facts.append({**base, "type": "math", "math": info["math"].replace(" ", "")})
    for i, fact in enumerate(facts):
        fact.update(page=1, id=f"fact{i:05d}")
    return facts[:n]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    generated = [make_page(rng, i) for i in range(args.pages)]
    raw_facts = make_facts(rng, [info for _, info in generated], args.facts)
    chars = sum(len(text) for text, _ in generated)
    print(
        f"{args.pages} pages ({chars / args.pages:,.0f} characters on average), "
        f"{len(raw_facts)} facts: {dict(Counter(f['type'] for f in raw_facts))}"
    )

    start = time.perf_counter()
    facts = [parse_fact(f, file="bench.jsonl", line=i + 1) for i, f in enumerate(raw_facts)]
    parsed = time.perf_counter()
    outputs = {f"doc{i}.pdf": PageOutput(text) for i, (text, _) in enumerate(generated)}
    results: dict[str, list[FactResult]] = {}
    per_type: defaultdict[str, float] = defaultdict(float)
    for fact in facts:
        began = time.perf_counter()
        result = check(fact, outputs[fact.pdf], latin_only=True)
        per_type[fact.type] += time.perf_counter() - began
        results.setdefault(f"{fact.type}.jsonl", []).append(result)
    checked = time.perf_counter()
    summary = pass_rate_ci(results, seed=args.seed)
    finished = time.perf_counter()

    outcomes = Counter(
        "skipped" if r.passed is None else "passed" if r.passed else "failed"
        for rs in results.values()
        for r in rs
    )
    print(
        f"outcomes: {dict(outcomes)}; pass_rate {summary.mean:.3f} "
        f"[{summary.ci_low:.3f}, {summary.ci_high:.3f}]"
    )
    print("check time by type: " + ", ".join(f"{k} {v:.2f} s" for k, v in sorted(per_type.items())))
    print(
        f"parse {parsed - start:.2f} s, check {checked - parsed:.2f} s, "
        f"bootstrap {finished - checked:.2f} s"
    )
    total = finished - start
    print(
        f"TOTAL {total:.2f} s for {len(facts)} facts over {args.pages} pages "
        f"({len(facts) / total:,.0f} facts/s; target < 30 s)"
    )


if __name__ == "__main__":
    main()
