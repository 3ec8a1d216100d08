"""A suite kind defined in a conftest.py is a peer of documents: the README's example kind,
run as a user would, with a higher-is-better metric, labels and an analysis."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from model_server import ModelServer, reply_text

from pytest_doceval.cli import main as doceval
from tests.conftest import WORKERS, read_report

README = Path(__file__).resolve().parents[1] / "README.md"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run")
CHROMIUM_FLAGS += ("--disable-extensions", "--virtual-time-budget=20000")


def example_kind() -> str:
    match = re.search(r"<!-- example-kind.*?-->\n```python\n(.*?)```", README.read_text(), re.S)
    assert match, "README lost its example kind"
    return match.group(1)


def write_guesses(root: Path, *, gates: str = 'goodness = "-5pp"') -> Path:
    suite = root / "cases" / "guesses"
    suite.mkdir(parents=True, exist_ok=True)
    (suite / "suite.toml").write_text(f'[suite]\nkind = "guesses"\n\n[gates]\n{gates}\n')
    truth = [{"id": f"q{i:02d}", "value": 10 + i, "topic": "ab"[i % 2]} for i in range(12)]
    close = [{"id": t["id"], "value": t["value"] + 0.5} for t in truth]
    far = [{"id": t["id"], "value": t["value"] * 1.5} for t in truth]
    for name, rows in (("truth", truth), ("close", close), ("far", far)):
        (suite / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return suite


@pytest.fixture
def guesses(pytester: pytest.Pytester) -> Path:
    pytester.makeconftest(example_kind())
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    return write_guesses(pytester.path)


def _worsen(suite: Path, system: str, factor: float) -> None:
    path = suite / f"{system}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    truth = {r["id"]: r["value"] for r in map(json.loads, (suite / "truth.jsonl").open())}
    for row in rows:
        row["value"] = truth[row["id"]] + (row["value"] - truth[row["id"]]) * factor
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("workers", WORKERS)
def test_readme_kind_gates_deltas_and_labels(
    pytester: pytest.Pytester, guesses: Path, workers: list[str]
) -> None:
    pytester.runpytest("--doceval", "--doceval-update", *workers).assert_outcomes(passed=24)
    section = read_report(pytester.path / "doceval-report.json")["suites"]["guesses"]
    assert section["metrics"]["goodness"]["direction"] == "higher"
    assert section["scoring_id"] == "goodness-v1"
    assert {r["labels"]["topic"] for r in section["results"]} == {"a", "b"}
    by_topic = section["by_topic"]
    close_a = [1 - 0.5 / (10 + i) for i in range(0, 12, 2)]
    assert by_topic["close"]["a"] == pytest.approx(sum(close_a) / len(close_a))
    assert section["analysis_keys"] == ["by_topic"]

    _worsen(guesses, "close", 6.0)  # goodness drops: a regression of a higher-is-better metric
    _worsen(guesses, "far", 0.5)  # goodness rises: an improvement, never a failure
    result = pytester.runpytest("--doceval", *workers)
    result.assert_outcomes(passed=12, failed=12)
    assert "goodness 0.700 < baseline 0.950 - 5pp (guesses/q00[close])" in result.stdout.str()
    section = read_report(pytester.path / "doceval-report.json")["suites"]["guesses"]
    verdicts = {d["system"]: d["verdict"] for d in section["baseline_deltas"]}
    assert verdicts == {"close": "worse", "far": "better"}
    failed = {r["system"] for r in section["results"] if r["outcome"] == "failed"}
    assert failed == {"close"}


def test_readme_kind_is_short_and_draws_its_own_html_view(
    pytester: pytest.Pytester, guesses: Path
) -> None:
    code = [line for line in example_kind().splitlines() if line.strip()]
    assert len(code) <= 40  # lines of code, blank lines (as ruff format wants them) aside
    result = pytester.runpytest("--doceval", "--doceval-update", "--doceval-html", "report.html")
    result.assert_outcomes(passed=24)
    section = read_report(pytester.path / "doceval-report.json")["suites"]["guesses"]
    row = next(r for r in section["results"] if (r["case"], r["system"]) == ("q00", "close"))
    assert row["views"] == {"guess": {"truth": 10, "guess": 10.5}}
    if not CHROMIUM.exists():
        pytest.skip("needs /usr/bin/chromium to render the view")
    # The page's self-test opens the first case row that has a view (here q00) and draws it.
    page = (pytester.path / "report.html").as_uri() + "#selftest"
    profile = f"--user-data-dir={pytester.path / 'profile'}"
    dom = subprocess.run(
        [str(CHROMIUM), *CHROMIUM_FLAGS, profile, "--dump-dom", page],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    assert 'data-selftest="ok"' in dom
    views = dom[dom.index('<div class="views">') :]
    assert "<th>truth</th><th>guess</th>" in views
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", views)
    assert cells[:2] == ["10", "10.5000"], cells[:6]  # q00[close], the first row with a view


def test_merge_of_shards_equals_the_unsharded_run_analyses_included(
    pytester: pytest.Pytester, guesses: Path
) -> None:
    (guesses / "suite.toml").write_text('[suite]\nkind = "guesses"\n')
    pytester.runpytest("--doceval", "--doceval-json", "full.json").assert_outcomes(passed=24)
    shards = []
    for k in (1, 2, 3):
        pytester.runpytest("--doceval", "--doceval-shard", f"{k}/3", "--doceval-json", f"s{k}.json")
        shards.append(str(pytester.path / f"s{k}.json"))
    # A fresh process has not imported the conftest: merge must find the kind by itself.
    for name in [m for m in sys.modules if m.startswith("_doceval_conftest_")]:
        del sys.modules[name]
    assert doceval(["merge", *shards, "-o", str(pytester.path / "merged.json")]) == 0
    full = read_report(pytester.path / "full.json")["suites"]["guesses"]
    merged = read_report(pytester.path / "merged.json")["suites"]["guesses"]
    for section in (full, merged):
        for row in section["results"]:
            row.pop("duration", None)
    for key in ("results", "aggregates", "comparisons", "by_topic", "metrics", "outcomes"):
        assert merged.get(key) == full.get(key), key


def test_an_undeclared_metric_and_a_typo_gate_are_errors(pytester: pytest.Pytester) -> None:
    misspelt = example_kind().replace('{"goodness": max(', '{"goodnes": max(')
    assert misspelt != example_kind()
    pytester.makeconftest(misspelt)
    write_guesses(pytester.path)
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(errors=24)
    result.stdout.fnmatch_lines(["*'goodnes' is not a metric of kind 'guesses'*"])


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ('goodnes = "-5pp"', "*names 'goodnes', which kind 'guesses' does not measure*"),
        ('goodness = "+5pp"', "*goodness is higher-is-better, so an allowed worsening*"),
        ('goodness = "5"', "*ambiguous*"),
    ],
)
def test_gate_mistakes_fail_the_suite_at_load_also_when_updating(
    pytester: pytest.Pytester, gates: str, message: str
) -> None:
    pytester.makeconftest(example_kind())
    write_guesses(pytester.path, gates=gates)
    result = pytester.runpytest("--doceval", "--doceval-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([message])
    assert not (pytester.path / "baselines" / "guesses.json").exists()


def test_plugin_import_is_light() -> None:
    import subprocess

    code = (
        "import sys, pytest_doceval.plugin, pytest_doceval; pytest_doceval.Suite;"
        "heavy = [m for m in ('numpy', 'scipy', 'jiwer', 'rapidfuzz', 'pymupdf', 'httpx')"
        " if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def example_model_kind() -> str:
    text = README.read_text()
    match = re.search(r"<!-- example-model-kind.*?-->\n```python\n(.*?)```", text, re.S)
    assert match, "README lost its example kind that asks a model"
    return match.group(1)


@pytest.mark.parametrize("workers", WORKERS)
def test_readme_model_kind_plans_a_request_per_test_and_scores_the_answer(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    code = [line for line in example_model_kind().splitlines() if line.strip()]
    assert len(code) <= 40  # lines of code, blank lines aside
    countries = {"c1": ("Luxembourg", "Luxembourg"), "c2": ("France", "Paris")}
    countries["c3"] = ("Mexico", "Mexico City")
    with ModelServer() as server:
        pytester.makeconftest(example_model_kind())
        models = "".join(
            f'\n[tool.doceval.models.{name}]\nbase_url = "{server.base_url}"\nmodel = "{name}"\n'
            for name in ("echo-a", "echo-b")
        )
        pytester.makepyprojecttoml(f'[tool.doceval]\nsuites = ["cases"]\n{models}')
        suite = pytester.path / "cases" / "capitals"
        suite.mkdir(parents=True)
        (suite / "suite.toml").write_text(
            '[suite]\nkind = "capitals"\nmodels = ["echo-a", "echo-b"]\n'
        )
        lines = [
            json.dumps({"id": q, "country": country, "capital": capital})
            for q, (country, capital) in countries.items()
        ]
        (suite / "questions.jsonl").write_text("\n".join(lines) + "\n")
        pytester.runpytest("--doceval", *workers).assert_outcomes(passed=6)
        assert server.total == 6  # one request per (question, model), each sent once
        rows = read_report(pytester.path / "doceval-report.json")["suites"]["capitals"]["results"]
        # The test server answers with the prompt it got (model_server.reply_text): the answer
        # names the capital exactly where the country's name holds it.
        for row in rows:
            country, capital = countries[row["case"]]
            prompt = f"What is the capital of {country}? Answer in one word."
            assert row["views"]["answer"] == reply_text([{"role": "user", "content": prompt}])
            assert row["metrics"]["correct"] == float(capital.casefold() in prompt.casefold())
        assert sorted(r["metrics"]["correct"] for r in rows) == [0, 0, 0, 0, 1, 1]
        # Warm: every answer comes from the store, nothing is sent again.
        pytester.runpytest("--doceval", *workers).assert_outcomes(passed=6)
        assert server.total == 6


def test_readme_kinds_interval_stays_within_its_metrics_bounds(pytester: pytest.Pytester) -> None:
    """Two questions: the t interval (what fewer than ten cases get) of goodness 0.3 and 0.5 is
    0.4 ± 12.7 x 0.1, far outside [0, 1]; the README's kind declares its bounds, and every
    interval of it is clipped to them."""
    from scipy import stats as scipy_stats

    pytester.makeconftest(example_kind())
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    suite = pytester.path / "cases" / "guesses"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text('[suite]\nkind = "guesses"\n')
    truth = [{"id": "q0", "value": 10, "topic": "a"}, {"id": "q1", "value": 10, "topic": "b"}]
    guess = [{"id": "q0", "value": 3}, {"id": "q1", "value": 5}]  # goodness 0.3 and 0.5
    for name, rows in (("truth", truth), ("rough", guess)):
        (suite / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pytester.runpytest("--doceval").assert_outcomes(passed=2)
    entry = read_report(pytester.path / "doceval-report.json")["suites"]["guesses"]
    aggregate = entry["aggregates"]["rough"]["goodness"]
    low, high = scipy_stats.t.interval(0.95, 1, loc=0.4, scale=0.1)  # the unclipped interval
    assert low < -0.8 and high > 1.6
    assert aggregate["mean"] == pytest.approx(0.4) and aggregate["method"] == "t"
    assert (aggregate["ci_low"], aggregate["ci_high"]) == (0.0, 1.0)
    assert entry["metrics"]["goodness"]["bounds"] == [0.0, 1.0]
