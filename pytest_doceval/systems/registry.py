"""The systems, found through the one `Registry`, and the environment a system is built in.

Where a system comes from (a name from two places is an error, see `pytest_doceval.registry`):

1. built-ins: ``pymupdf``, ``rapidocr``, ``tesseract``, ``pymupdf4llm``, ``pymupdf+vlm``,
   ``rapidocr+vlm`` (each imported only when a suite uses it);
2. the entry-point group ``pytest_doceval.systems``: entry-point name = system name, value =
   ``module:factory``;
3. ``@pytest_doceval.register_parser("name")`` in any module (a conftest.py), at import time,
   for the whole process;
4. the hook ``pytest_doceval_register_systems(registry)`` in a conftest.py, for one pytest
   session (`build_registry` gives each session a layer of its own above the process-wide
   `SYSTEMS`).

Every factory is called ``factory(settings, env)``: the ``[systems.<name>]`` settings and the
suite's `SystemEnv`. One that cannot take two positional arguments is refused when it is
registered, never guessed around when it is called.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.registry import Registry
from pytest_doceval.systems.base import Parser, ParserFactory

if TYPE_CHECKING:
    from pytest_doceval.models.runtime import ModelHandle, ModelRuntime

ENTRY_POINT_GROUP = "pytest_doceval.systems"
DECORATED = "@register_parser"
HOOK = "pytest_doceval_register_systems"

SystemRegistry: TypeAlias = Registry[ParserFactory]

_BUILTINS: dict[str, str] = {
    "pymupdf": "pytest_doceval.systems.pymupdf_text:PyMuPDFText",
    "rapidocr": "pytest_doceval.systems.rapidocr_ocr:RapidOCRParser",
    "tesseract": "pytest_doceval.systems.tesseract_ocr:TesseractParser",
    "pymupdf4llm": "pytest_doceval.systems.pymupdf4llm_md:PyMuPDF4LLM",
    "pymupdf+vlm": "pytest_doceval.systems.two_stage:PyMuPDFWithVLM",
    "rapidocr+vlm": "pytest_doceval.systems.two_stage:RapidOCRWithVLM",
}


def check_system(name: str, factory: ParserFactory) -> None:
    """A system's name goes into test ids and file names; its factory is called with
    ``(settings, env)``. Refusing here names the system at registration, not mid-run."""
    if not name or any(ch in name for ch in "[]/\\ "):
        raise ValueError(f"system name {name!r} must be non-empty without []/\\ or spaces")
    if not callable(factory):
        raise TypeError(f"system {name!r}: {factory!r} is not callable")
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return  # a builtin callable without a signature: nothing to read, nothing to refuse
    try:
        signature.bind(None, None)
    except TypeError:
        what = getattr(factory, "__qualname__", repr(factory))
        raise TypeError(
            f"system {name!r}: {what}{signature} cannot be called as factory(settings, env): "
            "a system factory takes (settings, env)"
        ) from None


SYSTEMS: SystemRegistry = Registry(
    "system",
    builtins=_BUILTINS,
    group=ENTRY_POINT_GROUP,
    check=check_system,
    origin=DECORATED,
)


def register_parser(name: str) -> Callable[[ParserFactory], ParserFactory]:
    """Register a parser factory under `name` from any module (e.g. a conftest.py)::

    @pytest_doceval.register_parser("my-parser")
    class MyParser:
        name = "my-parser"
        def __init__(self, settings, env): ...
        def fingerprint(self): return {"system": self.name, "version": "1"}
        def parse(self, pdf): return pdf.read_bytes().decode()
    """

    def decorate(factory: ParserFactory) -> ParserFactory:
        SYSTEMS.register(name, factory, origin=DECORATED)
        return factory

    return decorate


def build_registry(
    hook_registrars: Iterable[Callable[[SystemRegistry], None]] = (),
) -> SystemRegistry:
    """A registry for one session: everything `SYSTEMS` finds, plus what `hook_registrars`
    (the conftest hooks) register into it, which no other session sees."""
    registry = SYSTEMS.layer(origin=HOOK)
    for registrar in hook_registrars:
        registrar(registry)
    return registry


class SystemEnv:
    """The systems of one suite, built once each with the suite's ``[systems.<name>]``
    settings; the second argument of every system factory.

    A factory may use from it: `system(name)`, another built system of the suite (stage 1 of
    a two-stage parser reuses that parser and its cached outputs); `model(name)`, a configured
    model; `defaults`, suite-wide choices a system may fall back on (``vlm``: the model of the
    two-stage parsers; ``embedder``); `source`, the suite file, for messages."""

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
        self.defaults = dict(defaults or {})
        self._built: dict[str, Parser] = {}
        self._building: list[str] = []

    def __contains__(self, name: object) -> bool:
        return name in self.registry

    def system(self, name: str) -> Parser:
        """The built system `name`; a clear `SuiteConfigError` for an unknown name (listing
        the known ones), bad settings or cycles."""
        if name in self._built:
            return self._built[name]
        if name in self._building:
            chain = " -> ".join([*self._building, name])
            raise SuiteConfigError(
                f"{self.source}: systems depend on each other in a cycle: {chain}"
            )
        try:
            factory = self.registry.get(name)
        except (SuiteConfigError, ValueError, TypeError) as exc:  # unknown, or refused
            raise SuiteConfigError(f"{self.source}: {exc}") from None
        self._building.append(name)
        try:
            self._built[name] = factory(dict(self.settings.get(name, {})), self)
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
