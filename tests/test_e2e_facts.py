"""The facts kind end to end, as a user runs it: an olmOCR-bench folder with a suite.toml, a
parser and a precomputed system with repeats, baselines, known failures, shards and bad input."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.cli import main as doceval
from tests.conftest import WORKERS, make_pdf, read_report

pytest_plugins = ["pytester"]

ALPHA = [
    "Harbour report\nThe tide gauge at the north pier reads 4.2 metres.\n"
    "Maintenance is due in March.",
    "Appendix\nThe south pier gauge was replaced in 2019.\nPage two ends here.",
]
BETA = ["Beta memo\nAll ferries run on the winter timetable."]
TABLE = "| pier | metres |\n|---|---|\n| north pier | 4.2 |\n"
PAGE1 = (
    "# Harbour report\n\nThe tide gauge at the north pier reads 4.2 metres.\n\n"
    f"{TABLE}\nMaintenance is due in March.\n"
)
PAGE2 = "## Appendix\n\nThe south pier gauge was replaced in 2019.\n"
VLM = {  # three sampled outputs per page: a fact passes when it holds in more than half
    "alpha_pg1_repeat1.md": PAGE1,
    "alpha_pg1_repeat2.md": PAGE1,
    "alpha_pg1_repeat3.md": PAGE1.replace("reads 4.2 metres", "read 4 metres"),
    "alpha_pg2_repeat1.md": PAGE2,
    "alpha_pg2_repeat2.md": PAGE2.replace("2019", "2018"),
    "alpha_pg2_repeat3.md": PAGE2.replace("2019", "2018"),
    "sub/beta_pg1_repeat1.md": "Beta memo\n\nAll ferries run on the winter timetable.\n",
    "sub/beta_pg1_repeat2.md": "Beta memo\n\nAll ferries run on the winter timetable.\n",
    "sub/beta_pg1_repeat3.md": "Beta memo\n\nAll ferries run on the winter timetable.\n",
}


def fact(fid: str, kind: str, pdf: str = "alpha.pdf", page: int = 1, **fields: Any) -> str:
    return json.dumps({"pdf": pdf, "page": page, "id": fid, "type": kind, **fields})


FACTS = {
    "text.jsonl": [
        fact("f1", "present", text="The tide gauge at the north pier reads 4.2 metres."),
        fact("f2", "present", page=2, text="The south pier gauge was replaced in 2019."),
        fact("f3", "absent", page=2, text="Page two ends here"),
        fact("f4", "present", pdf="sub/beta.pdf", text="All ferries run on the winter timetable."),
    ],
    "order.jsonl": [
        fact("o1", "order", before="Harbour report", after="Maintenance is due in March"),
        fact("o2", "order", before="Maintenance is due", after="tide gauge at the north pier"),
    ],
    "tables.jsonl": [fact("t1", "table", cell="4.2", left="north pier")],
}
# (pymupdf, vlm) verdicts, worked out by hand from the texts above.
EXPECTED = {
    "f1": (1, 1),  # vlm: 2 of 3 repeats
    "f2": (1, 0),  # vlm: 1 of 3 repeats
    "f3": (0, 1),
    "f4": (1, 1),
    "o1": (1, 1),
    "o2": (0, 0),
    "t1": (0, 1),  # pymupdf prints no table
    "alpha.pdf_baseline": (1, 1),  # olmOCR-bench's implicit baseline facts
    "sub/beta.pdf_baseline": (1, 1),
}


def write_facts_suite(root: Path, *, systems: tuple[str, ...] = ("pymupdf", "vlm")) -> Path:
    suite = root / "cases" / "harbour"
    suite.mkdir(parents=True, exist_ok=True)
    settings = "\n[systems.pymupdf]\ntables = false\n" if "pymupdf" in systems else ""
    (suite / "suite.toml").write_text(
        f'[suite]\nkind = "facts"\nsystems = {json.dumps(list(systems))}\n{settings}'
    )
    make_pdf(suite / "pdfs" / "alpha.pdf", ALPHA)
    make_pdf(suite / "pdfs" / "sub" / "beta.pdf", BETA)
    for name, lines in FACTS.items():
        (suite / name).write_text("".join(line + "\n" for line in lines))
    for name, text in VLM.items():
        path = suite / "vlm" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return suite


@pytest.fixture
def harbour(pytester: pytest.Pytester) -> Path:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    return write_facts_suite(pytester.path)


def section(pytester: pytest.Pytester, name: str = "doceval-report.json") -> dict[str, Any]:
    suites: dict[str, Any] = read_report(pytester.path / name)["suites"]
    return dict(suites["harbour"])


def mean_of_file_means(rows: list[dict[str, Any]], system: str) -> float:
    """pass_rate recomputed independently from the rows: olmOCR-bench's mean of file means."""
    files: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row["system"] == system and row["outcome"] in ("passed", "failed"):
            files[row["labels"]["file"]].append(row["metrics"]["pass"])
    return sum(sum(v) / len(v) for v in files.values()) / len(files)


@pytest.mark.parametrize("workers", WORKERS)
def test_rows_verdicts_and_pass_rate(
    pytester: pytest.Pytester, harbour: Path, workers: list[str]
) -> None:
    result = pytester.runpytest("--doceval", *workers)
    result.assert_outcomes(passed=13, failed=5)
    out = result.stdout.str()
    assert "absent fact 'f3' fails for pymupdf: 'Page two ends here' should be absent" in out
    assert "passed in 1/3 repeats (more than half must pass)" in out  # f2[vlm]
    assert "no baseline records it" in out
    data = section(pytester)
    rows = data["results"]
    assert len(rows) == 18
    verdicts = {(r["case"], r["system"]): r["metrics"]["pass"] for r in rows}
    for case, (pymupdf, vlm) in EXPECTED.items():
        assert verdicts[(case, "pymupdf")] == pymupdf, case
        assert verdicts[(case, "vlm")] == vlm, case
    row = next(r for r in rows if r["case"] == "f2" and r["system"] == "vlm")
    assert row["outcome"] == "failed"
    assert row["labels"] == {"type": "present", "file": "text.jsonl"}
    assert row["nodeid"] == "cases/harbour/suite.toml::f2[vlm]"
    assert row["details"]["pass_fraction"] == pytest.approx(1 / 3)
    assert "2018" in row["message"] and "threshold" in row["message"]
    assert len(row["views"]["fact_check"]["repeats"]) == 3
    baseline_row = next(r for r in rows if r["case"] == "sub/beta.pdf_baseline")
    assert baseline_row["labels"] == {"type": "baseline", "file": "baseline"}
    # pass_rate is olmOCR-bench's mean of file means, recomputed here from the rows.
    rates = data["pass_rate"]
    assert rates["pymupdf"]["pass_rate"] == pytest.approx(mean_of_file_means(rows, "pymupdf"))
    assert rates["vlm"]["pass_rate"] == pytest.approx(mean_of_file_means(rows, "vlm"))
    assert rates["pymupdf"]["pass_rate"] == pytest.approx((3 / 4 + 1 / 2 + 0 + 1) / 4)
    assert rates["vlm"]["pass_rate"] == pytest.approx((3 / 4 + 1 / 2 + 1 + 1) / 4)
    assert rates["vlm"]["ci_low"] <= rates["vlm"]["pass_rate"] <= rates["vlm"]["ci_high"]
    assert rates["vlm"]["by_type"]["present"]["mean"] == pytest.approx((1 + 2 / 3 + 1 / 3) / 3)
    assert rates["vlm"]["by_file"]["order.jsonl"] == {
        "mean": 0.5,
        "passed": 1,
        "failed": 1,
        "skipped": 0,
        "total": 2,
    }
    assert data["analysis_keys"] == ["pass_rate"]
    assert data["metrics"]["pass"]["binary"] is True


def test_failing_facts_become_known_failures_and_a_regression_fails(
    pytester: pytest.Pytester, harbour: Path
) -> None:
    # Accept today's results: every failing fact becomes a known failure.
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=18)
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(passed=18)
    rows = section(pytester)["results"]
    known = [r for r in rows if any(n.startswith("known failure") for n in r["notes"])]
    assert len(known) == 5 and all(r["metrics"]["pass"] == 0.0 for r in known)
    assert section(pytester)["pass_rate"]["vlm"]["baseline_pass_rate"] == pytest.approx(0.8125)

    # One repeat more fails f1 for vlm: passed in the baseline, fails now -> a regression.
    page = harbour / "vlm" / "alpha_pg1_repeat1.md"
    page.write_text(page.read_text().replace("reads 4.2 metres", "reads 42 metres"))
    result = pytester.runpytest("--doceval", "-n", "2")  # workers read the baseline too
    result.assert_outcomes(passed=17, failed=1)
    result.stdout.fnmatch_lines(["*FAILED cases/harbour/suite.toml::f1[[]vlm[]]*present fact*"])
    assert "it passed in the baseline" in result.stdout.str()


def test_a_page_is_parsed_once_per_system_whatever_its_facts(
    pytester: pytest.Pytester, harbour: Path
) -> None:
    pytester.makeconftest(
        """
import pymupdf
import pytest_doceval

LOG = __import__("pathlib").Path(__file__).parent / "parsed.log"


@pytest_doceval.register_parser("counting")
class Counting:
    name = "counting"

    def __init__(self, settings, env):
        pass

    def fingerprint(self):
        return {"system": "counting", "version": "1"}

    def parse(self, pdf):
        with pymupdf.open(pdf) as doc, LOG.open("a") as log:
            log.write(f"{pdf.name} {doc.page_count}\\n")
            return doc[0].get_text()
"""
    )
    write_facts_suite(pytester.path, systems=("counting",))
    pytester.runpytest("--doceval").assert_outcomes(passed=6, failed=3)
    # alpha has 7 facts on 2 pages, beta 2 on 1 page: three one-page PDFs were parsed.
    parsed = sorted((pytester.path / "parsed.log").read_text().splitlines())
    assert parsed == ["alpha_pg1.pdf 1", "alpha_pg2.pdf 1", "beta_pg1.pdf 1"]
    pytester.runpytest("--doceval").assert_outcomes(passed=6, failed=3)
    assert len((pytester.path / "parsed.log").read_text().splitlines()) == 3  # cached


def test_merge_of_shards_equals_the_unsharded_run(pytester: pytest.Pytester, harbour: Path) -> None:
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=18)
    pytester.runpytest("--doceval", "--doceval-json", "full.json").assert_outcomes(passed=18)
    shards = []
    for k in (1, 2, 3):
        pytester.runpytest("--doceval", "--doceval-shard", f"{k}/3", "--doceval-json", f"s{k}.json")
        shards.append(str(pytester.path / f"s{k}.json"))
    assert doceval(["merge", *shards, "-o", str(pytester.path / "merged.json")]) == 0
    full, merged = section(pytester, "full.json"), section(pytester, "merged.json")
    for data in (full, merged):
        for row in data["results"]:
            row.pop("duration", None)
    for key in ("results", "aggregates", "pass_rate", "baseline_deltas", "metrics", "outcomes"):
        assert merged[key] == full[key], key
    assert {r["case"] for r in merged["results"]} == set(EXPECTED)


def test_bad_input_errors_on_its_own_items_and_the_rest_runs(
    pytester: pytest.Pytester, harbour: Path
) -> None:
    (harbour / "pdfs" / "broken.pdf").write_bytes(b"%PDF-1.7 this is not a PDF")
    (harbour / "vlm" / "broken_pg1_repeat1.md").write_text("Some text of the broken page.\n")
    (harbour / "unfinished.jsonl").write_bytes(
        b"\n".join(
            [
                fact("b1", "sparkle", text="x").encode(),
                json.dumps({"pdf": "alpha.pdf", "page": 1, "id": "b2", "type": "present"}).encode(),
                b"{not json",
                fact("b4", "present", pdf="broken.pdf", text="Some text").encode(),
                fact("b5", "present", pdf="gone.pdf", text="Anything").encode(),
                fact("f1", "present", text="an id used twice").encode(),
                b'{"id": "b7", "text": "caf\xe9"}',
            ]
        )
    )
    # --tb=no: pytest formats the traceback of every error before the plugin replaces it
    # with the cause, and that costs about a second an error; the rows hold the messages.
    pytester.runpytest("--doceval", "--tb=no")
    rows = section(pytester)["results"]
    out = "\n".join(str(r["message"]) for r in rows)
    assert 'unknown fact type "sparkle"' in out
    assert "fact 'b2': missing required field 'text'" in out
    assert "not valid JSON" in out and "not UTF-8 (byte 0xe9" in out
    assert "duplicate id (first used in text.jsonl:1)" in out
    assert "fact 'b4' (pymupdf, unfinished.jsonl:4)" in out and "not a readable PDF" in out
    assert "fact 'b5' (pymupdf, unfinished.jsonl:5)" in out and "missing PDF" in out
    assert "fact 'b5' (vlm, unfinished.jsonl:5)" in out and "missing output of vlm" in out
    by_key = {(r["case"], r["system"]): r for r in rows}
    errors = {key for key, r in by_key.items() if r["outcome"] == "error"}
    bad_cases = {"b1", "b2", "unfinished.jsonl:3", "unfinished.jsonl:6", "unfinished.jsonl:7"}
    assert errors == (
        {(c, s) for c in bad_cases for s in ("pymupdf", "vlm")}
        | {("b4", "pymupdf"), ("b5", "pymupdf"), ("b5", "vlm")}
        | {("broken.pdf_baseline", "pymupdf"), ("gone.pdf_baseline", "pymupdf")}
        | {("gone.pdf_baseline", "vlm")}
    )
    assert by_key[("b4", "vlm")]["outcome"] == "passed"  # a precomputed output needs no PDF
    assert by_key[("unfinished.jsonl:3", "vlm")]["labels"] == {
        "type": "?",
        "file": "unfinished.jsonl",
    }
    # The other facts ran as before.
    for case, (pymupdf, vlm) in EXPECTED.items():
        assert by_key[(case, "pymupdf")]["metrics"]["pass"] == pymupdf
        assert by_key[(case, "vlm")]["metrics"]["pass"] == vlm
    assert any("fact lines could not be used" in n for n in section(pytester)["notes"])


def test_format_and_footnote_facts_and_the_micro_mean(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    suite = write_facts_suite(pytester.path, systems=("vlm",))
    markup = [
        fact("m1", "format", text="Harbour report", format="heading"),
        fact("m2", "format", text="tide gauge", format="bold"),
        fact("m3", "footnote", page=2, marker="1", appears_before_marker="replaced in"),
        fact("m4", "format", text="Appendix", format="underline"),
    ]
    (suite / "markup.jsonl").write_text("".join(line + "\n" for line in markup))
    (suite / "vlm" / "alpha_pg2_repeat1.md").write_text(
        "## Appendix\n\nThe south pier gauge was replaced in 2019<sup>1</sup>.\n"
    )
    result = pytester.runpytest("--doceval", "--tb=no")
    result.assert_outcomes(passed=8, failed=4, errors=1)
    rows = {r["case"]: r for r in section(pytester)["results"]}
    assert "repeat 1: no bold text in the output" in rows["m2"]["message"]
    assert "footnote marker '1' not found" in rows["m3"]["message"]  # repeats 2 and 3
    assert "markup.jsonl:4: fact 'm4': field 'format' must be one of" in rows["m4"]["message"]
    assert rows["m1"]["metrics"]["pass"] == 1.0
    assert rows["m1"]["labels"] == {"type": "format", "file": "markup.jsonl"}
    assert rows["m3"]["details"]["pass_fraction"] == pytest.approx(1 / 3)
    # The micro mean (olmOCR-bench's overall_score), recomputed from the rows: every decided
    # fact's fraction of repeats, one mean -- beside, not instead of, the mean of file means.
    rate = section(pytester)["pass_rate"]["vlm"]
    decided = [r for r in rows.values() if r["outcome"] in ("passed", "failed")]
    fractions = [r["details"].get("pass_fraction", r["metrics"]["pass"]) for r in decided]
    assert rate["micro_mean"] == pytest.approx(sum(fractions) / len(fractions))
    assert rate["pass_rate"] == pytest.approx(mean_of_file_means(list(rows.values()), "vlm"))
    assert rate["micro_mean"] != pytest.approx(rate["pass_rate"])


def test_a_model_answering_500_errors_the_facts_of_its_page_only(pytester: pytest.Pytester) -> None:
    """A two-stage system's model stage failing on one page is an error of that page's facts,
    naming the model and the cause; the other page's facts are scored."""
    from model_server import ModelServer

    with ModelServer() as server:
        pytester.makepyprojecttoml(
            '[tool.doceval]\nsuites = ["cases"]\nvlm = "echo"\n\n[tool.doceval.models.echo]\n'
            f'base_url = "{server.base_url}"\nmodel = "echo-1"\nmax_retries = 1\ntimeout = 5\n'
        )
        suite = pytester.path / "cases" / "harbour"
        make_pdf(suite / "pdfs" / "alpha.pdf", [ALPHA[0], "A broken page [fault:500]"])
        (suite / "suite.toml").write_text('[suite]\nkind = "facts"\nsystems = ["pymupdf+vlm"]\n')
        (suite / "f.jsonl").write_text(
            fact("ok", "present", text="Maintenance is due in March.")
            + "\n"
            + fact("lost", "present", page=2, text="A broken page")
            + "\n"
        )
        pytester.runpytest("--doceval", "--tb=no").assert_outcomes(passed=2, errors=1)
        # Page 1 once for both its facts (``ok`` and the implicit baseline fact), page 2 once
        # and its one retry: nothing is asked again in a test's place.
        assert server.total == 3
    rows = {r["case"]: r for r in section(pytester)["results"]}
    assert rows["ok"]["outcome"] == "passed"  # the echo keeps the page's words
    assert rows["lost"]["outcome"] == "error"
    assert "model 'echo'" in rows["lost"]["message"] and "500" in rows["lost"]["message"]
    assert "stage pymupdf+vlm (model 'echo') on alpha.pdf#page=2" in rows["lost"]["message"]


@pytest.mark.slow
def test_a_warm_run_plans_pages_without_pymupdf(pytester: pytest.Pytester, harbour: Path) -> None:
    """Planning a parsed page needs its PDF's page count: a cold run reads it with PyMuPDF
    (whose import loads layout models) and keeps it in the store, a warm run takes it from
    there and imports no PyMuPDF at all, with the same rows."""
    from tests.test_score_key import HEAVY_PROBE

    pytester.makeconftest(HEAVY_PROBE)

    def run() -> tuple[list[str], dict[str, Any]]:
        pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider")
        loaded: list[str] = json.loads((pytester.path / "heavy.json").read_text())
        rows = {r["nodeid"]: (r["outcome"], r["metrics"]) for r in section(pytester)["results"]}
        return loaded, rows

    cold_loaded, cold_rows = run()
    assert "pymupdf" in cold_loaded
    warm_loaded, warm_rows = run()
    assert "pymupdf" not in warm_loaded and "onnxruntime" not in warm_loaded
    assert warm_rows == cold_rows


@pytest.mark.slow
def test_a_page_the_pdf_lacks_still_errors_when_its_count_is_stored(
    pytester: pytest.Pytester, harbour: Path
) -> None:
    """The stored page count is the PDF's: a fact on a page past it errors in a warm run as
    in a cold one, naming the page and the count."""
    (harbour / "extra.jsonl").write_text(fact("far", "present", page=9, text="x") + "\n")
    for _ in range(2):
        result = pytester.runpytest_subprocess("--doceval", "-p", "no:cacheprovider")
        result.stdout.fnmatch_lines(
            ["*far*(pymupdf*alpha.pdf: the fact is on page 9 but the PDF has 2 pages"]
        )
