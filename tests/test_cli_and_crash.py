"""`doceval build-case`, and a worker crash under xdist losing only its own test."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from pytest_doceval.cli import main as doceval
from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]


def test_build_case_from_markdown_and_image_only(tmp_path: Path, capsys) -> None:
    source = tmp_path / "notice.md"
    source.write_text("# Notice\n\nThe ferry leaves at nine.\n\n- tickets at the quay\n")
    assert doceval(["build-case", str(source), str(tmp_path / "case")]) == 0
    assert "1 page(s), PDF + truth.md" in capsys.readouterr().out
    assert (tmp_path / "case" / "truth.md").read_text() == source.read_text()
    with pymupdf.open(tmp_path / "case" / "document.pdf") as doc:
        assert "ferry leaves at nine" in doc[0].get_text()
    assert doceval(["build-case", str(source), str(tmp_path / "scan"), "--image-only"]) == 0
    with pymupdf.open(tmp_path / "scan" / "document.pdf") as doc:
        assert doc[0].get_text().strip() == ""


def test_build_case_bad_input(tmp_path: Path, capsys) -> None:
    assert doceval(["build-case", str(tmp_path / "none.md"), str(tmp_path / "c")]) == 2
    assert "none.md: file not found" in capsys.readouterr().err
    odd = tmp_path / "paper.docx"
    odd.write_text("x")
    assert doceval(["build-case", str(odd), str(tmp_path / "c")]) == 2
    assert "expected a .tex or .md source" in capsys.readouterr().err


@pytest.mark.slow
def test_worker_crash_loses_only_its_test(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import os
import pytest_doceval

@pytest_doceval.register_parser("fragile")
class Fragile:
    name = "fragile"
    def __init__(self, settings, env): pass
    def fingerprint(self): return {"system": "fragile"}
    def parse(self, pdf):
        if pdf.parent.name == "boom":
            os._exit(3)  # a native crash in a parser takes its worker down
        return "Ferry leaves at nine"
"""
    )
    truth = "Ferry leaves at nine\n"
    cases = {name: {"truth": truth, "pdf": "Ferry leaves at nine"} for name in ("a", "b", "boom")}
    write_suite(pytester.path, "docs", cases, systems=["fragile"], gates="")
    result = pytester.runpytest_subprocess("--doceval", "-n", "2", "--doceval-no-cache")
    result.assert_outcomes(passed=2, failed=1)
    report = read_report(pytester.path / "doceval-report.json")
    rows = {r["case"]: r for r in report["suites"]["docs"]["results"]}
    assert rows["a"]["outcome"] == rows["b"]["outcome"] == "passed"
    assert rows["boom"]["outcome"] == "error" and "crashed" in rows["boom"]["message"]
