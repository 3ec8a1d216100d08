"""The registry of suite kinds, found like systems.

1. built-ins, imported only when a suite of that kind is loaded;
2. the entry-point group ``pytest_doceval.kinds`` (name = kind, value = ``module:Class``);
3. ``@pytest_doceval.suite_kind`` on a `Suite` subclass in any module (a conftest.py works).

No generic module imports a kind: they ask `kind_class`.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.metrics.spec import MetricSpec
from pytest_doceval.registry import Registry

if TYPE_CHECKING:
    from pytest_doceval.config import SuiteSpec
    from pytest_doceval.kinds.base import Suite
    from pytest_doceval.models.runtime import ModelRuntime
    from pytest_doceval.systems.registry import SystemRegistry

ENTRY_POINT_GROUP = "pytest_doceval.kinds"

SuiteT = TypeVar("SuiteT", bound="type[Suite]")

# Kinds registered with the decorator share one origin: a conftest imported again (pytester
# runs in one process) may register its kind again, and the later class wins, as before.
DECORATED = "@suite_kind"


def _check_kind(name: str, cls: type[Suite]) -> None:
    """A kind class must say what it measures and how its analyses are called."""
    metrics = getattr(cls, "metrics", None)
    if not isinstance(metrics, Mapping) or not all(
        isinstance(s, MetricSpec) for s in metrics.values()
    ):
        raise TypeError(f"{cls.__name__}: 'metrics' must map metric names to MetricSpec")
    for analysis in getattr(cls, "analyses", ()):
        if not isinstance(getattr(analysis, "key", None), str) or not callable(analysis):
            raise TypeError(f"{cls.__name__}: analysis {analysis!r} needs a 'key' and a __call__")


KINDS: Registry[type[Suite]] = Registry(
    "suite kind",
    builtins={
        "documents": "pytest_doceval.kinds.documents.suite:DocumentsSuite",
        "exam": "pytest_doceval.kinds.exam.suite:ExamSuite",
        "extraction": "pytest_doceval.kinds.extraction.suite:ExtractionSuite",
        "facts": "pytest_doceval.kinds.facts.suite:FactsSuite",
        "omnidocbench": "pytest_doceval.kinds.omnidocbench.suite:OmniDocBenchSuite",
    },
    group=ENTRY_POINT_GROUP,
    check=_check_kind,
)


def suite_kind(cls: SuiteT) -> SuiteT:
    """Class decorator: register a `Suite` subclass under its ``kind``."""
    kind = getattr(cls, "kind", None)
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"{cls.__name__}: a suite kind needs a non-empty class attribute 'kind'")
    KINDS.register(kind, cls, origin=DECORATED)
    return cls


def kind_class(kind: str) -> type[Suite]:
    """The class of `kind`, or a `SuiteConfigError` that lists the known kinds."""
    return KINDS.get(kind)


def known_kinds() -> list[str]:
    return KINDS.names()


def import_conftests(root: Path, suite_dir: Path) -> list[ModuleType]:
    """Import the ``conftest.py`` files from `root` down to `suite_dir`, as pytest would, so
    that kinds and parsers registered there are known outside a pytest run (``doceval merge``,
    ``doceval suites``); the modules, each imported once per process."""
    root, suite_dir = root.resolve(), suite_dir.resolve()
    folders = [root]
    if suite_dir.is_relative_to(root):
        for part in suite_dir.relative_to(root).parts:
            folders.append(folders[-1] / part)
    modules: list[ModuleType] = []
    for folder in folders:
        conftest = folder / "conftest.py"
        name = f"_doceval_conftest_{abs(hash(str(conftest)))}"
        if name in sys.modules:
            modules.append(sys.modules[name])
            continue
        if not conftest.is_file():
            continue
        spec = importlib.util.spec_from_file_location(name, conftest)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        modules.append(module)
    return modules


def make_suite(
    spec: SuiteSpec,
    registry: SystemRegistry,
    models: ModelRuntime | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Suite:
    """The suite `spec` describes, its systems built from `registry` with its own settings."""
    from pytest_doceval.systems.registry import SystemEnv

    try:
        cls = kind_class(spec.kind)
    except SuiteConfigError as exc:
        raise SuiteConfigError(f"{spec.file}: {exc}") from None
    cls.check_suite_keys(spec)
    env = SystemEnv(
        registry, spec.system_settings, source=str(spec.file), models=models, defaults=defaults
    )
    suite = cls(spec, env)
    suite.check_gates()
    return suite
