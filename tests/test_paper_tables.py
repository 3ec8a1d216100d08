"""`doceval report --format latex|markdown`: the seeds' tables, every number equal to the
JSON report's (checked by parsing the tables back), LaTeX that pdflatex compiles, Markdown
that pandoc renders as tables, and a dagger wherever a row behind a cell carries a flag."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from pytest_doceval.cli import main as doceval
from pytest_doceval.paper import (
    DAGGER,
    Cell,
    PaperTable,
    latex_escape,
    markdown_escape,
    render,
    seed_interval,
)
from pytest_doceval.report.paper import report_tables
from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]

BODY = "Tidal storage moves water between two basins and returns it after sunset."
REFS = "\n\nReferences\n\n[1] A. Author. Tides. 2020.\n[2] B. Author. Basins. 2021."


def _documents_report(pytester: pytest.Pytester) -> dict[str, Any]:
    cases = {
        f"c{i}": {
            "truth": f"# Tides {i}\n\n{BODY}",
            "good": f"Tides {i}\n{BODY}{REFS}",
            "typos": f"Tides {i}\n{BODY.replace('water', 'watr')}{REFS if i % 2 else ''}",
        }
        for i in range(4)
    }
    write_suite(pytester.path, "papers", cases, systems=["good", "typos"], gates="")
    pytester.runpytest("--doceval", "--doceval-html", "").assert_outcomes(passed=8)
    return read_report(pytester.path / "doceval-report.json")


def _markdown_rows(text: str) -> list[list[list[str]]]:
    """Each table's body rows, each cell as written (no header, no rule)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            if current is None:
                current = []  # the header line
            elif not set(line) <= set("|:- "):
                current.append(cells)
        elif current is not None:
            tables.append(current)
            current = None
    if current is not None:
        tables.append(current)
    return tables


def _numbers(cell: str) -> list[float]:
    """The numbers of a cell, percentages and points as fractions."""
    out = []
    for match in re.finditer(r"([+-]?\d+\.\d+)(%|pp)?", cell):
        value = float(match.group(1))
        out.append(value / 100 if match.group(2) else value)
    return out


def _close(shown: float, exact: float, digits: int) -> bool:
    return abs(shown - exact) <= 0.5 * 10**-digits + 1e-12


def _percentile_ci(values: list[float], resamples: int = 1000, seed: int = 0) -> list[float]:
    """The seeds' interval by the documented scheme, written here with numpy alone: the values
    sorted (an interval never depends on case order), ``resamples`` rows of n indices drawn with
    replacement from ``default_rng(seed)``, each row's mean, numpy's linear 2.5% and 97.5%
    quantiles, widened to hold the mean."""
    x = np.sort(np.asarray(values, dtype=float))
    idx = np.random.default_rng(seed).integers(0, x.size, size=(resamples, x.size))
    low, high = np.quantile(x[idx].mean(axis=1), [0.025, 0.975])
    mean = float(x.mean())
    return [min(float(low), mean), max(float(high), mean)]


def _by_system(rows: list[dict[str, Any]], metric: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for row in rows:
        if metric in (row.get("metrics") or {}) and row["outcome"] in ("passed", "failed"):
            out.setdefault(row["system"], []).append(row["metrics"][metric])
    return out


def test_documents_tables_carry_the_reports_numbers(pytester: pytest.Pytester) -> None:
    report = _documents_report(pytester)
    section = report["suites"]["papers"]
    text = render(report_tables(report), "markdown")
    table3, seed000 = _markdown_rows(text)
    assert "Note: Body CER cuts the extracted text and the ground truth alike" in text
    aggregates = section["aggregates"]
    for parser, body, full, delta in table3:
        a = aggregates[parser]
        assert _close(_numbers(body)[0], a["body_cer"]["mean"], 3)
        assert _close(_numbers(full)[0], a["cer"]["mean"], 3)
        assert _close(_numbers(delta)[0], a["refs_delta"]["mean"], 3)
        # independently: what the references add is full - body
        assert _close(_numbers(delta)[0], a["cer"]["mean"] - a["body_cer"]["mean"], 3)
    assert {row[0] for row in table3} == {"good", "typos"}
    metrics = ["cer", "wer", "structure_precision", "structure_recall", "structure_f1"]
    metrics += ["boundary_coherence"]
    config = report["config"]
    assert (config["bootstrap_resamples"], config["seed"]) == (1000, 0)
    for row in seed000:
        a = aggregates[row[0]]
        for cell, metric in zip(row[1:], metrics, strict=False):
            mean, low, high = _numbers(cell)
            assert _close(mean, a[metric]["mean"], 3)
            # Seed 000's interval, not the report's: recomputed from the rows' values.
            expected = _percentile_ci(_by_system(section["results"], metric)[row[0]])
            assert _close(low, expected[0], 3) and _close(high, expected[1], 3), (metric, cell)
        assert row[-1] == str(a["cer"]["n"])
    assert "95% CI: percentile bootstrap over documents, 1,000 resamples, seed 0" in text


def test_a_flagged_row_puts_a_dagger_on_its_cells_with_the_reason(
    pytester: pytest.Pytester,
) -> None:
    report = _documents_report(pytester)
    rows = report["suites"]["papers"]["results"]
    typos = sorted((r for r in rows if r["system"] == "typos"), key=lambda r: r["metrics"]["cer"])
    # cer marks a mean only where its flagged rows carry over half of its sum (the kind's
    # `flag_dominance`): the smallest CER alone does not, every row does.
    typos[0]["flags"] = {"cer": ["the output repeats itself"]}
    table3, _ = _markdown_rows(render(report_tables(report), "markdown"))
    assert not next(r for r in table3 if r[0] == "typos")[2].endswith(DAGGER)
    for row in typos:
        row["flags"] = {"cer": ["the output repeats itself"]}
    text = render(report_tables(report), "markdown")
    table3, seed000 = _markdown_rows(text)
    typos3 = next(r for r in table3 if r[0] == "typos")
    good3 = next(r for r in table3 if r[0] == "good")
    assert typos3[2].endswith(DAGGER) and not typos3[1].endswith(DAGGER)
    assert not any(c.endswith(DAGGER) for c in good3)
    assert next(r for r in seed000 if r[0] == "typos")[1].endswith(DAGGER)
    assert f"{DAGGER} cer: the output repeats itself" in text


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex (TeX Live) not installed")
def test_latex_tables_compile_with_booktabs(pytester: pytest.Pytester, tmp_path: Path) -> None:
    report = _documents_report(pytester)
    report["suites"]["papers"]["results"][0]["flags"] = {"wer": ["a 50% & $5 #1 reason_x"]}
    _compile(render(report_tables(report), "latex"), tmp_path)
    with pymupdf.open(tmp_path / "paper.pdf") as doc:
        printed = " ".join(page.get_text() for page in doc)
    cer = report["suites"]["papers"]["aggregates"]["good"]["cer"]["mean"]
    assert f"{cer * 100:.1f}%" in printed and "Character Error Rate by Parser" in printed
    assert "a 50% & $5 #1 reason" in printed  # escaped, printed literally


@pytest.mark.skipif(shutil.which("pandoc") is None, reason="pandoc not installed")
def test_markdown_tables_render_as_tables(pytester: pytest.Pytester) -> None:
    report = _documents_report(pytester)
    text = render(report_tables(report), "markdown")
    html = subprocess.run(
        ["pandoc", "-f", "gfm", "-t", "html"], input=text, capture_output=True, text=True
    ).stdout
    assert html.count("<table>") == 2
    cer = report["suites"]["papers"]["aggregates"]["typos"]["cer"]["mean"]
    assert f'<td style="text-align: right;">{cer * 100:.1f}%</td>' in html


def test_cli_report_writes_tables_and_refuses_an_unknown_suite(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _documents_report(pytester)
    path = str(pytester.path / "doceval-report.json")
    out = pytester.path / "t.md"
    assert (
        doceval(["report", path, "--format", "markdown", "--suite", "papers", "-o", str(out)]) == 0
    )
    assert "2 table(s) (markdown)" in capsys.readouterr().out
    assert "| Parser | Body CER | Full CER | Δ (Refs) |" in out.read_text()
    assert doceval(["report", path, "--format", "latex"]) == 0
    assert "\\toprule" in capsys.readouterr().out
    assert doceval(["report", path, "--format", "latex", "--suite", "nope"]) == 2
    assert "no suite 'nope' in the report (it has: papers)" in capsys.readouterr().err


# Per track, how many of the 12 questions model m got right.
RIGHT = {"A": 5, "B1": 6, "B2": 9, "C": 7}


def _exam_rows() -> list[dict[str, Any]]:
    rows = []
    for track, right in RIGHT.items():
        for q in range(12):
            rows.append(
                {
                    "system": f"m-{track}",
                    "case": f"q{q:02d}",
                    "outcome": "passed",
                    "labels": {"model": "m", "track": track, "nation": "K", "task": "t"},
                    "metrics": {"correct": float((q * 5) % 12 < right)},
                }
            )
    rows[0]["flags"] = {"correct": ["answer unparsed"]}
    return rows


def _exam_section() -> dict[str, Any]:
    # The report's accuracy entries carry another interval (Wilson in a run; made up here):
    # the table must print the seed's, from the rows.
    acc = [
        {"model": "m", "track": t, "n": 12, "accuracy": r / 12, "ci_low": 0.0, "ci_high": 1.0}
        for t, r in RIGHT.items()
    ]
    deltas = [
        {
            "model": "m",
            "delta": "B2-B1",
            "n": 12,
            "value": 0.25,
            "ci_low": 0.0833,
            "ci_high": 0.4167,
            "p_mcnemar": 0.0312,
            "significant": True,
            "supported": True,
            "interpretation": "> 0: the OCR engine's quality is the problem",
        }
    ]
    return {
        "kind": "exam",
        "tracks": ["A", "B1", "B2", "C"],
        "accuracy": acc,
        "deltas": deltas,
        "references": {"random_by_track": {"A": 0.2208, "B1": 0.2208, "B2": 0.2, "C": 0.25}},
        "results": _exam_rows(),
    }


def test_exam_tables_accuracy_per_track_random_line_and_deltas() -> None:
    section = _exam_section()
    config = {"bootstrap_resamples": 1000, "seed": 7, "confidence": 0.95}
    text = render(report_tables({"config": config, "suites": {"exam": section}}), "markdown")
    accuracy, deltas = _markdown_rows(text)
    model, chance = accuracy
    by_system = _by_system(section["results"], "correct")
    for cell, entry in zip(model[1:], section["accuracy"], strict=True):
        assert cell.endswith(DAGGER)  # a row of m carries a flag on `correct`
        mean, low, high = _numbers(cell)
        expected = _percentile_ci(by_system[f"m-{entry['track']}"], seed=7)
        assert _close(mean, entry["accuracy"], 3)
        assert _close(low, expected[0], 3) and _close(high, expected[1], 3)
        assert (low, high) != (0.0, 1.0)  # not the report entry's interval
    assert "95% CI: percentile bootstrap over questions, 1,000 resamples, seed 7" in text
    assert chance[0] == "random guess"
    assert [_numbers(c)[0] for c in chance[1:]] == [0.221, 0.221, 0.2, 0.25]
    [row] = deltas
    assert row[:3] == ["m", "Δ(B2-B1)", "12"]
    assert _numbers(row[3]) == [0.25, 0.083, 0.417]  # Δ [95% CI]
    assert _numbers(row[4]) == [0.031]
    assert row[5] == "supported"
    # Each delta's reading once, under the table, not on every row.
    assert "Δ(B2-B1): > 0: the OCR engine" in text
    assert "percentile bootstrap over the questions both tracks asked (paired)" in text


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=60),
    st.integers(0, 2**16),
    st.sampled_from([200, 1000]),
)
def test_a_tables_interval_is_the_documented_percentile_bootstrap(
    values: list[float], seed: int, resamples: int
) -> None:
    """`seed_interval` against the scheme written out with numpy (exact, same draws)."""
    section = {"bootstrap_resamples": resamples, "seed": seed, "confidence": 0.95}
    mean, low, high = _numbers(seed_interval(values, section, digits=6))
    expected = _percentile_ci(values, resamples, seed)
    assert _close(mean, float(np.mean(values)), 6)
    assert _close(low, expected[0], 6) and _close(high, expected[1], 6)


def test_a_tables_interval_agrees_with_scipys_percentile_bootstrap() -> None:
    """Against scipy.stats.bootstrap(method="percentile"): other draws, so only within Monte
    Carlo error. With n = 40 values of sd ~0.29 the mean's sd is ~0.046; a 2.5% quantile from
    1,000 resamples wanders by ~0.004 (scipy's, from 20,000, by ~0.001): 0.02 is 5 sd."""
    rng = np.random.default_rng(11)
    for trial in range(5):
        values = rng.uniform(0, 1, size=40).tolist()
        section = {"bootstrap_resamples": 1000, "seed": trial, "confidence": 0.95}
        _, low, high = _numbers(seed_interval(values, section, digits=6))
        reference = scipy_stats.bootstrap(
            (np.asarray(values),),
            np.mean,
            n_resamples=20_000,
            method="percentile",
            confidence_level=0.95,
            random_state=np.random.default_rng(100 + trial),
        ).confidence_interval
        assert abs(low - reference.low) < 0.02 and abs(high - reference.high) < 0.02


IMQ = {"gold": [1.0, 0.96, 0.98, 1.0, 0.96], "raw": [0.95, 0.85, 0.9, 0.93, 0.9315]}


def test_extraction_and_facts_tables() -> None:
    extraction = {
        "kind": "extraction",
        "variants": ["gold", "raw"],
        "reference_variant": "gold",
        "aggregates": {
            "x-gold": {"imq": {"mean": 0.98, "ci_low": 0.95, "ci_high": 1.0}},
            "x-raw": {"imq": {"mean": 0.9123, "ci_low": 0.85, "ci_high": 0.97}},
        },
        "results": [
            {
                "system": f"x-{variant}",
                "case": f"p{i}",
                "outcome": "passed",
                "labels": {"extractor": "x", "variant": variant},
                "metrics": {"imq": value},
            }
            for variant, values in IMQ.items()
            for i, value in enumerate(values)
        ],
    }
    facts = {
        "kind": "facts",
        "systems": ["p"],
        "pass_rate": {
            "p": {
                "pass_rate": 0.75,
                "ci_low": 0.6,
                "ci_high": 0.9,
                "by_type": {"present": {"mean": 0.8, "passed": 4, "total": 5}},
                "micro_mean": 0.7,
            }
        },
    }
    report = {"config": {}, "suites": {"ix": extraction, "facts": facts}}
    text = render(report_tables(report), "markdown")
    [[row]], [[fact]] = (
        _markdown_rows(render(report_tables(report, s), "markdown")) for s in ("ix", "facts")
    )
    assert row[0] == "x"
    for cell, values in zip(row[1:], IMQ.values(), strict=True):
        mean, low, high = _numbers(cell)
        assert _close(mean, float(np.mean(values)), 3)
        expected = _percentile_ci(values)
        assert _close(low, expected[0], 3) and _close(high, expected[1], 3)
    assert fact == ["p", "0.750 [0.600, 0.900]", "0.800 (4/5)", "0.700"]
    assert "IMQ by extractor and OCR variant" in text
    assert "| System | All [95% CI] | present | Micro mean |" in text
    assert "not the headline" in text


def test_escaping_keeps_text_literal() -> None:
    assert latex_escape("a_b & 50% {x} Δ") == r"a\_b \& 50\% \{x\} $\Delta$"
    assert markdown_escape("a|b *c*") == r"a\|b \*c\*"
    table = PaperTable("T", ["a|b", "n"], [[Cell("x|y", flagged=True), Cell("1")]])
    assert "| x\\|y" + DAGGER + " | 1 |" in render([table], "markdown")


def test_the_extraction_table_prints_seed_004s_acc_total() -> None:
    """Field accuracy is the aggregate's corpus value (seed 004's Acc_total) with its corpus
    interval (already the percentile bootstrap over pages), not the mean of per-page values."""
    entry = {"mean": 0.686, "ci_low": 0.6, "ci_high": 0.77, "corpus": 0.5303}
    entry |= {"corpus_ci_low": 0.4242, "corpus_ci_high": 0.6516}
    section = {
        "kind": "extraction",
        "variants": ["raw"],
        "aggregates": {"x-raw": {"field_accuracy": entry}},
        "results": [{"system": "x-raw", "labels": {"extractor": "x", "variant": "raw"}}],
    }
    text = render(report_tables({"config": {}, "suites": {"r": section}}), "markdown")
    [[row]] = _markdown_rows(text)
    assert row == ["x", "0.530 [0.424, 0.652]"]
    assert "Field accuracy by extractor and OCR variant (Acc\\_total [95% CI])" in text
    assert "seed 004's Acc\\_total" in text


# -- every table fits a plain article (issue 37) -------------------------------------------------

# The report sections of the shipped suites (civil-exams, facts, papers, receipts,
# speaker-index) and of OmniDocBench's 18 demo pages, as `pytest --doceval` wrote them, less what
# no paper table reads (views, messages, analyses other than the tables'): real system names,
# every column a table can have.
SECTIONS = json.loads(
    (Path(__file__).parent / "data" / "paper_sections.json").read_text(encoding="utf-8")
)
ARTICLE = (
    "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
    "\\begin{document}\n\\input{tables}\n\\end{document}\n"
)


def _compile(tables: str, folder: Path) -> str:
    """`tables` in a plain article: pdflatex's log (the run must succeed)."""
    (folder / "tables.tex").write_text(tables, encoding="utf-8")
    (folder / "paper.tex").write_text(ARTICLE, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    return (folder / "paper.log").read_text(encoding="utf-8", errors="replace")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex (TeX Live) not installed")
@pytest.mark.parametrize("suite", sorted(SECTIONS["suites"]))
def test_every_kinds_tables_fit_a_plain_article(suite: str, tmp_path: Path) -> None:
    """No overfull box: a table 442 pt too wide for an article's column (the documents kind's
    seed 000 table, the facts table, the exam deltas with their readings) was printed off the
    page. The same numbers are all printed."""
    report = {**SECTIONS, "suites": {suite: SECTIONS["suites"][suite]}}
    tables = report_tables(report)
    assert tables
    log = _compile(render(tables, "latex"), tmp_path)
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    with pymupdf.open(tmp_path / "paper.pdf") as doc:
        printed = " ".join(" ".join(page.get_text().split()) for page in doc)
    numbers = re.findall(r"[+-]?\d+\.\d+%?", printed)
    for table in tables:
        for row in table.rows:
            for cell in row:  # a value, and the interval or count under it
                for value in re.findall(r"[+-]?\d+\.\d+%?", cell.text):
                    assert value in numbers, (value, cell.text, table.title)


def test_a_table_too_wide_is_cut_where_it_allows_first_column_in_each() -> None:
    columns = ["System", *[f"Metric {i}" for i in range(9)]]
    row = [Cell("a-rather-long-system-name"), *[Cell("0.123 [0.100, 0.150]") for _ in range(9)]]
    table = PaperTable("Wide", columns, [row], notes=["the note"], breaks=(4, 7))
    latex = render([table], "latex")
    parts = latex.split("\\begin{table}")[1:]
    assert len(parts) == 3
    assert [p.count(" & ") for p in parts] == [2 * 3, 2 * 3, 2 * 3]  # header and row: 4 columns
    assert all("System & " in p for p in parts)
    assert "the note" in parts[-1] and "the note" not in parts[0]
    assert "Wide (continued)" in parts[1]
    # Markdown keeps one table.
    assert render([table], "markdown").count("| System |") == 1


def test_documents_notes_say_what_is_true() -> None:
    """Table 1's note said the truth lacks bibliography entries (pandoc keeps them here);
    "CS = Chunk Score" was defined under a table without a CS column."""
    papers = SECTIONS["suites"]["papers"]
    text = render(report_tables({**SECTIONS, "suites": {"papers": papers}}), "markdown")
    assert "does not contain bibliography entries" not in text
    assert "cuts the extracted text and the ground truth alike" in text
    assert "BC = Boundary Coherence, CS = Chunk Score." in text
    without_cs = json.loads(json.dumps(papers))
    for entry in without_cs["aggregates"].values():
        entry.pop("chunk_score", None)
    for row in without_cs["results"]:
        row["metrics"].pop("chunk_score", None)
    text = render(report_tables({**SECTIONS, "suites": {"papers": without_cs}}), "markdown")
    assert "BC = Boundary Coherence." in text and "Chunk Score" not in text and "| CS |" not in text
