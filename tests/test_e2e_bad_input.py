"""Bad input: a clear error on that test (or that suite), naming the file and the cause, while
the rest of the run goes on and the report and baselines stay whole."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from tests.conftest import make_pdf, read_report, write_suite

pytest_plugins = ["pytester"]

TRUTH = "# Ferry\n\nThe ferry leaves at nine.\n"
ZERO_PAGE_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)


def _suite_with_pdfs(root: Path) -> Path:
    cases = {
        name: {"truth": TRUTH, "pdf": "Ferry\nThe ferry leaves at nine."}
        for name in ("good", "corrupt", "encrypted", "zero")
    }
    suite = write_suite(root, "pdfs", cases, systems=["pymupdf"], gates="")
    (suite / "corrupt" / "document.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret")
    doc.save(
        suite / "encrypted" / "document.pdf",
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="u",
        owner_pw="o",
    )
    (suite / "zero" / "document.pdf").write_bytes(ZERO_PAGE_PDF)
    return suite


def test_bad_pdfs_error_on_their_own_tests(pytester: pytest.Pytester) -> None:
    _suite_with_pdfs(pytester.path)
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.fnmatch_lines_random(
        [
            "ERROR *corrupt[[]pymupdf] - not a readable PDF*",
            "ERROR *encrypted[[]pymupdf] - the PDF is encrypted*",
            "ERROR *zero[[]pymupdf] - the PDF has no pages*",
            # the cause, the stage that failed (its system), and the file, once
            "*the PDF is encrypted (password required) (stage pymupdf) "
            "(cases/pdfs/encrypted/document.pdf)",
        ]
    )
    report = read_report(pytester.path / "doceval-report.json")
    outcomes = {r["case"]: r["outcome"] for r in report["suites"]["pdfs"]["results"]}
    assert outcomes == {"corrupt": "error", "encrypted": "error", "good": "passed", "zero": "error"}
    aggregates = report["suites"]["pdfs"]["aggregates"]["pymupdf"]["cer"]
    assert aggregates["n"] == 1  # errors are not measurements


def test_byte_identical_bad_pdfs_each_name_their_own_file(pytester: pytest.Pytester) -> None:
    """Failed downloads saved as document.pdf are often the same bytes: one stage parses them
    all, and each test's error still names its own file, once, in the terminal and report."""
    bad = b"%PDF-1.4 this is not a pdf"
    for suite in ("alpha", "beta"):
        cases = {name: {"truth": TRUTH, "pdf": "Ferry"} for name in ("one", "two")}
        folder = write_suite(pytester.path, suite, cases, systems=["pymupdf"], gates="")
        for name in cases:
            (folder / name / "document.pdf").write_bytes(bad)
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(errors=4)
    lines = [line for line in result.outlines if line.startswith("ERROR cases/")]
    assert len(lines) == 4
    for suite in ("alpha", "beta"):
        report = read_report(pytester.path / "doceval-report.json")
        for row in report["suites"][suite]["results"]:
            own = f"cases/{suite}/{row['case']}/document.pdf"
            assert own in row["message"], row["message"]
            others = [
                f"cases/{s}/{c}/document.pdf"
                for s in ("alpha", "beta")
                for c in ("one", "two")
                if (s, c) != (suite, row["case"])
            ]
            assert not any(other in row["message"] for other in others), row["message"]
            assert "(stage pymupdf)" in row["message"]  # the system, not the file again


def test_missing_and_undecodable_truth(pytester: pytest.Pytester) -> None:
    suite = write_suite(
        pytester.path,
        "docs",
        {
            "ok": {"truth": TRUTH, "sys": "Ferry. The ferry leaves at nine."},
            "missing": {"sys": "x"},
            "latin1": {"truth": TRUTH, "sys": "x"},
            "empty": {"truth": TRUTH, "sys": "  \n"},
        },
        systems=["sys"],
        gates="",
    )
    (suite / "latin1" / "truth.md").write_bytes("caf\xe9".encode("latin-1"))
    result = pytester.runpytest("--doceval", "-rE")
    # An empty output is an output (CER 1 against a real truth, perfect on a blank page):
    # scored, and listed in the summary so a broken export does not pass unseen.
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*missing truth file (cases/docs/missing/truth.md)*",
            "*truth file is not UTF-8 (byte 0xe9 at offset 3) (cases/docs/latin1/truth.md)*",
            "*note on empty[[]sys]: outputs/sys.md is empty*",
        ]
    )


@pytest.mark.parametrize(
    ("toml", "cause"),
    [
        (
            '[suite]\nkind = "documents"\nsystems = ["sys"]\ncolour = "red"\n',
            "unknown key(s) colour in [suite]*",
        ),
        ('[suite]\nkind = "poems"\nsystems = ["sys"]\n', "unknown suite kind 'poems'*"),
        (
            '[suite]\nkind = "documents"\nsystems = ["nosuch"]\n',
            "unknown system 'nosuch': not a registered parser*",
        ),
        (
            '[suite]\nkind = "documents"\nsystems = ["sys"]\n[gates]\ncer = "lots"\n',
            "gate cer = 'lots' is not a rule*",
        ),
        (
            '[suite]\nkind = "documents"\nsystems = ["sys"]\nlanguage = "fr"\n',
            "language 'fr' is not one of en, ko, mixed*",
        ),
        ("[suite\nkind=", "cannot read suite definition*"),
        # A misspelling is named with what was meant: a key, a system, a kind, a table.
        (
            '[suite]\nkind = "documents"\nsystems = ["sys"]\nnormalisation = "plain-v1"\n',
            "unknown key(s) normalisation (did you mean 'normalization'?) in [suite]*",
        ),
        (
            '[suite]\nkind = "documents"\nsystems = ["pymupdf4lm"]\n',
            "unknown system 'pymupdf4lm' (did you mean 'pymupdf4llm'?): not a registered*",
        ),
        (
            '[suite]\nkind = "documents"\nsystems = ["sys", "sy"]\n',
            "unknown system 'sy' (did you mean 'sys'?)*",  # a saved output's system
        ),
        ('[suite]\nkind = "documnets"\nsystems = ["sys"]\n', "*(did you mean 'documents'?)*"),
        (
            '[suite]\nkind = "documents"\nsystems = ["sys"]\n[gate]\ncer = "+0"\n',
            "unknown top-level table(s) gate (did you mean 'gates'?)*",
        ),
        (
            '[suite]\nkind = "documents"\nsystems = ["sys"]\n[systems.sy]\ndpi = 1\n',
            "*configures a system not in [suite] systems (did you mean 'sys'?)*",
        ),
    ],
)
def test_bad_suite_toml_fails_that_suite_only(
    pytester: pytest.Pytester, toml: str, cause: str
) -> None:
    write_suite(
        pytester.path, "fine", {"c": {"truth": TRUTH, "sys": TRUTH}}, systems=["sys"], gates=""
    )
    bad = write_suite(
        pytester.path, "broken", {"c": {"truth": TRUTH, "sys": TRUTH}}, systems=["sys"], gates=""
    )
    (bad / "suite.toml").write_text(toml)
    result = pytester.runpytest("--doceval")
    result.assert_outcomes(passed=1, failed=1)
    literal = "".join({"[": "[[]", "]": "[]]"}.get(ch, ch) for ch in cause)
    result.stdout.fnmatch_lines([f"*{literal}"])
    assert "(cases/broken/suite.toml)" in result.stdout.str()


def test_parser_crash_is_an_error_naming_system_and_file(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest_doceval

@pytest_doceval.register_parser("crashy")
class Crashy:
    name = "crashy"
    def __init__(self, settings, env): pass
    def fingerprint(self): return {"system": "crashy"}
    def parse(self, pdf): raise RuntimeError("model server answered 500")
"""
    )
    write_suite(
        pytester.path,
        "docs",
        {"a": {"truth": TRUTH, "pdf": "Ferry"}, "b": {"truth": TRUTH, "pdf": "Ferry"}},
        systems=["crashy", "pymupdf"],
        gates="",
    )
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        ["*crashy failed on */a/document.pdf: RuntimeError: model server answered 500*"]
    )


def test_failed_run_leaves_baseline_whole(pytester: pytest.Pytester) -> None:
    suite = write_suite(
        pytester.path,
        "docs",
        {"a": {"truth": TRUTH, "sys": TRUTH}, "b": {"truth": TRUTH, "sys": TRUTH}},
        systems=["sys"],
    )
    pytester.runpytest("--doceval", "--doceval-update").assert_outcomes(passed=2)
    before = (pytester.path / "baselines" / "docs.json").read_text()
    (suite / "b" / "truth.md").unlink()
    result = pytester.runpytest("--doceval", "--doceval-update")
    result.assert_outcomes(passed=1, errors=1)
    # The errored case keeps its old entry; the file is rewritten whole or not at all.
    assert (pytester.path / "baselines" / "docs.json").read_text() == before
    assert not list((pytester.path / "baselines").glob(".*tmp"))


def test_corrupt_baseline_file_fails_clearly(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path, "docs", {"a": {"truth": TRUTH, "sys": TRUTH}}, systems=["sys"])
    (pytester.path / "baselines").mkdir()
    (pytester.path / "baselines" / "docs.json").write_text("{oops")
    result = pytester.runpytest("--doceval", "-rE")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*baselines/docs.json: unreadable baseline*"])
    assert (
        "unreadable baseline"
        in read_report(pytester.path / "doceval-report.json")["suites"]["docs"]["error"]
    )


def test_make_pdf_helper_is_readable(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "x.pdf", ["hello world"])
    assert "hello world" in pymupdf.open(pdf)[0].get_text()
