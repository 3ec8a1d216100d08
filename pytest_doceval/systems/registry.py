"""The registry of systems, found the way pytest plugins are found.

Three sources, in this order (a later one may not silently replace an earlier name):

1. built-ins: ``pymupdf``, ``rapidocr``, ``pymupdf4llm`` (imported only when used);
2. the entry-point group ``pytest_doceval.systems``: entry-point name = system name, value = a
   factory (a class or callable taking the ``[systems.<name>]`` settings);
3. ``conftest.py``: the hook ``pytest_doceval_register_systems(registry)``, or the decorator
   ``@pytest_doceval.register_parser("name")`` at import time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from typing import Any

from pytest_doceval.systems.base import Parser, ParserFactory

ENTRY_POINT_GROUP = "pytest_doceval.systems"

_BUILTINS: dict[str, str] = {
    "pymupdf": "pytest_doceval.systems.pymupdf_text:PyMuPDFText",
    "rapidocr": "pytest_doceval.systems.rapidocr_ocr:RapidOCRParser",
    "pymupdf4llm": "pytest_doceval.systems.pymupdf4llm_md:PyMuPDF4LLM",
}


def _lazy(target: str) -> ParserFactory:
    def factory(settings: Mapping[str, Any]) -> Parser:
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)(settings)

    return factory


class SystemRegistry:
    """Named parser factories."""

    def __init__(self) -> None:
        self._factories: dict[str, ParserFactory] = {}
        self._origins: dict[str, str] = {}

    def register(self, name: str, factory: ParserFactory, *, origin: str = "user") -> None:
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

    def create(self, name: str, settings: Mapping[str, Any] | None = None) -> Parser:
        return self._factories[name](dict(settings or {}))

    def parser(self, name: str) -> Callable[[ParserFactory], ParserFactory]:
        """Decorator form: ``@registry.parser("my-parser")`` on a class or factory."""

        def decorate(factory: ParserFactory) -> ParserFactory:
            self.register(name, factory)
            return factory

        return decorate


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
