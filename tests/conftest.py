"""Shared fixtures: small suites written into a pytester folder, as a user would lay them out."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from hypothesis import HealthCheck, settings

# The suite must pass on a busy machine (a CI runner, two cores shared with other jobs): no
# hypothesis test may fail because an example ran slowly. Loaded before any test module, this
# profile is the default every `@settings(...)` of a test inherits from; a test must not set a
# deadline of its own (tests/test_load_safety.py checks).
settings.register_profile("doceval", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("doceval")

# Real third-party documents (../shared/realdata beside the repo); tests using them skip
# cleanly when the folder is absent. DOCEVAL_REALDATA points elsewhere.
REALDATA = Path(
    os.environ.get("DOCEVAL_REALDATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "realdata"
)


# The slow end-to-end variants (`@pytest.mark.slow`: real OCR of many pages, generated-data
# parity runs, the xdist twin of a plain end-to-end test) are skipped unless asked for: the
# README's `pytest -n 2` stays a few minutes on two cores and still runs every module, and
# `pytest -n 2 --run-slow` (what CI runs) or `pytest -m slow` adds them.
RUN_SLOW = "--run-slow"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        RUN_SLOW,
        action="store_true",
        help="also run the slow end-to-end variants (@pytest.mark.slow), as CI does",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption(RUN_SLOW) or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason=f"a slow end-to-end variant: {RUN_SLOW} (or -m slow) runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# An end-to-end test's runs, plain and under xdist (`workers`: pytest's extra arguments). The
# xdist twin checks that two workers give the plain run's numbers; it costs two more pytest
# start-ups, so it is a slow variant.
WORKERS = [
    pytest.param([], id="plain"),
    pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.slow),
]


def _warm_up_lazy_imports() -> None:
    """Run every statistic once, here, before any pytester run.

    pytester's in-process runs restore ``sys.modules`` afterwards, dropping modules first
    imported during the run; scipy imports parts of itself lazily inside its functions, and a
    dropped half of scipy then fails to import again ("No module named array_api_compat").
    Importing them at conftest time puts them in every snapshot.
    """
    from pytest_doceval import stats
    from pytest_doceval.report import analysis, html, merge  # noqa: F401

    a, b = [0.1, 0.2, 0.3, 0.2], [0.1, 0.25, 0.35, 0.3]
    stats.compare_paired(dict(enumerate(a)), dict(enumerate(b)), a="a", b="b", metric="m")
    stats.compare_paired({0: 1.0, 1: 0.0}, {0: 0.0, 1: 0.0}, a="a", b="b", metric="m", binary=True)
    stats.significant_regression(
        dict(enumerate(a)), dict(enumerate(b)), metric="cer", direction="lower", margin=0.005
    )
    stats.bootstrap_ratio_ci([1, 2], [10, 20])
    stats.wilcoxon_p(a, a)


_warm_up_lazy_imports()


def _import_before_any_pytester_run() -> None:
    """Modules that pytester runs would otherwise import first, and then drop from
    ``sys.modules``: a later import makes a second copy, so an ``except httpx.TransportError``
    bound to one copy misses the other's exceptions, a monkeypatch of one copy misses code
    bound to the other, and a function of a copy that a process-wide registry (kinds, systems)
    keeps no longer pickles ("not the same object"). Imported once here, they are in every
    snapshot.

    The multiprocessing modules that a ``processes`` pool imports lazily belong here too: a
    pool's semaphores register with the resource tracker of the run that made them, and their
    finalizers unregister through whatever ``multiprocessing.resource_tracker`` is in
    ``sys.modules`` when they run; a second copy starts a second tracker that never saw the
    name and prints a ``KeyError`` traceback at exit. A second ``concurrent.futures.process``
    also cannot pickle the first copy's ``_process_worker``."""
    import importlib

    for name in (
        "multiprocessing.resource_tracker",
        "multiprocessing.synchronize",
        "multiprocessing.forkserver",
        "concurrent.futures.process",
        "httpx",
        "httpcore",
    ):
        importlib.import_module(name)
    # Every module of the package, so that no test depends on which test ran first: a kind's
    # stage functions are pickled by name, and a list of modules here goes stale as kinds grow.
    import pkgutil

    import pytest_doceval

    for module in pkgutil.walk_packages(pytest_doceval.__path__, "pytest_doceval."):
        importlib.import_module(module.name)


_import_before_any_pytester_run()


def make_pdf(path: Path, pages: list[str], *, fontsize: int = 11) -> Path:
    """A text PDF, one string per page, lines at 11pt Helvetica."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(50, 50, 545, 800), text, fontsize=fontsize)
    doc.save(path)
    doc.close()
    return path


def write_suite(
    root: Path,
    name: str,
    cases: Mapping[str, Mapping[str, str]],
    *,
    systems: list[str],
    extra: str = "",
    gates: str = 'cer = "+0.5pp"\n',
) -> Path:
    """cases: {case: {"truth": ..., "<system>": precomputed output, "pdf": page text}}."""
    suite = root / "cases" / name
    suite.mkdir(parents=True, exist_ok=True)
    toml = f'[suite]\nkind = "documents"\nsystems = {json.dumps(systems)}\n{extra}'
    if gates:
        toml += f"\n[gates]\n{gates}"
    (suite / "suite.toml").write_text(toml, encoding="utf-8")
    for case, files in cases.items():
        folder = suite / case
        (folder / "outputs").mkdir(parents=True, exist_ok=True)
        for key, text in files.items():
            if key == "truth":
                (folder / "truth.md").write_text(text, encoding="utf-8")
            elif key == "pdf":
                make_pdf(folder / "document.pdf", [text])
            else:
                (folder / "outputs" / f"{key}.md").write_text(text, encoding="utf-8")
    return suite


def read_report(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


TRUTH = "# Tides\n\nTidal storage moves water between two basins.\n\n- pumps\n- turbines\n"
GOOD = "Tides\nTidal storage moves water between two basins.\n• pumps\n• turbines\n"
WORSE = "# Tides\nTidal storage moves watr between basins.\n- pumps\n"


@pytest.fixture
def demo_suite(pytester: pytest.Pytester) -> Callable[..., Path]:
    """Three cases scored for two precomputed systems, `good` and `worse`."""

    def make(**kwargs: Any) -> Path:
        cases = {
            f"case{i}": {
                "truth": TRUTH.replace("Tides", f"Tides {i}"),
                "good": GOOD.replace("Tides", f"Tides {i}"),
                "worse": WORSE.replace("Tides", f"Tides {i}"),
            }
            for i in range(3)
        }
        return write_suite(pytester.path, "demo", cases, systems=["good", "worse"], **kwargs)

    return make
