"""Reading ``suite.toml`` and ``[tool.doceval]``: the contract users write by hand.

Unknown keys are errors, not silently ignored: a typo in a gate name must not turn a gate off.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.gates import Rule, SuiteGate, parse_case_gates, parse_suite_gates
from pytest_doceval.registry import unknown_names

TOP_LEVEL_KEYS = {"suite", "systems", "gates"}


@dataclass(frozen=True)
class SuiteSpec:
    """A parsed ``suite.toml``: what every suite kind shares, plus its own ``[suite]`` keys."""

    name: str
    path: Path
    kind: str
    table: dict[str, Any]
    system_settings: dict[str, dict[str, Any]]
    case_gates: dict[str, list[Rule]]
    suite_gates: list[SuiteGate]
    file: Path = field(repr=False)

    def check_keys(self, allowed: set[str]) -> None:
        unknown = sorted(set(self.table) - allowed)
        if unknown:
            raise SuiteConfigError(
                f"{self.file}: unknown key(s) {unknown_names(unknown, allowed)} in [suite] for "
                f"kind {self.kind!r}; allowed: {', '.join(sorted(allowed))}"
            )


def _table(data: Mapping[str, Any], key: str, file: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise SuiteConfigError(f"{file}: [{key}] must be a table")
    return dict(value)


def load_suite_spec(file: Path) -> SuiteSpec:
    """Parse `file` (a ``suite.toml``); its folder's name is the suite's name."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SuiteConfigError(f"{file}: cannot read suite definition ({exc})") from exc
    unknown = sorted(set(data) - TOP_LEVEL_KEYS)
    if unknown:
        raise SuiteConfigError(
            f"{file}: unknown top-level table(s) {unknown_names(unknown, TOP_LEVEL_KEYS)}; "
            f"allowed: {', '.join(sorted(TOP_LEVEL_KEYS))}"
        )
    suite = _table(data, "suite", file)
    kind = suite.get("kind")
    if not isinstance(kind, str):
        raise SuiteConfigError(f'{file}: [suite] needs kind = "documents" (or another kind)')
    systems = _table(data, "systems", file)
    for name, settings in systems.items():
        if not isinstance(settings, dict):
            raise SuiteConfigError(f"{file}: [systems.{name}] must be a table of settings")
    gates = _table(data, "gates", file)
    suite_gate_table = gates.get("suite", {})
    if not isinstance(suite_gate_table, dict):
        raise SuiteConfigError(f"{file}: [gates.suite] must be a table")
    try:
        case_gates = parse_case_gates(gates)
        suite_gates = parse_suite_gates(suite_gate_table)
    except SuiteConfigError as exc:
        raise SuiteConfigError(f"{file}: {exc}") from None
    return SuiteSpec(
        name=file.parent.name,
        path=file.parent,
        kind=kind,
        table=suite,
        system_settings=systems,
        case_gates=case_gates,
        suite_gates=suite_gates,
        file=file,
    )


def _declares_doceval(pyproject: Path) -> bool:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    tool = data.get("tool")
    return isinstance(tool, dict) and "doceval" in tool


def find_project_root(*starts: Path) -> Path:
    """The folder of the nearest ``pyproject.toml`` with a ``[tool.doceval]`` table, looking up
    from each of `starts` in turn (pytest's rootdir first, then the current folder); else the
    first start. Baselines, the cache and suite paths are resolved from it, so running pytest
    from a subfolder writes them where a run from the top would."""
    for start in starts:
        for folder in (start, *start.parents):
            if (folder / "pyproject.toml").is_file() and _declares_doceval(
                folder / "pyproject.toml"
            ):
                return folder
    return starts[0]


@dataclass(frozen=True)
class ProjectConfig:
    """``[tool.doceval]`` of the project's ``pyproject.toml`` (all keys optional)."""

    suites: list[str] = field(default_factory=lambda: ["cases"])
    baselines: str = "baselines"
    cache: str = ".doceval-cache"
    bootstrap_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    vlm: str | None = None  # the default model of two-stage parsers
    embedder: str | None = None  # the default chunk-score embedder of documents suites
    executor: str = "processes"  # where CPU stages run (see engine.executors)

    @classmethod
    def load(cls, rootpath: Path) -> ProjectConfig:
        pyproject = rootpath / "pyproject.toml"
        if not pyproject.is_file():
            return cls()
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SuiteConfigError(f"{pyproject}: {exc}") from exc
        table = {
            k: v
            for k, v in data.get("tool", {}).get("doceval", {}).items()
            if k != "models"  # model endpoints are read by the model systems
        }
        allowed = set(cls.__dataclass_fields__)
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise SuiteConfigError(
                f"{pyproject}: unknown key(s) in [tool.doceval]: "
                f"{unknown_names(unknown, allowed)}; allowed: {', '.join(sorted(allowed))}"
            )
        if isinstance(table.get("suites"), str):
            table["suites"] = [table["suites"]]
        project = cls(**table)
        if not isinstance(project.bootstrap_resamples, int) or project.bootstrap_resamples < 100:
            raise SuiteConfigError(
                f"{pyproject}: [tool.doceval] bootstrap_resamples must be >= 100"
            )
        if not isinstance(project.confidence, float) or not 0.5 <= project.confidence < 1:
            raise SuiteConfigError(
                f"{pyproject}: [tool.doceval] confidence must be a number in [0.5, 1), e.g. 0.95"
            )
        return project


class StatsSettings(TypedDict):
    """A `StatsConfig` as a report carries it (its ``config``): `StatsConfig.to_dict`."""

    bootstrap_resamples: int
    confidence: float
    seed: int


@dataclass(frozen=True)
class StatsConfig:
    resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0

    def to_dict(self) -> StatsSettings:
        return {
            "bootstrap_resamples": self.resamples,
            "confidence": self.confidence,
            "seed": self.seed,
        }
