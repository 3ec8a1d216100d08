"""The package's layout (DESIGN.md section 9) is the import-linter contracts in pyproject.toml;
CI runs ``lint-imports``. These tests run the same contracts, and show that they can fail: a
copy of the package with one climb, one circle or one kind importing another added (each in a
lazy or type-only import, where such things used to hide) breaks the contract that forbids it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "pytest_doceval"
# The console script `lint-imports`, run by this interpreter.
LINT_IMPORTS = "from importlinter.cli import lint_imports_command as c; c()"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package under `root` with the project's contracts."""
    return subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache"],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_contracts_hold() -> None:
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    shutil.copytree(
        REPO / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _add(root: Path, module: str, text: str) -> None:
    path = root / PACKAGE / module
    path.write_text(path.read_text(encoding="utf-8") + "\n" + text, encoding="utf-8")


@pytest.mark.parametrize(
    ("module", "added", "broken"),
    [
        # A climb inside a function: the statistics reaching up into the report.
        (
            "stats/gate.py",
            "def _climb() -> None:\n    from pytest_doceval.report import terminal  # noqa\n",
            ["Rooms only import the rooms below them BROKEN", "pytest_doceval.stats.gate"],
        ),
        # A type-only import of a kind from the report: kinds are found by name.
        (
            "report/compare.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from pytest_doceval.kinds.documents import suite  # noqa\n",
            ["The rooms above the kinds find them by name BROKEN"],
        ),
        # One kind importing another, lazily.
        (
            "kinds/exam/scoring.py",
            "def _peer() -> None:\n    from pytest_doceval.kinds.facts import checks  # noqa\n",
            ["Kinds are peers above the shared modules of kinds/ BROKEN"],
        ),
        # A circle between two modules of one package, closed by a lazy import.
        (
            "text/tokenise.py",
            "def _circle() -> None:\n    from pytest_doceval.text import normalise  # noqa\n",
            [],
        ),
    ],
    ids=["climb", "kind-by-import", "kind-imports-kind", "circle"],
)
def test_a_deliberate_violation_breaks_its_contract(
    package_copy: Path, module: str, added: str, broken: list[str]
) -> None:
    if not broken:  # the circle case: close it from the other side first
        _add(
            package_copy,
            "text/normalise.py",
            "def _back() -> None:\n    from pytest_doceval.text import tokenise  # noqa\n",
        )
        broken = ["No import circles among the modules of any package BROKEN"]
    _add(package_copy, module, added)
    result = lint_imports(package_copy)
    assert result.returncode != 0
    for line in broken:
        assert line in result.stdout, result.stdout
