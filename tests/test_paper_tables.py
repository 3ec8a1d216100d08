"""`doceval report --format latex|markdown`: the seeds' tables, every number equal to the
JSON report's (checked by parsing the tables back), LaTeX that pdflatex compiles, Markdown
that pandoc renders as tables, and a dagger wherever a row behind a cell carries a flag."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from pytest_doceval.cli import main as doceval
from pytest_doceval.paper import DAGGER, Cell, PaperTable, latex_escape, markdown_escape, render
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


def test_documents_tables_carry_the_reports_numbers(pytester: pytest.Pytester) -> None:
    report = _documents_report(pytester)
    section = report["suites"]["papers"]
    text = render(report_tables(report), "markdown")
    table3, seed000 = _markdown_rows(text)
    assert "Note: Body CER excludes the References section" in text
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
    for row in seed000:
        a = aggregates[row[0]]
        for cell, metric in zip(row[1:], metrics, strict=False):
            mean, low, high = _numbers(cell)
            assert _close(mean, a[metric]["mean"], 3)
            assert _close(low, a[metric]["ci_low"], 3) and _close(high, a[metric]["ci_high"], 3)
        assert row[-1] == str(a["cer"]["n"])


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
    tables = tmp_path / "tables.tex"
    tables.write_text(render(report_tables(report), "latex"), encoding="utf-8")
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n"
        "\\begin{document}\n\\input{tables}\n\\end{document}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
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


def _exam_section() -> dict[str, Any]:
    acc = [
        {"model": "m", "track": t, "n": 12, "accuracy": a, "ci_low": a - 0.1, "ci_high": a + 0.1}
        for t, a in (("A", 0.4167), ("B1", 0.5), ("B2", 0.75), ("C", 0.5833))
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
        "results": [{"system": "m-A", "case": "q1", "flags": {"correct": ["answer unparsed"]}}],
    }


def test_exam_tables_accuracy_per_track_random_line_and_deltas() -> None:
    section = _exam_section()
    text = render(report_tables({"config": {}, "suites": {"exam": section}}), "markdown")
    accuracy, deltas = _markdown_rows(text)
    model, chance = accuracy
    for cell, entry in zip(model[1:], section["accuracy"], strict=True):
        assert cell.endswith(DAGGER)  # a row of m carries a flag on `correct`
        mean, low, high = _numbers(cell)
        assert _close(mean, entry["accuracy"], 3) and _close(low, entry["ci_low"], 3)
        assert _close(high, entry["ci_high"], 3)
    assert chance[0] == "random guess"
    assert [_numbers(c)[0] for c in chance[1:]] == [0.221, 0.221, 0.2, 0.25]
    [row] = deltas
    assert row[:3] == ["m", "Δ(B2-B1)", "12"]
    assert _numbers(row[3]) == [0.25] and _numbers(row[4]) == [0.083, 0.417]
    assert _numbers(row[5]) == [0.031]
    assert row[6].startswith("supported (> 0: the OCR engine")


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
            {"system": "x-gold", "labels": {"extractor": "x", "variant": "gold"}},
            {"system": "x-raw", "labels": {"extractor": "x", "variant": "raw"}},
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
            }
        },
    }
    report = {"config": {}, "suites": {"ix": extraction, "facts": facts}}
    text = render(report_tables(report), "markdown")
    [[row]], [[fact]] = (
        _markdown_rows(render(report_tables(report, s), "markdown")) for s in ("ix", "facts")
    )
    assert row == ["x", "0.980 [0.950, 1.000]", "0.912 [0.850, 0.970]"]
    assert fact == ["p", "0.750 [0.600, 0.900]", "0.800 (4/5)"]
    assert (
        "IMQ by extractor and OCR variant" in text and "| System | All [95% CI] | present |" in text
    )


def test_escaping_keeps_text_literal() -> None:
    assert latex_escape("a_b & 50% {x} Δ") == r"a\_b \& 50\% \{x\} $\Delta$"
    assert markdown_escape("a|b *c*") == r"a\|b \*c\*"
    table = PaperTable("T", ["a|b", "n"], [[Cell("x|y", flagged=True), Cell("1")]])
    assert "| x\\|y" + DAGGER + " | 1 |" in render([table], "markdown")
