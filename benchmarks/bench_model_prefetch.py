"""Model requests under ``pytest --doceval``: are they concurrent, and is each sent once?

    python benchmarks/bench_model_prefetch.py [--requests 400] [--latency 0.1] [--concurrency 16]

Serves the test model server (tests/model_server.py) from its own process with `--latency`
seconds per answer, builds a temporary project whose suite kind (in its conftest.py) asks the
model one distinct question per case, declared as a model stage for the engine, and runs
``pytest --doceval`` on it plain and with ``-n 2``, each with an empty cache. Prints the wall
time of each run, the same run against a server without latency (the reference: start-up,
collection and scoring), the ideal time (requests x latency / concurrency) and the server's
count of requests (each must be sent exactly once).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from doceval_run import run_doceval
from served_model import server_stats, start_server

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """
from pytest_doceval import (CaseRef, CaseResult, MetricSpec, ModelStage, Plan, Suite, cache_key,
                            suite_kind)
from pytest_doceval.models.requests import message

FINGERPRINT = {"ask": "v1"}


@suite_kind
class AskSuite(Suite):
    kind = "ask"
    metrics = {"echoed": MetricSpec("higher", binary=True)}
    scoring_id = "ask-v1"
    suite_keys = frozenset({"cases"})

    def case_refs(self):
        return [CaseRef(f"q{i:04d}", "echo") for i in range(int(self.spec.table["cases"]))]

    def request(self, ref):
        model = self.systems_env.model("echo")
        return model.request([message("user", f"question {ref.case}")], case=ref.case,
                             prompt_version="v1")

    def plan(self, ref):
        request = self.request(ref)
        key = cache_key(FINGERPRINT, ref.case)
        ask = ModelStage(key, f"ask {ref.case}", "echo", lambda _: [request],
                         lambda answers: answers[0], fingerprint=FINGERPRINT)
        return Plan((ask,), {"answer": key})

    def evaluate(self, ref, results, ctx):
        echoed = float(ref.case in results["answer"])
        return CaseResult({"echoed": echoed})
"""


def run(project: Path, workers: list[str]) -> float:
    shutil.rmtree(project / ".doceval-cache", ignore_errors=True)
    return run_doceval(project, workers)[0]


def project_for(root: Path, base_url: str, requests: int, concurrency: int) -> Path:
    root.mkdir()
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pyproject.toml").write_text(
        '[tool.doceval]\nsuites = ["cases"]\n\n[tool.doceval.models.echo]\n'
        f'base_url = "{base_url}"\nmodel = "echo"\nmax_concurrency = {concurrency}\n'
    )
    suite = root / "cases" / "ask"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text(f'[suite]\nkind = "ask"\ncases = {requests}\n')
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    ideal = args.requests * args.latency / args.concurrency
    print(
        f"{args.requests} distinct requests, server latency {args.latency * 1000:.0f} ms, "
        f"max_concurrency {args.concurrency}: ideal {ideal:.2f} s of model time"
    )
    with tempfile.TemporaryDirectory(dir=ROOT.parent) as tmp:
        for latency, label in ((0.0, "reference (no latency)"), (args.latency, "with latency")):
            process, base_url = start_server(latency)
            try:
                project = project_for(
                    Path(tmp) / f"p{latency}", base_url, args.requests, args.concurrency
                )
                for workers in ([], ["-n", "2"]):
                    before = int(server_stats(base_url)["total"])
                    elapsed = run(project, workers)
                    sent = int(server_stats(base_url)["total"]) - before
                    mode = "-n 2" if workers else "plain"
                    print(
                        f"  {label:24s} {mode:5s}: {elapsed:6.2f} s end to end, "
                        f"server received {sent} requests"
                        + (" (each once)" if sent == args.requests else " (NOT each once)")
                    )
            finally:
                process.terminate()
                process.wait(timeout=10)


if __name__ == "__main__":
    main()
