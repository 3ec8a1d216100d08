"""The extraction kind's cost per test, beyond the metrics themselves: reading the files, the
schema check, the views (entry alignment or field verdicts) and the aligned JSON diff.

    python benchmarks/bench_extraction_kind.py [--entries 200] [--repeat 3]

Times every test of the shipped suites (``cases/speaker-index``, ``cases/receipts``), then one
synthetic entries page of ``--entries`` speakers (its regex-style prediction with a few
misreads) with and without the JSON diff view, which is the part that grows fastest.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_doceval.config import load_suite_spec
from pytest_doceval.kinds.base import RunContext
from pytest_doceval.kinds.extraction.entries import EntryFields, score_entries
from pytest_doceval.kinds.registry import make_suite
from pytest_doceval.metrics.text import character_alignment
from pytest_doceval.store import Store
from pytest_doceval.systems import build_registry

REPO = Path(__file__).resolve().parents[1]


def per_test(suite_dir: Path, repeat: int) -> tuple[int, float]:
    suite = make_suite(load_suite_spec(suite_dir / "suite.toml"), build_registry())
    ctx = RunContext(Store(None, "off"))
    refs = suite.case_refs()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for ref in refs:
            suite.evaluate(ref, ctx)
        times.append((time.perf_counter() - started) / len(refs))
    return len(refs), min(times)


def synthetic(entries: int, folder: Path) -> Path:
    rng = random.Random(0)
    truth = {
        "speakers": [
            {"name": f"Speaker{i:04d}, Forename", "pages": sorted(rng.sample(range(1, 900), 6))}
            for i in range(entries)
        ]
    }
    pred = json.loads(json.dumps(truth))
    for entry in rng.sample(pred["speakers"], entries // 10):
        entry["name"] = entry["name"].replace("e", "c", 1)
        entry["pages"] = entry["pages"][:-1]
    suite = folder / "big"
    (suite / "page" / "outputs" / "rules").mkdir(parents=True)
    (suite / "suite.toml").write_text(
        '[suite]\nkind = "extraction"\nmode = "entries"\nvariants = ["raw"]\n'
        'systems = ["rules"]\n\n[suite.entries]\nlist = "speakers"\nname = "name"\n'
        'set = "pages"\n'
    )
    (suite / "page" / "truth.json").write_text(json.dumps(truth))
    (suite / "page" / "outputs" / "rules" / "raw.json").write_text(json.dumps(pred))
    return suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name in ("speaker-index", "receipts"):
        n, seconds = per_test(REPO / "cases" / name, args.repeat)
        print(f"{name}: {n} tests, {seconds * 1000:.1f} ms per test")
    with tempfile.TemporaryDirectory() as tmp:
        suite = synthetic(args.entries, Path(tmp))
        _, seconds = per_test(suite, args.repeat)
        truth = json.loads((suite / "page" / "truth.json").read_text())
        pred = json.loads((suite / "page" / "outputs" / "rules" / "raw.json").read_text())
        metric = min(
            _timed(lambda: score_entries(truth, pred, EntryFields(list="speakers")))
            for _ in range(args.repeat)
        )
        pretty = [json.dumps(v, indent=1, sort_keys=True) for v in (truth, pred)]
        diff = min(_timed(lambda: character_alignment(*pretty)) for _ in range(args.repeat))
        print(
            f"one page of {args.entries} entries ({len(pretty[0]):,} characters of JSON): "
            f"{seconds * 1000:.1f} ms per test, of which the metric {metric * 1000:.1f} ms "
            f"and the JSON diff view {diff * 1000:.1f} ms"
        )


def _timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
