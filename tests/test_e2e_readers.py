"""What people read (issue 18), as a user runs it: bounds under --doceval-update, damaged PDFs,
where reports go, a case folder given as a path."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import read_report, write_suite

pytest_plugins = ["pytester"]


def test_update_still_fails_an_absolute_bound(
    pytester: pytest.Pytester, demo_suite: Callable[..., Path]
) -> None:
    demo_suite(gates='cer = ["+0.5pp", "<= 0.05"]\n')
    update = pytester.runpytest("--doceval", "--doceval-update")
    # `worse` misses the bound on every case; the tolerance is re-recorded, the bound is not.
    update.assert_outcomes(passed=3, failed=3)
    update.stdout.fnmatch_lines(["*cer 0.* violates bound <= 0.05 (demo/case0[[]worse[]])*"])
    baseline = read_report(pytester.path / "baselines" / "demo.json")
    assert "case0[worse]" in str(baseline)  # measured, so still recorded
    again = pytester.runpytest("--doceval")
    again.assert_outcomes(passed=3, failed=3)


REPO = Path(__file__).resolve().parents[1]


def _damaged_suite(root: Path) -> Path:
    """Two truncated copies of real PDFs: a text paper cut to a stub MuPDF rebuilds as one blank
    page, and a small text PDF cut short enough to need a repair yet keep its text."""
    cases = {
        name: {"truth": "Ferry\n\nThe ferry leaves.", "pdf": "Ferry\nThe ferry leaves."}
        for name in ("stub", "clipped", "sound")
    }
    suite = write_suite(root, "damaged", cases, systems=["pymupdf"], gates="")
    real = (REPO / "cases" / "korean" / "allotment-water-ko" / "document.pdf").read_bytes()
    (suite / "stub" / "document.pdf").write_bytes(real[: len(real) // 20])
    clipped = suite / "clipped" / "document.pdf"
    data = clipped.read_bytes()
    clipped.write_bytes(data[: int(len(data) * 0.9)])
    return suite


def test_damaged_pdf_without_text_errors_and_with_text_is_scored_with_a_note(
    pytester: pytest.Pytester,
) -> None:
    _damaged_suite(pytester.path)
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "damaged PDF: MuPDF had to repair it (*startxref*found no text*(cases/damaged/stub/*",
            "*note on clipped[[]pymupdf]: damaged document.pdf: MuPDF had to repair it*",
        ]
    )
    results = read_report(pytester.path / "doceval-report.json")["suites"]["damaged"]["results"]
    by_case = {r["case"]: r for r in results}
    assert by_case["stub"]["outcome"] == "error" and "cer" not in by_case["stub"]["metrics"]
    assert by_case["clipped"]["metrics"]["cer"] < 0.2
    assert any("repair" in note for note in by_case["clipped"]["notes"])
    assert not any("repair" in note for note in by_case["sound"].get("notes", []))
    # The HTML's case table carries the note as the row's message (drawn as text: see
    # test_html_readers_chromium for the rendering).
    page = (pytester.path / "doceval-report.html").read_text()
    assert "note: damaged document.pdf: MuPDF had to repair it" in page
    # Nothing damaged becomes a baseline silently: the stub stays out of it.
    pytester.runpytest("--doceval", "--doceval-update")
    baseline = (pytester.path / "baselines" / "damaged.json").read_text()
    assert "stub[pymupdf]" not in baseline and "clipped[pymupdf]" in baseline


def test_cli_help_names_every_argument_version_and_exit_statuses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import argparse

    from pytest_doceval.cli import build_parser
    from pytest_doceval.cli import main as doceval

    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, command in sub.choices.items():
        for action in command._actions:
            assert action.help, f"doceval {name} {action.dest}: no help"
        assert "exit status:" in command.format_help()
    assert "1  `compare` found a significant regression" in parser.format_help()
    with pytest.raises(SystemExit) as done:
        doceval(["--version"])
    assert done.value.code == 0
    assert re.fullmatch(r"doceval \d+\.\d+\S*\n", capsys.readouterr().out)


def _tide_cases(n: int) -> dict[str, dict[str, str]]:
    text = "tidal storage moves water between two basins and returns it after sunset " * 3
    return {f"c{i:02d}": {"truth": text, "sys": text} for i in range(n)}


def test_cli_compare_lists_changed_cases_worst_first_and_summarises_the_rest(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_doceval.cli import main as doceval

    suite = write_suite(pytester.path, "tides", _tide_cases(8), systems=["sys"], gates="")
    pytester.runpytest("--doceval", "--doceval-json", "old.json", "--doceval-html", "")
    slightly, badly = suite / "c01" / "outputs" / "sys.md", suite / "c05" / "outputs" / "sys.md"
    slightly.write_text(slightly.read_text().replace("water", "watr", 1))
    badly.write_text(badly.read_text().replace("water", "w"))
    pytester.runpytest("--doceval", "--doceval-json", "new.json", "--doceval-html", "")
    assert doceval(["compare", "old.json", "new.json"]) == 0  # two cases of eight: noise
    out = capsys.readouterr().out
    assert "unchanged: no significant change" in out
    assert " unchanged\n" not in out and " unchanged  " not in out  # no row per unchanged
    lines = [line for line in out.splitlines() if line.split()[:1] == ["tides"]]
    cer = [line for line in lines if "  cer " in line]
    assert [line.split()[1] for line in cer] == ["c05", "c01"]  # worst first
    old = read_report(pytester.path / "old.json")["suites"]["tides"]["results"]
    new = read_report(pytester.path / "new.json")["suites"]["tides"]["results"]
    before = next(r for r in old if r["case"] == "c05")["metrics"]["cer"]
    after = next(r for r in new if r["case"] == "c05")["metrics"]["cer"]
    assert f"{before:.4f}  {after:.4f}  {after - before:+.4f}" in cer[0]


def test_cli_compare_writes_n_a_for_one_case(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_doceval.cli import main as doceval

    suite = write_suite(pytester.path, "tides", _tide_cases(1), systems=["sys"], gates="")
    pytester.runpytest("--doceval", "--doceval-json", "old.json", "--doceval-html", "")
    out = suite / "c00" / "outputs" / "sys.md"
    out.write_text(out.read_text().replace("water", "w"))
    pytester.runpytest("--doceval", "--doceval-json", "new.json", "--doceval-html", "")
    doceval(["compare", "old.json", "new.json", "--all", "--metric", "cer"])
    text = capsys.readouterr().out
    assert "nan" not in text
    row = next(line for line in text.splitlines() if line.split()[:3] == ["tides", "sys", "cer"])
    assert row.split()[7:9] == ["n/a", "n/a"]  # the CI and p(t) of one paired difference


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text('[tool.doceval]\nsuites = ["cases"]\n')
    return folder


def test_reports_go_to_the_project_root_like_baselines(pytester: pytest.Pytester) -> None:
    root = _project(pytester.path / "proj")
    write_suite(root, "tides", _tide_cases(2), systems=["sys"], gates="")
    (root / "cases" / "sub").mkdir()
    pytester.chdir()
    import os

    os.chdir(root / "cases" / "sub")
    result = pytester.runpytest("--doceval", "--doceval-update", str(root / "cases" / "tides"))
    result.assert_outcomes(passed=2)
    assert (root / "doceval-report.json").is_file() and (root / "doceval-report.html").is_file()
    assert (root / "baselines" / "tides.json").is_file()
    assert not (root / "cases" / "sub" / "doceval-report.json").exists()
    # A path given is the user's: relative to where pytest was started.
    pytester.runpytest("--doceval", "--doceval-json", "here.json", str(root / "cases" / "tides"))
    assert (root / "cases" / "sub" / "here.json").is_file()


def test_space_form_of_an_empty_html_path_with_a_suite_of_another_project(
    pytester: pytest.Pytester,
) -> None:
    other = _project(pytester.path / "other")
    proj = _project(pytester.path / "proj")
    write_suite(proj, "tides", _tide_cases(2), systems=["sys"], gates="")
    import os

    os.chdir(other)
    result = pytester.runpytest(
        "--doceval", "--doceval-update", "--doceval-html", "", "../proj/cases/tides"
    )
    result.assert_outcomes(passed=2)
    report = read_report(proj / "doceval-report.json")
    assert list(report["suites"]) == ["tides"] and "error" not in report["suites"]["tides"]
    assert (proj / "baselines" / "tides.json").is_file()
    assert not (proj / "doceval-report.html").exists() and not (other / "baselines").exists()


def test_a_case_folder_given_as_a_path_gets_a_hint(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path, "tides", _tide_cases(2), systems=["sys"], gates="")
    result = pytester.runpytest("--doceval", "cases/tides/c01")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        ["*hint: cases/tides/c01 is a case folder of suite *tides*pytest --doceval *tides -k c01"]
    )


def test_readme_tells_a_newcomer_what_the_tests_need() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    developing = readme[readme.index("## Developing") :]
    for needed in ("apt-get install chromium", "apt-get install pandoc", "texlive-latex-base"):
        assert needed in developing, needed
    assert "DOCEVAL_REALDATA" in developing and "\nmypy " in developing
    # The copy-paste server start uses the flags the project's own llama.cpp fixture uses.
    start = next(line for line in developing.splitlines() if "-m llama_cpp.server" in line)
    fixture = (REPO / "tests" / "llama_server.py").read_text(encoding="utf-8")
    for flag in re.findall(r"--\w+", start):
        assert f'"{flag}"' in fixture, flag
    assert "`ocr` (default `false`)" in readme
