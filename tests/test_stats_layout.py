"""The layout of `pytest_doceval.stats` (issue 17): no module of the package imports its facade
(``pytest_doceval.stats`` itself, which re-exports them: an import circle), and the kinds and the
report compute no statistic of their own -- they call stats."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_doceval.stats

STATS = Path(pytest_doceval.stats.__file__).parent
PACKAGE = STATS.parent


def _imports(path: Path) -> list[str]:
    """Every module named by an import in `path` (``from X import y`` gives X and X.y)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
            out.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def test_no_stats_module_imports_the_facade() -> None:
    modules = [p for p in STATS.glob("*.py") if p.name != "__init__.py"]
    assert modules
    for path in modules:
        for name in _imports(path):
            assert name != "pytest_doceval.stats", f"{path.name} imports the stats facade"
            if name.startswith("pytest_doceval.stats."):
                # `from pytest_doceval.stats import resampling` names the facade too.
                assert (STATS / f"{name.split('.')[2]}.py").exists(), name


def test_no_resampler_or_anova_outside_stats() -> None:
    """A bootstrap draws its indices in stats.resampling; an OLS fit for an ANOVA lives in
    stats.anova. Elsewhere in the package neither is written again."""
    for path in PACKAGE.rglob("*.py"):
        if STATS in path.parents:
            continue
        text = path.read_text(encoding="utf-8")
        assert "default_rng" not in text or "integers(" not in text, f"a resampler in {path}"
        assert "lstsq" not in text, f"a least-squares fit in {path}"
