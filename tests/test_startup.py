"""Start-up stays light: a run that does not need scipy (or httpx, PyMuPDF) never imports it.

`pytest --doceval` on a small suite pays every import of the run; scipy.stats alone takes
longer than the rest of the plugin. The statistics take their distribution functions from
`scipy.special` on first use, which must give exactly what `scipy.stats` gives.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from scipy import special
from scipy import stats as sps

probabilities = st.floats(min_value=1e-12, max_value=1 - 1e-12)
degrees = st.integers(min_value=1, max_value=10_000)
statistics = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)


@given(q=probabilities, df=degrees)
def test_stdtrit_is_scipy_stats_t_ppf(q: float, df: int) -> None:
    assert float(special.stdtrit(df, q)) == float(sps.t.ppf(q, df))


@given(t=statistics, df=degrees)
def test_stdtr_of_minus_t_is_scipy_stats_t_sf(t: float, df: int) -> None:
    assert float(special.stdtr(df, -t)) == float(sps.t.sf(t, df))


@given(q=probabilities)
def test_ndtri_is_scipy_stats_norm_ppf(q: float) -> None:
    assert float(special.ndtri(q)) == float(sps.norm.ppf(q))


@given(f=st.floats(min_value=0, max_value=1e4), dfn=degrees, dfd=degrees)
def test_fdtrc_is_scipy_stats_f_sf(f: float, dfn: int, dfd: int) -> None:
    assert float(special.fdtrc(dfn, dfd, f)) == float(sps.f.sf(f, dfn, dfd))


def write_one_case_suite(root: Path) -> None:
    case = root / "cases" / "docs" / "case1"
    (case / "outputs").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.doceval]\nsuites = ['cases']\n")
    (root / "cases" / "docs" / "suite.toml").write_text(
        '[suite]\nkind = "documents"\nsystems = ["saved"]\n'
    )
    (case / "truth.md").write_text("# Title\n\nSome text here.\n", encoding="utf-8")
    (case / "outputs" / "saved.md").write_text("# Title\n\nSome text hare.\n", encoding="utf-8")


def test_a_one_case_run_imports_no_scipy_httpx_or_pymupdf(tmp_path: Path) -> None:
    write_one_case_suite(tmp_path)
    code = (
        "import sys, pytest\n"
        "code = pytest.main(['--doceval', '-q', '-p', 'no:cacheprovider', '--doceval-update'])\n"
        "heavy = [m for m in ('scipy', 'httpx', 'pymupdf', 'fitz') if m in sys.modules]\n"
        "print('HEAVY', heavy, int(code))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert "HEAVY [] 0" in done.stdout, done.stdout[-2000:]
    assert (tmp_path / "doceval-report.html").exists()


def test_the_main_job_never_imports_the_projects_own_tests(tmp_path: Path) -> None:
    """`pytest --doceval` without paths evaluates the suites: the project's test suite (found
    through ``testpaths``) and its conftest.py, which may import much, stay out of the run,
    while the project's own top-level conftest.py (where users register parsers) still loads."""
    write_one_case_suite(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.doceval]\nsuites = ['cases']\n\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("raise SystemExit('tests/conftest.py ran')\n")
    (tmp_path / "conftest.py").write_text("print('TOP-LEVEL CONFTEST')\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--doceval", "-q", "-s", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "TOP-LEVEL CONFTEST" in done.stdout and "1 passed" in done.stdout
    # A plain run still collects the tests, through their conftest.py.
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "tests/conftest.py ran" in plain.stdout + plain.stderr
