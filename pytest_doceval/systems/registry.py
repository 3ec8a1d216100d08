"""The registry of systems, found the way pytest plugins are found, and their environment.

Three sources, in this order (a later one may not silently replace an earlier name):

1. built-ins: ``pymupdf``, ``rapidocr``, ``pymupdf4llm`` (imported only when used);
2. the entry-point group ``pytest_doceval.systems``: entry-point name = system name, value = a
   factory (a class or callable taking the ``[systems.<name>]`` settings, and optionally the
   `SystemEnv`);
3. ``conftest.py``: the hook ``pytest_doceval_register_systems(registry)``, or the decorator
   ``@pytest_doceval.register_parser("name")`` at import time.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.registry import load_object
from pytest_doceval.systems.base import Parser, ParserFactory

if TYPE_CHECKING:
    from pytest_doceval.models.runtime import ModelHandle, ModelRuntime

ENTRY_POINT_GROUP = "pytest_doceval.systems"

_BUILTINS: dict[str, str] = {
    "pymupdf": "pytest_doceval.systems.pymupdf_text:PyMuPDFText",
    "rapidocr": "pytest_doceval.systems.rapidocr_ocr:RapidOCRParser",
    "pymupdf4llm": "pytest_doceval.systems.pymupdf4llm_md:PyMuPDF4LLM",
    "pymupdf+vlm": "pytest_doceval.systems.two_stage:PyMuPDFWithVLM",
    "rapidocr+vlm": "pytest_doceval.systems.two_stage:RapidOCRWithVLM",
}


def _lazy(target: str) -> Callable[..., Parser]:
    def factory(settings: Mapping[str, Any], env: Any = None) -> Parser:
        return _call_factory(load_object(target), settings, env)

    factory.takes_env = True  # type: ignore[attr-defined]
    return factory


def _takes_env(factory: Callable[..., Any]) -> bool:
    if getattr(factory, "takes_env", False):
        return True
    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)


def _call_factory(factory: Callable[..., Any], settings: Mapping[str, Any], env: Any) -> Parser:
    made = factory(dict(settings), env) if _takes_env(factory) else factory(dict(settings))
    return made  # type: ignore[no-any-return]


class SystemRegistry:
    """Named parser factories."""

    def __init__(self) -> None:
        self._factories: dict[str, Callable[..., Parser]] = {}
        self._origins: dict[str, str] = {}

    def register(self, name: str, factory: Callable[..., Parser], *, origin: str = "user") -> None:
        if not name or any(ch in name for ch in "[]/\\ "):
            raise ValueError(f"system name {name!r} must be non-empty without []/\\ or spaces")
        if name in self._factories and self._origins[name] != origin:
            raise ValueError(
                f"system {name!r} is registered twice ({self._origins[name]} and {origin})"
            )
        self._factories[name] = factory
        self._origins[name] = origin

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def names(self) -> list[str]:
        return sorted(self._factories)

    def create(
        self, name: str, settings: Mapping[str, Any] | None = None, env: SystemEnv | None = None
    ) -> Parser:
        return _call_factory(self._factories[name], settings or {}, env)

    def parser(self, name: str) -> Callable[[ParserFactory], ParserFactory]:
        """Decorator form: ``@registry.parser("my-parser")`` on a class or factory."""

        def decorate(factory: ParserFactory) -> ParserFactory:
            self.register(name, factory)
            return factory

        return decorate


class SystemEnv:
    """The systems of one suite, built once each with the suite's ``[systems.<name>]``
    settings. A factory that takes it reaches other systems through `system` (stage 1 of a
    two-stage parser reuses that parser, and its cached outputs)."""

    def __init__(
        self,
        registry: SystemRegistry,
        settings: Mapping[str, Mapping[str, Any]],
        *,
        source: str = "suite.toml",
        models: ModelRuntime | None = None,
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.source = source
        self.models = models
        # Suite-wide choices a system may fall back on (``vlm``: the model of two-stage parsers).
        self.defaults = dict(defaults or {})
        self._built: dict[str, Parser] = {}
        self._building: list[str] = []

    def __contains__(self, name: object) -> bool:
        return name in self.registry

    def system(self, name: str) -> Parser:
        """The built system `name`; a clear `SuiteConfigError` for bad settings or cycles."""
        if name in self._built:
            return self._built[name]
        if name not in self.registry:
            known = ", ".join(self.registry.names())
            raise SuiteConfigError(f"{self.source}: unknown system {name!r} (known: {known})")
        if name in self._building:
            chain = " -> ".join([*self._building, name])
            raise SuiteConfigError(
                f"{self.source}: systems depend on each other in a cycle: {chain}"
            )
        self._building.append(name)
        try:
            self._built[name] = self.registry.create(name, self.settings.get(name, {}), self)
        except (ValueError, TypeError) as exc:
            raise SuiteConfigError(f"{self.source}: [systems.{name}]: {exc}") from None
        finally:
            self._building.pop()
        return self._built[name]

    def model(self, name: str) -> ModelHandle:
        """The configured model `name` (``[tool.doceval.models.NAME]``); a clear
        `SuiteConfigError` when there is no such model."""
        if self.models is None:
            raise SuiteConfigError(f"{self.source}: no models are configured for this run")
        return self.models.handle(name)


# Registrations made with the module-level decorator before any session exists.
_PENDING: dict[str, ParserFactory] = {}


def register_parser(name: str) -> Callable[[ParserFactory], ParserFactory]:
    """Register a parser factory under `name` from any module (e.g. a conftest.py)::

    @pytest_doceval.register_parser("my-parser")
    class MyParser:
        name = "my-parser"
        def __init__(self, settings): ...
        def fingerprint(self): return {"system": self.name, "version": "1"}
        def parse(self, pdf): return pdf.read_bytes().decode()
    """

    def decorate(factory: ParserFactory) -> ParserFactory:
        _PENDING[name] = factory
        return factory

    return decorate


def build_registry(
    hook_registrars: Iterable[Callable[[SystemRegistry], None]] = (),
) -> SystemRegistry:
    registry = SystemRegistry()
    for name, target in _BUILTINS.items():
        registry.register(name, _lazy(target), origin="built-in")
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        registry.register(ep.name, _lazy(ep.value), origin=f"entry point {ep.value}")
    for name, factory in _PENDING.items():
        registry.register(name, factory, origin="register_parser")
    for registrar in hook_registrars:
        registrar(registry)
    return registry
