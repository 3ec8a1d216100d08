"""The interface every suite kind implements, and the registry of kinds.

A kind turns a parsed ``suite.toml`` into an ordered list of (case, system) references -- one
test each -- and evaluates one reference into a `CaseResult`. Collection order must be
deterministic (pytest-xdist compares it across workers), so kinds sort what they list.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from pytest_doceval.cache import OutputCache
from pytest_doceval.config import SuiteSpec
from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.metrics import direction_of
from pytest_doceval.results import CaseResult
from pytest_doceval.systems import SystemRegistry


@dataclass(frozen=True)
class CaseRef:
    """One test: a case of a suite run by one system."""

    case: str
    system: str

    @property
    def key(self) -> str:
        return f"{self.case}[{self.system}]"


@dataclass(frozen=True)
class RunContext:
    """What evaluation needs from the session: the systems and the output cache."""

    registry: SystemRegistry
    cache: OutputCache


class Suite(ABC):
    """A suite of one kind, built from its `SuiteSpec` (raises `SuiteConfigError` if unusable)."""

    kind: ClassVar[str]

    def __init__(self, spec: SuiteSpec, registry: SystemRegistry) -> None:
        self.spec = spec
        self.registry = registry

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    @abstractmethod
    def normalization(self) -> str:
        """The normalisation profile's name (written into reports and baselines)."""

    @abstractmethod
    def case_refs(self) -> list[CaseRef]:
        """Every (case, system) of the suite, in a deterministic order."""

    @abstractmethod
    def evaluate(self, ref: CaseRef, ctx: RunContext) -> CaseResult:
        """Score one reference; raise a `DocevalError` naming the file and cause on bad input."""

    def describe(self) -> dict[str, object]:
        """Suite-level facts for the report (language, notes, ...)."""
        return {}

    def notes(self) -> list[str]:
        return []

    def direction(self, metric: str) -> str:
        return direction_of(metric)


SUITE_KINDS: dict[str, type[Suite]] = {}


def suite_kind(cls: type[Suite]) -> type[Suite]:
    """Class decorator registering a suite kind under ``cls.kind``."""
    SUITE_KINDS[cls.kind] = cls
    return cls


def make_suite(spec: SuiteSpec, registry: SystemRegistry) -> Suite:
    # Importing the kinds registers them; done here so plugin start-up stays light.
    from pytest_doceval.suites import documents  # noqa: F401

    try:
        cls = SUITE_KINDS[spec.kind]
    except KeyError:
        raise SuiteConfigError(
            f"{spec.file}: unknown suite kind {spec.kind!r}; known kinds: "
            f"{', '.join(sorted(SUITE_KINDS))}"
        ) from None
    return cls(spec, registry)
