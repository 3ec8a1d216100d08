"""The run's catalogue: suite files -> suites (made once, errors too), and the systems they use.

A suite is made on first use and kept by its resolved path; a suite that cannot be made keeps
its error, so every test of it fails with the same clear message.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.config import ProjectConfig, SuiteSpec, load_suite_spec
from pytest_doceval.errors import DocevalError, SuiteConfigError
from pytest_doceval.kinds import Suite
from pytest_doceval.kinds.registry import kind_class, make_suite
from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.systems import SystemRegistry, build_registry

RegisterSystems = Callable[[SystemRegistry], None]


class SuiteCatalog:
    """`config`: the pytest run whose conftest hooks register systems. Outside a run
    (``doceval suites``) there is none, and `register_systems` calls the conftests' hooks."""

    def __init__(
        self,
        config: pytest.Config | None,
        project: ProjectConfig,
        models: ModelRuntime,
        *,
        register_systems: RegisterSystems | None = None,
    ):
        self.config = config
        self.project = project
        self.models = models
        self._register_systems = register_systems
        self._registry: SystemRegistry | None = None
        self._suites: dict[Path, Suite | DocevalError] = {}
        self._resolved: dict[Path, Path] = {}  # resolving costs syscalls on every test
        self._names: dict[str, Path] = {}
        self._columns: list[str] | None = None

    @property
    def registry(self) -> SystemRegistry:
        if self._registry is None:
            config, register = self.config, self._register_systems

            def from_conftest(registry: SystemRegistry) -> None:
                # A refused registration (a one-argument factory, a name taken) fails every
                # suite with its message, as a bad suite file does.
                try:
                    if config is not None:
                        config.hook.pytest_doceval_register_systems(registry=registry)
                    elif register is not None:
                        register(registry)
                except (TypeError, ValueError) as exc:
                    raise SuiteConfigError(f"pytest_doceval_register_systems: {exc}") from None

            self._registry = build_registry([from_conftest])
        return self._registry

    def suite(self, file: Path) -> Suite:
        """The suite defined by `file` (cached, errors too: a bad suite fails the same way
        every time it is asked for)."""
        file = self._resolved.get(file) or self._resolved.setdefault(file, file.resolve())
        if file not in self._suites:
            try:
                self._suites[file] = self._make(file)
            except DocevalError as exc:
                self._suites[file] = exc
        found = self._suites[file]
        if isinstance(found, DocevalError):
            raise found
        return found

    def defaults(self, spec: SuiteSpec) -> Mapping[str, Any]:
        """What a suite's systems may fall back on: its own [suite] vlm, else the project's."""
        vlm = spec.table.get("vlm") or self.project.vlm
        return {"vlm": vlm, "embedder": self.project.embedder}

    def _make(self, file: Path) -> Suite:
        spec = load_suite_spec(file)
        suite = make_suite(spec, self.registry, self.models, self.defaults(spec))
        other = self._names.setdefault(suite.name, file)
        if other != file:
            raise SuiteConfigError(
                f"{file}: suite name {suite.name!r} is already used by {other}; "
                "suite names (folder names) share one baselines folder and must differ"
            )
        return suite

    def headline_columns(self) -> list[str]:
        """Headline metrics of the kinds of the suites this run will collect (pytest-html
        builds its table header before collection, so they are read from the suite files)."""
        if self._columns is None:
            if self.config is None:
                return []
            columns: dict[str, None] = {}
            invoked = Path(self.config.invocation_params.dir)
            norecurse = self.config.getini("norecursedirs")
            for file in suite_files(self.config.args, invoked, norecurse=norecurse):
                try:
                    metrics = kind_class(load_suite_spec(file).kind).metrics
                except DocevalError:
                    continue  # a broken suite reports itself as an error item
                for name, spec in metrics.items():
                    if spec.headline and not any(ch in name for ch in "*?["):
                        columns.setdefault(name)
            self._columns = list(columns)
        return self._columns


def suite_files(
    args: Sequence[str], invoked_in: Path, *, norecurse: Sequence[str] = ()
) -> list[Path]:
    """The suite files named by pytest's arguments (a suite.toml, or the ones under a folder),
    as collection finds them: not below another suite's folder (its folders are data), nor in
    folders matching `norecurse` (pytest's ``norecursedirs``, hidden ones by default)."""
    files: list[Path] = []
    for arg in args:
        path = Path(arg.split("::")[0])
        path = path if path.is_absolute() else invoked_in / path
        if path.name == "suite.toml":
            files.append(path)
        elif path.is_dir():
            files.extend(_suite_files_under(path, norecurse))
    return files


def _suite_files_under(folder: Path, norecurse: Sequence[str]) -> list[Path]:
    found: list[Path] = []
    for top, dirs, names in os.walk(folder):
        if "suite.toml" in names:
            found.append(Path(top) / "suite.toml")
            dirs[:] = []  # a suite's folders are its cases: thousands, and never suites
            continue
        dirs[:] = [d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in norecurse)]
    return sorted(found)
