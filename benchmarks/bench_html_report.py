"""HTML report at scale: a synthetic report of 2,000 cases x 2 systems with ~5,000-character
truth texts, rendered by `pytest_doceval.report.html`, then loaded in headless Chromium.

    python benchmarks/bench_html_report.py [--cases 2000] [--chars 5000] [--systems 2]
        [--model clustered|scattered|both] [--output-diffs 0.0] [--runs 3] [--keep DIR]

Prints, per edit model: render time, file size (MB = 10^6 bytes) and what the bytes are, and
the load time in headless Chromium, against the targets (under 5 MB, under 2 s):

* "ready" is measured in the page: ``performance.now()`` (ms since navigation start) when the
  report's script has drawn the page, read back from ``data-ready-ms`` in ``--dump-dom``
  output; it includes reading and parsing the whole file. Median of --runs.
* "wall" is the wall time of ``chromium --dump-dom`` on the report minus the same on a blank
  page (browser start-up), median of --runs.
* "self-test" opens the first case row with a diff (``#selftest``) under
  ``--virtual-time-budget`` and reports whether the diff was drawn; virtual time makes
  in-page clocks meaningless there, so no time is printed for it.

Truth texts are pseudo-English (Zipf-distributed vocabulary, sentences, paragraphs; gzip
ratio about 2.8 like real prose). Each system's output has a character edit rate drawn from
1-5 % per case, spent in one of two ways:

* clustered (realistic for extraction and OCR errors): 40 % of the edit budget as scattered
  1-2 character confusions, deletions and insertions, 60 % as region errors: a dropped line
  (20-80 characters deleted), a spurious line such as a running header (10-40 inserted) or a
  garbled stretch (10-60 characters with 30 % substituted);
* scattered (worst case for size): every edit is 1-3 characters at a uniformly random place,
  so almost no equal run is long enough to elide.

Diffs are elided like `pytest_doceval.metrics.text` does: equal runs longer than
2 x 40 + 10 characters keep 40 characters of context on each side. Rows carry the report
contract's shape: ``views.text_diff``, and with ``--output-diffs F`` a share F of rows also
has ``views.output_diff`` (a previous output that differed from this one by 0.5 % edits).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_doceval.metrics.text import elide_equal
from pytest_doceval.report.html import render_html

CHROMIUM = "/usr/bin/chromium"
TARGET_MB = 5.0
TARGET_S = 2.0
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
)

_SYLLABLE_TEXT = (
    "ka ten ro mi sal vor en ta lis pe dor an ci um tra ne os ber li ga ul re fin to sa "
    "mon ex ar po del ing er tion al ic ent ous at com pro con sta"
)
_FUNCTION_TEXT = (
    "the of and to in a is that for it as was with be by on not this are from at or "
    "an which have has but their its were been can more these such also than other between into"
)
_SYLLABLES = _SYLLABLE_TEXT.split()
_FUNCTION_WORDS = _FUNCTION_TEXT.split()
_CONFUSIONS = {
    "l": "1",
    "1": "l",
    "O": "0",
    "0": "O",
    "e": "c",
    "c": "e",
    "a": "o",
    "o": "a",
    "i": "l",
    "n": "u",
    "u": "n",
    "m": "rn",
    "h": "b",
    "b": "h",
    "t": "f",
    "f": "t",
}
_HEADERS = (
    "Journal of Applied Studies",
    "Preprint, do not cite",
    "Page",
    "Vol. 12, No. 3",
    "Proceedings 2026",
    "Table 2 (continued)",
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


# --------------------------------------------------------------------------- texts and edits


def vocabulary(rng: random.Random, size: int = 20_000) -> tuple[list[str], list[float]]:
    """Function words then pseudo-words, with cumulative Zipf weights (exponent 1.05)."""
    words = list(_FUNCTION_WORDS)
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))
        if rng.random() < 0.01:
            word += rng.choice("éèüöñ")
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words, list(itertools.accumulate(1 / (rank + 1) ** 1.05 for rank in range(size)))


def truth_text(rng: random.Random, vocab: tuple[list[str], list[float]], chars: int) -> str:
    words, cumulative = vocab
    parts: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(8, 28)))
        sentence = sentence[0].upper() + sentence[1:]
        if rng.random() < 0.3:
            cut = sentence.find(" ", len(sentence) // 2)
            if cut > 0:
                sentence = sentence[:cut] + "," + sentence[cut:]
        sentence += "." if rng.random() < 0.9 else f" ({rng.randint(1, 99)})."
        parts.append(sentence + ("\n\n" if rng.random() < 0.15 else " "))
        size += len(parts[-1])
    return "".join(parts)[:chars].rstrip()


def _garble(rng: random.Random, text: str) -> str:
    return "".join(_CONFUSIONS.get(c, rng.choice(_LETTERS)) for c in text) or "x"


def _glyph_edit(rng: random.Random, text: str, at: int, size: int) -> tuple[int, list[Any]]:
    """One small edit at `at`: (reference characters used, op)."""
    kind = rng.random()
    if kind < 0.6:
        ref = text[at : at + size]
        hyp = _garble(rng, ref)
        return len(ref), ["S", ref, hyp if hyp != ref else ref + "x"]
    if kind < 0.8:
        return len(text[at : at + size]), ["D", text[at : at + size]]
    return 0, ["I", "".join(rng.choice(_LETTERS + " ") for _ in range(size))]


def _region_edit(rng: random.Random, text: str, at: int) -> tuple[int, list[list[Any]]]:
    kind = rng.random()
    if kind < 1 / 3:  # a dropped line
        ref = text[at : at + rng.randint(20, 80)]
        return len(ref), [["D", ref]]
    if kind < 2 / 3:  # a spurious line: running header or page number
        header = f"{rng.choice(_HEADERS)} {rng.randint(1, 40)}\n"
        return 0, [["I", header[: rng.randint(10, 40)]]]
    length = rng.randint(10, 60)  # a garbled stretch
    ops: list[list[Any]] = []
    for offset in range(at, min(at + length, len(text))):
        char = text[offset]
        if rng.random() < 0.3:
            ops.append(["S", char, _garble(rng, char)])
        elif ops and ops[-1][0] == "=":
            ops[-1][1] += char
        else:
            ops.append(["=", char])
    return min(length, len(text) - at), ops


def _events(rng: random.Random, text: str, rate: float, model: str) -> dict[int, str]:
    """Where edits start, and of which kind ("glyph" or "region"), spending about
    `rate` x len(text) characters of edits."""
    budget = rate * len(text)
    events: dict[int, str] = {}
    if model == "scattered":
        glyph_budget, region_budget = budget, 0.0
    else:
        glyph_budget, region_budget = 0.4 * budget, 0.6 * budget
    for _ in range(max(1, round(glyph_budget / 1.6))):
        events[rng.randrange(len(text))] = "glyph"
    for _ in range(round(region_budget / 35)):
        events[rng.randrange(len(text))] = "region"
    return events


def system_output(
    rng: random.Random, text: str, rate: float, model: str
) -> tuple[list[list[Any]], dict[str, int], str]:
    """The aligned diff of one system's output against `text`, its edit counts, and the
    output."""
    events = _events(rng, text, rate, model)
    ops: list[list[Any]] = []
    position = 0

    def equal(chunk: str) -> None:
        if not chunk:
            return
        if ops and ops[-1][0] == "=":
            ops[-1][1] += chunk
        else:
            ops.append(["=", chunk])

    for at in sorted(events):
        if at < position:
            continue
        equal(text[position:at])
        if events[at] == "glyph":
            used, op = _glyph_edit(rng, text, at, rng.choice((1, 1, 1, 2, 2, 3)))
            new_ops = [op]
        else:
            used, new_ops = _region_edit(rng, text, at)
        for op in new_ops:
            if op[0] == "=":
                equal(op[1])
            else:
                ops.append(op)
        position = at + used
    equal(text[position:])
    counts = {"hits": 0, "substitutions": 0, "deletions": 0, "insertions": 0}
    for op in ops:
        if op[0] == "=":
            counts["hits"] += len(op[1])
        elif op[0] == "S":
            counts["substitutions"] += len(op[1])
        elif op[0] == "D":
            counts["deletions"] += len(op[1])
        else:
            counts["insertions"] += len(op[1])
    counts["reference_length"] = len(text)
    return elide(ops), counts, output_text(ops)


def output_text(ops: list[list[Any]]) -> str:
    """The output an aligned (not elided) diff describes."""
    return "".join(op[2] if op[0] == "S" else op[1] for op in ops if op[0] != "D")


def elide(ops: list[list[Any]]) -> list[list[Any]]:
    """Long equal runs kept only as context around edits, exactly as real report diffs are."""
    out: list[list[Any]] = []
    for index, op in enumerate(ops):
        if op[0] == "=":
            out.extend(elide_equal(op[1], first=index == 0, last=index == len(ops) - 1))
        else:
            out.append(op)
    return out


# --------------------------------------------------------------------------- the report


def _ci(values: list[float]) -> dict[str, float]:
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return {"mean": mean, "ci_low": mean - half, "ci_high": mean + half, "n": len(values)}


def _aggregate(values: list[float]) -> dict[str, Any]:
    return {**_ci(values), "method": "percentile-bootstrap", "small_n": len(values) < 10}


def synthetic_report(
    cases: int, chars: int, systems: int, model: str, seed: int = 0, output_diffs: float = 0.0
) -> dict[str, Any]:
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    names = ["pymupdf", "rapidocr", "pymupdf4llm", "vlm"][:systems]
    rows: list[dict[str, Any]] = []
    for number in range(cases):
        case = f"doc-{number:05d}"
        text = truth_text(rng, vocab, chars)
        for system in names:
            rows.append(_row(rng, case, system, text, model, output_diffs))
    metrics = ("cer", "wer", "structure_f1")
    aggregates = {
        s: {
            m: _aggregate([r["metrics"][m] for r in rows if r["system"] == s and r["metrics"]])
            for m in metrics
        }
        for s in names
    }
    deltas: list[dict[str, Any]] = []
    for s in names:
        for m in metrics:
            pairs = [
                (r["metrics"][m], r["baseline"][m])
                for r in rows
                if r["system"] == s and r["metrics"] and r["baseline"]
            ]
            diff = _ci([a - b for a, b in pairs])
            direction = "higher" if m == "structure_f1" else "lower"
            low, high = diff["ci_low"], diff["ci_high"]
            worse = low > 0 if direction == "lower" else high < 0
            better = high < 0 if direction == "lower" else low > 0
            deltas.append(
                {
                    "system": s,
                    "metric": m,
                    "n": len(pairs),
                    "current_mean": statistics.fmean(a for a, _ in pairs),
                    "baseline_mean": statistics.fmean(b for _, b in pairs),
                    "mean_diff": diff["mean"],
                    "ci_low": diff["ci_low"],
                    "ci_high": diff["ci_high"],
                    "p_ttest": 0.2,
                    "p_wilcoxon": 0.3,
                    "significant": worse or better,
                    "verdict": "worse" if worse else "better" if better else "unchanged",
                    "direction": direction,
                    "method": "paired-bootstrap",
                }
            )
    return {
        "schema": "doceval-report/1",
        "created": "2026-11-22T10:00:00Z",
        "environment": {"python": "3.11.7", "platform": "synthetic", "packages": {}},
        "config": {"bootstrap_resamples": 1000, "confidence": 0.95, "seed": seed},
        "suites": {
            "synthetic": {
                "kind": "documents",
                "path": "cases/synthetic",
                "language": "en",
                "normalization": "fair-v1",
                "systems": names,
                "scoring_id": "fair-v1",
                "metrics": {
                    "cer": _spec("lower", "character error rate", counts="cer"),
                    "wer": _spec("lower", "word error rate"),
                    "structure_f1": _spec("higher", "F1 of structure elements"),
                },
                "analysis_keys": ["comparisons"],
                "notes": [f"synthetic benchmark report ({model} edits)"],
                "results": rows,
                "aggregates": aggregates,
                "comparisons": [
                    {
                        "a": names[0],
                        "b": names[1],
                        "metric": "cer",
                        "n": cases,
                        "mean_diff": -0.01,
                        "ci_low": -0.012,
                        "ci_high": -0.008,
                        "p_ttest": 1e-6,
                        "p_wilcoxon": 1e-6,
                        "cohens_d": -0.8,
                        "p_bonferroni": 3e-6,
                    }
                ]
                if len(names) > 1
                else [],
                "baseline_deltas": deltas,
                "gates": [
                    {
                        "system": s,
                        "metric": "cer",
                        "rule": "significant:+0.5pp",
                        "passed": True,
                        "message": "no significant regression",
                    }
                    for s in names
                ],
            }
        },
    }


def _spec(direction: str, description: str, counts: str | None = None) -> dict[str, Any]:
    return {
        "direction": direction,
        "headline": True,
        "counts": counts,
        "binary": False,
        "description": description,
    }


def _row(
    rng: random.Random, case: str, system: str, text: str, model: str, output_diffs: float
) -> dict[str, Any]:
    nodeid = f"cases/synthetic/suite.toml::{case}[{system}]"
    if rng.random() < 0.01:
        return {
            "case": case,
            "system": system,
            "nodeid": nodeid,
            "labels": {},
            "outcome": "skipped",
            "message": "output missing",
            "metrics": {},
            "baseline": None,
        }
    ops, counts, output = system_output(rng, text, rng.uniform(0.01, 0.05), model)
    views: dict[str, Any] = {"text_diff": {"metric": "cer", "ops": ops}}
    if output_diffs and rng.random() < output_diffs:  # no draw otherwise: same report as before
        previous_ops, _, _ = system_output(rng, output, 0.005, model)
        views["output_diff"] = {"ops": previous_ops, "previous_cache_key": f"{case}-{system}"}
    errors = counts["substitutions"] + counts["deletions"] + counts["insertions"]
    cer = errors / counts["reference_length"]
    metrics = {"cer": cer, "wer": min(1.0, cer * 3.8), "structure_f1": rng.uniform(0.6, 0.98)}
    baseline = {m: max(0.0, v + rng.gauss(0, 0.004)) for m, v in metrics.items()}
    failed = cer > baseline["cer"] + 0.005
    return {
        "case": case,
        "system": system,
        "nodeid": nodeid,
        "outcome": "failed" if failed else "passed",
        "message": (
            f"cer {cer:.3f} > baseline {baseline['cer']:.3f} + 0.5pp (synthetic/{case}[{system}])"
        )
        if failed
        else None,
        "metrics": metrics,
        "baseline": baseline,
        "counts": {"cer": counts},
        "notes": [],
        "labels": {},
        "views": views,
    }


# --------------------------------------------------------------------------- measuring


def dump_dom(url: str, profile: Path, *extra: str, timeout: float = 120) -> tuple[str, float]:
    """The DOM Chromium has after loading `url`, and the wall time it took."""
    start = time.perf_counter()
    done = subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.stdout, time.perf_counter() - start


def _attribute(dom: str, name: str) -> str | None:
    match = re.search(rf'<html[^>]*\s{name}="([^"]*)"', dom)
    return match.group(1) if match else None


def size_breakdown(document: str) -> dict[str, int]:
    sizes = {"rows (JSON)": 0, "details (deflate+base85)": 0, "details (JSON)": 0}
    pattern = r'<script type="([^"]+)" id="(doceval-[^"]+)">(.*?)</script>'
    for kind, ident, body in re.findall(pattern, document, flags=re.S):
        size = len(body.encode("utf-8"))
        if ident.startswith("doceval-rows"):
            sizes["rows (JSON)"] += size
        elif kind == "application/json":
            sizes["details (JSON)"] += size
        else:
            sizes["details (deflate+base85)"] += size
    sizes["page, tables, CSS, JS"] = len(document.encode("utf-8")) - sum(sizes.values())
    return sizes


def bench(args: argparse.Namespace, model: str, work: Path) -> None:
    start = time.perf_counter()
    report = synthetic_report(
        args.cases, args.chars, args.systems, model, args.seed, args.output_diffs
    )
    generated = time.perf_counter() - start
    rows = report["suites"]["synthetic"]["results"]
    raw_diff_chars = sum(
        len(op[1]) + (len(op[2]) if len(op) > 2 else 0)
        for r in rows
        for view in r.get("views", {}).values()
        for op in view["ops"]
        if op[0] != "…"
    )
    start = time.perf_counter()
    document = render_html(report)
    render_s = time.perf_counter() - start
    path = work / f"report-{model}.html"
    path.write_text(document, encoding="utf-8")
    size_mb = path.stat().st_size / 1e6
    print(
        f"\n== {model} edits: {args.cases:,} cases x {args.systems} systems, "
        f"~{args.chars:,}-character truths (generated in {generated:.1f} s)"
    )
    with_output = sum(1 for r in rows if "output_diff" in r.get("views", {}))
    print(
        f"diff text in the report: {raw_diff_chars / 1e6:.1f} M characters "
        f"({with_output:,} rows with an output diff)"
    )
    print(f"render_html:  {render_s:6.2f} s")
    ok = "OK" if size_mb < TARGET_MB else "OVER"
    print(f"file size:    {size_mb:6.2f} MB   (target < {TARGET_MB:.0f} MB: {ok})")
    for part, size in size_breakdown(document).items():
        if size:
            print(f"    {part:<26} {size / 1e6:6.2f} MB")
    if not Path(CHROMIUM).exists():
        print("chromium: not installed, load time not measured")
        return
    url = path.as_uri()
    blank = work / "blank.html"
    blank.write_text("<!DOCTYPE html><title>blank</title>", encoding="utf-8")
    dump_dom(blank.as_uri(), work / f"profile-warmup-{model}")  # first start is slower
    ready, wall, base = [], [], []
    for run in range(args.runs):
        _, base_s = dump_dom(blank.as_uri(), work / f"profile-blank-{model}-{run}")
        dom, wall_s = dump_dom(url, work / f"profile-{model}-{run}")
        value = _attribute(dom, "data-ready-ms")
        if value is None:
            print(f"run {run}: page did not report ready (dump of {len(dom):,} characters)")
            continue
        ready.append(float(value) / 1000)
        wall.append(wall_s)
        base.append(base_s)
    if ready:
        ready_s = statistics.median(ready)
        wall_s = statistics.median(wall) - statistics.median(base)
        verdict = "OK" if ready_s < TARGET_S else "OVER"
        print(
            f"ready (in page, median of {len(ready)}): {ready_s:6.2f} s "
            f"(target < {TARGET_S:.0f} s: {verdict}); runs: " + ", ".join(f"{r:.2f}" for r in ready)
        )
        print(
            f"wall (dump-dom minus blank page):   {wall_s:6.2f} s "
            f"(blank page {statistics.median(base):.2f} s)"
        )
    dom, _ = dump_dom(
        url + "#selftest", work / f"profile-selftest-{model}", "--virtual-time-budget=30000"
    )
    status = _attribute(dom, "data-selftest")
    drawn = dom.count('<span class="sub"') + dom.count('<del class="del"')
    print(f"self-test (open first row with a diff): {status}; diff elements drawn: {drawn:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--chars", type=int, default=5000)
    parser.add_argument("--systems", type=int, default=2, choices=(1, 2, 3, 4))
    parser.add_argument("--model", choices=("clustered", "scattered", "both"), default="both")
    parser.add_argument(
        "--output-diffs", type=float, default=0.0, help="share of rows with an output_diff view"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the reports here and keep them")
    args = parser.parse_args()
    models = ("clustered", "scattered") if args.model == "both" else (args.model,)
    work = Path(tempfile.mkdtemp(prefix="bench-html-"))
    try:
        for model in models:
            bench(args, model, work)
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(work / f"report-{model}.html", args.keep)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
