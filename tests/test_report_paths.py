"""No report of any kind holds the machine's folders (issue 37): a report attached to a pull
request, a CI log or a paper table must not carry a runner's absolute paths, its interpreter or
its home. Every kind runs end to end here (the shipped example suites, and small suites of the
kinds the examples do not cover), and everything it shows is searched: the terminal, the JSON
report, the HTML report with its compressed case details decoded, and what ``doceval report``
makes of it (the summary, the markdown summary, the LaTeX and Markdown paper tables)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_doceval.cli import main as doceval
from tests.conftest import GOOD, TRUTH, WORSE, write_suite
from tests.test_e2e_exam import use_server, write_exam
from tests.test_e2e_facts import write_facts_suite
from tests.test_e2e_kinds import example_kind, write_guesses
from tests.test_html_report import blobs

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
ODB_DEMO = REPO.parent / "shared/peers/omnidocbench-v1.6/demo_data"


def machine_folders(project: Path) -> list[str]:
    """The folders a report must never name: the project's own (a report's paths are relative
    to it), this repository, the interpreter's and its environment's, the home and temporary
    folders, and the current one; as given and resolved (a symlinked /tmp)."""
    folders = {
        project,
        REPO,
        Path(sys.executable).parent,
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path.home(),
        Path(tempfile.gettempdir()),
        Path.cwd(),
    }
    folders |= {f.resolve() for f in folders}
    return sorted({str(f) for f in folders if len(f.parts) > 1}, key=len, reverse=True)


def machine_paths(text: str, folders: list[str]) -> list[str]:
    """Each place `text` names one of `folders` (as a whole path component), with context."""
    found = []
    for folder in folders:
        pattern = re.compile(rf"(?<![\w.-]){re.escape(folder)}(?![\w.-])")
        found += [text[max(0, m.start() - 60) : m.end() + 60] for m in pattern.finditer(text)]
    return found


def doceval_output(lines: list[str]) -> str:
    """The run's output less pytest's own header lines naming its rootdir and cache folder
    and its warnings summary (pytest's, of pytester's in-process runs)."""
    kept, in_warnings = [], False
    for line in lines:
        if line.startswith("=") and line.endswith("="):
            in_warnings = " warnings summary " in line
        if not in_warnings and not line.startswith(("rootdir:", "cachedir:")):
            kept.append(line)
    return "\n".join(kept)


def run_doceval(*args: str) -> str:
    """``doceval ARGS`` in-process: what it prints (a DocevalError's message included)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        doceval(list(args))
    return out.getvalue()


def shown_and_written(pytester: pytest.Pytester, result: pytest.RunResult) -> dict[str, str]:
    """Everything a run showed and wrote that a user may pass on, by where it came from."""
    report = "doceval-report.json"  # as a user types it, in the project (pytester's cwd)
    html = (pytester.path / "doceval-report.html").read_text(encoding="utf-8")
    out = {
        "terminal": doceval_output(result.outlines),
        "JSON report": (pytester.path / report).read_text(encoding="utf-8"),
        "HTML report": html,
        "HTML case details": json.dumps(blobs(html), ensure_ascii=False),
        "doceval report": run_doceval("report", report),
        "summary": run_doceval("report", report, "--format", "summary"),
    }
    for fmt in ("latex", "markdown"):
        printed = run_doceval("report", report, "--format", fmt, "-o", f"tables.{fmt}")
        tables = pytester.path / f"tables.{fmt}"
        written = tables.read_text(encoding="utf-8") if tables.is_file() else ""
        out[f"{fmt} paper tables"] = written + printed
    return out


def assert_no_machine_paths(pytester: pytest.Pytester, result: pytest.RunResult) -> None:
    folders = machine_folders(pytester.path)
    found = {
        where: hits
        for where, text in shown_and_written(pytester, result).items()
        if (hits := machine_paths(text, folders))
    }
    assert not found, json.dumps({w: h[:3] for w, h in found.items()}, indent=1)


# -- the kinds, each as a small project ----------------------------------------------------------


def documents(pytester: pytest.Pytester) -> None:
    """A parser with stages, a saved output and a bad input (an error naming its file)."""
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    cases = {
        "c0": {"truth": TRUTH, "pdf": GOOD, "saved": WORSE},
        "c1": {"truth": TRUTH, "pdf": GOOD, "saved": GOOD},
        "broken": {"truth": TRUTH, "saved": GOOD},
    }
    suite = write_suite(pytester.path, "tides", cases, systems=["pymupdf", "saved"])
    (suite / "broken" / "document.pdf").write_bytes(b"%PDF-1.4 not really")


def exam(pytester: pytest.Pytester) -> None:
    use_server(pytester, None)
    write_exam(pytester.path, models=["random"], tracks=["A"])


def facts(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    write_facts_suite(pytester.path)


def guesses(pytester: pytest.Pytester) -> None:
    """The README's example kind, a kind of the user's own."""
    pytester.makeconftest(example_kind())
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    write_guesses(pytester.path)


def omnidocbench(pytester: pytest.Pytester) -> None:
    """OmniDocBench's demo pages, copied into the project and named relative to the suite."""
    if not ODB_DEMO.is_dir():
        pytest.skip("OmniDocBench's demo data (../shared/peers) is absent")
    pytester.makepyprojecttoml('[tool.doceval]\nsuites = ["cases"]\n')
    data = pytester.path / "data"
    shutil.copytree(ODB_DEMO / "omnidocbench_demo", data)
    suite = pytester.path / "cases" / "odb"
    (suite / "outputs").mkdir(parents=True)
    shutil.copytree(ODB_DEMO / "end2end", suite / "outputs" / "demo")
    (suite / "suite.toml").write_text(
        '[suite]\nkind = "omnidocbench"\nannotations = "../../data/OmniDocBench_demo.json"\n'
        'images = "../../data/images"\nsystems = ["demo"]\n',
        encoding="utf-8",
    )


def shipped(*names: str) -> Callable[[pytest.Pytester], None]:
    """Suites of this repository's `cases/`, with its conftest (the example parsers), its
    pyproject's [tool.doceval] and its baselines (so the reports compare with them)."""

    def copy(pytester: pytest.Pytester) -> None:
        shutil.copy(REPO / "pyproject.toml", pytester.path)
        shutil.copy(REPO / "conftest.py", pytester.path)
        (pytester.path / "baselines").mkdir()
        for name in names:
            shutil.copytree(REPO / "cases" / name, pytester.path / "cases" / name)
            baseline = REPO / "baselines" / f"{name}.json"
            if baseline.is_file():
                shutil.copy(baseline, pytester.path / "baselines")

    return copy


PROJECTS = [
    pytest.param(documents, id="documents"),
    pytest.param(exam, id="exam"),
    pytest.param(facts, id="facts"),
    pytest.param(guesses, id="readme-kind"),
    pytest.param(omnidocbench, id="omnidocbench"),
    pytest.param(shipped("receipts", "speaker-index"), id="shipped-extraction"),
    # The shipped suites that parse and OCR PDFs and images: minutes on a cold cache.
    pytest.param(shipped("civil-exams"), id="shipped-exam", marks=pytest.mark.slow),
    pytest.param(shipped("facts"), id="shipped-facts", marks=pytest.mark.slow),
    pytest.param(
        shipped("papers", "scans", "korean", "tables"),
        id="shipped-documents",
        marks=pytest.mark.slow,
    ),
]


@pytest.mark.parametrize("project", PROJECTS)
def test_no_report_holds_the_machines_folders(
    pytester: pytest.Pytester, project: Callable[[pytest.Pytester], None]
) -> None:
    project(pytester)
    result = pytester.runpytest("--doceval", "-rA")
    assert (pytester.path / "doceval-report.json").is_file(), result.outlines[-20:]
    assert_no_machine_paths(pytester, result)


def test_the_search_finds_a_machines_folder(pytester: pytest.Pytester) -> None:
    """The check itself can fail: an interpreter path, the project's folder or an un-normalised
    path under it are found; a relative path, a URL or a word that merely starts alike are not."""
    folders = machine_folders(pytester.path)
    assert machine_paths(f"python {sys.executable} -m pytest", folders)
    assert machine_paths(f"image {pytester.path}/cases/odb/../../data/a.png", folders)
    assert machine_paths(json.dumps({"file": str(pytester.path / "x.json")}), folders)
    tmp = tempfile.gettempdir()
    clean = f"cases/odb/a.png, https://example.org{tmp}/x, {tmp}x is no folder, ../../data"
    assert machine_paths(clean, folders) == []


def test_the_report_names_no_interpreter(pytester: pytest.Pytester) -> None:
    """The environment records what the numbers depend on (Python, the platform, packages),
    never where the interpreter lives."""
    documents(pytester)
    pytester.runpytest("--doceval")
    environment = json.loads((pytester.path / "doceval-report.json").read_text())["environment"]
    assert "executable" not in environment
    assert sys.executable not in json.dumps(environment)
    assert environment["python"] == sys.version.split()[0]
