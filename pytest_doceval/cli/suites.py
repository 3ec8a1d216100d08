"""``doceval suites``: what ``pytest --doceval`` would run, without running anything.

Each suite (the folders of ``[tool.doceval] suites``, or the paths given) with its kind, its
systems and how many cases and tests it has, and which systems' tests will be skipped and why
(a two-stage parser or an exam model with no model configured): the suite's kind plans one
test of each system, as a run does first, and a system it cannot plan for that reason is
listed with the message its tests will skip with. Nothing is parsed, asked or scored.

Suites are made as a run makes them (`run.catalog.SuiteCatalog`): the project's
``[tool.doceval]``, its models, and the parsers and kinds its ``conftest.py`` files register
(imported as pytest would, their ``pytest_doceval_register_systems`` hooks called), so a suite
that would fail to load is listed with the same message.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from pytest_doceval.config import ProjectConfig, find_project_root
from pytest_doceval.errors import DocevalError, SystemUnavailable, relative_paths
from pytest_doceval.kinds import CaseRef
from pytest_doceval.kinds.registry import import_conftests
from pytest_doceval.run.catalog import SuiteCatalog, suite_files
from pytest_doceval.systems import SystemRegistry

# pytest's default ``norecursedirs``: folders a run does not look into for suites.
NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")


@dataclass
class SuiteListing:
    """One suite as a run would collect it (`error`: why it would not load)."""

    path: str  # its folder, relative to the project root
    kind: str | None = None
    systems: list[str] = field(default_factory=list)
    cases: int = 0
    tests: dict[str, int] = field(default_factory=dict)  # system -> its tests
    skipped: dict[str, str] = field(default_factory=dict)  # system -> why they are skipped
    error: str | None = None


def list_suites(root: Path, paths: Sequence[str] = ()) -> list[SuiteListing]:
    """The suites under `paths` (default: the project's ``[tool.doceval] suites``) of the
    project at `root`."""
    from pytest_doceval.models.config import load_models
    from pytest_doceval.models.runtime import ModelRuntime
    from pytest_doceval.store import Store

    project = ProjectConfig.load(root)
    args = list(paths) or [str(root / p) for p in project.suites if (root / p).exists()]
    files = suite_files(args, Path.cwd(), norecurse=NORECURSE)
    conftests: dict[str, ModuleType] = {}
    for file in files:
        conftests.update((m.__name__, m) for m in import_conftests(root, file.parent))
    hooks = [
        hook
        for module in conftests.values()
        if callable(hook := getattr(module, "pytest_doceval_register_systems", None))
    ]

    def register(registry: SystemRegistry) -> None:
        for hook in hooks:
            hook(registry=registry)

    pyproject = root / "pyproject.toml"
    models = ModelRuntime(
        load_models(pyproject), store=Store(None, "off"), workers=1, source=str(pyproject)
    )
    catalog = SuiteCatalog(None, project, models, register_systems=register)
    try:
        return [_listing(catalog, file, root) for file in files]
    finally:
        models.close()


def _listing(catalog: SuiteCatalog, file: Path, root: Path) -> SuiteListing:
    try:
        shown = file.parent.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        shown = file.parent.as_posix()
    listing = SuiteListing(shown)
    try:
        suite = catalog.suite(file)
        refs = suite.case_refs()
    except DocevalError as exc:
        listing.error = relative_paths(str(exc), root)
        return listing
    listing.kind = suite.kind
    listing.systems = suite.system_names()
    listing.cases = len({ref.case for ref in refs})
    for ref in refs:
        listing.tests[ref.system] = listing.tests.get(ref.system, 0) + 1
    first: dict[str, CaseRef] = {}
    for ref in refs:
        first.setdefault(ref.system, ref)
    for system, ref in first.items():
        try:
            suite.plan(ref)
        except SystemUnavailable as exc:
            listing.skipped[system] = relative_paths(str(exc), root)
        except DocevalError:
            pass  # bad input of that case: its test's error, not the system's skip
    return listing


def format_listing(listings: Sequence[SuiteListing]) -> str:
    lines: list[str] = []
    for s in listings:
        if s.error is not None:
            lines += [f"{s.path}: does not load", f"  error: {s.error}"]
            continue
        tests = sum(s.tests.values())
        lines.append(
            f"{s.path} ({s.kind}): {s.cases} case(s), {len(s.systems)} system(s), {tests} test(s)"
        )
        lines.append(
            "  systems: " + ", ".join(f"{name} ({s.tests.get(name, 0)})" for name in s.systems)
        )
        for name, why in s.skipped.items():
            lines.append(f"  skipped: {name} ({s.tests.get(name, 0)} test(s)): {why}")
    total = sum(sum(s.tests.values()) for s in listings)
    skipped = sum(s.tests.get(name, 0) for s in listings for name in s.skipped)
    broken = sum(s.error is not None for s in listings)
    summary = f"{len(listings)} suite(s), {total} test(s), {skipped} of them to be skipped"
    lines.append(summary + (f"; {broken} suite(s) do not load" if broken else ""))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """``doceval suites [PATH ...]``: 0, or 2 when a suite would not load."""
    given = [Path(p).resolve() for p in args.paths]
    root = find_project_root(*[p for p in given if p.exists()], Path.cwd())
    listings = list_suites(root, args.paths)
    print(format_listing(listings))
    return 2 if any(s.error is not None for s in listings) else 0
