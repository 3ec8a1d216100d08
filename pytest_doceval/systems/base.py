"""What a system is, and the one place built-in systems declare their settings.

A parser is anything with a ``name``, a ``fingerprint()`` and a ``parse(pdf)``. The fingerprint
names everything that changes the output (library versions, settings, model id, prompt hash) and
nothing that does not (timeouts, concurrency, keys): it keys the output cache and is written into
baselines, so a number is always traceable to what produced it.

A factory builds a system: it is called ``factory(settings, env)`` with the ``[systems.<name>]``
settings of a suite and its `SystemEnv`, the handle through which a system reaches another
built system (stage 1 of a two-stage parser), a configured model or the suite's defaults.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pytest_doceval.errors import DocevalError, SystemRunError


@runtime_checkable
class Parser(Protocol):
    """A document parser: ``parse`` returns the document's text (plain or markdown)."""

    name: str

    def fingerprint(self) -> dict[str, Any]: ...

    def parse(self, pdf: Path) -> str: ...


@runtime_checkable
class ImageReader(Protocol):
    """A system that reads the text of an image given as bytes (an exam question's PNG):
    ``read_image`` returns the text as the engine gives it."""

    name: str

    def fingerprint(self) -> dict[str, Any]: ...

    def read_image(self, image: bytes) -> str: ...


@runtime_checkable
class ImageParser(Protocol):
    """A parser that also reads a page image (PNG, JPEG) directly: suites whose cases are page
    images (``omnidocbench``) call ``parse_image`` instead of wrapping the image in a PDF."""

    name: str

    def fingerprint(self) -> dict[str, Any]: ...

    def parse_image(self, image: Path) -> str: ...


@runtime_checkable
class RefiningParser(Protocol):
    """A two-stage system: the parser named ``stage1`` first (cached as when it runs alone),
    then ``refine`` on its text. One that also has ``model()`` and ``combine(answers, case=)``
    (the built-in ones) has its second stage run as a model stage: ``requests`` builds the
    requests for stage 1's text and ``combine`` reads their answers; any other runs
    ``refine`` as a CPU stage."""

    name: str
    stage1: str

    def fingerprint(self) -> dict[str, Any]: ...

    def refine(self, stage1_text: str, *, case: str) -> str: ...

    def requests(self, stage1_text: str, *, case: str) -> list[Any]: ...


class SystemEnvLike(Protocol):
    """What a factory may ask of its environment (see `registry.SystemEnv`)."""

    defaults: dict[str, Any]

    def system(self, name: str) -> Parser: ...

    def model(self, name: str) -> Any: ...


class ParserFactory(Protocol):
    """Builds a parser: ``factory(settings, env)`` with the ``[systems.<name>]`` settings and
    the suite's `SystemEnv` (a class whose ``__init__`` takes both is a factory)."""

    def __call__(self, settings: Mapping[str, Any], env: SystemEnvLike, /) -> Parser: ...


def run_system(system: str, what: object, call: Callable[[], object]) -> str:
    """Run a system's own code on `what` (a file, a page): its failure becomes a
    `SystemRunError` naming the system and the input, and a non-text result is refused."""
    try:
        text = call()
    except DocevalError:
        raise
    except Exception as exc:
        raise SystemRunError(f"{system} failed on {what}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise SystemRunError(f"{system} returned {type(text).__name__}, not str, for {what}")
    return text


@functools.cache
def installed_version(package: str) -> str:
    """`package`'s installed version, looked up once per process: every test's stages ask
    for their system's fingerprint, and each lookup reads the package's metadata."""
    return version(package)


class BuiltinParser:
    """Settings and fingerprint boilerplate for parsers, in one place.

    A subclass declares ``name``, ``revision`` (bump when its own code changes its output),
    ``defaults`` (every accepted setting with its default; a value is coerced to the default's
    type) and ``packages`` (whose installed versions go into the fingerprint), and implements
    ``parse``. Unknown settings are errors: a typo must not silently keep a default.
    """

    name: ClassVar[str]
    revision: ClassVar[int] = 1
    defaults: ClassVar[Mapping[str, Any]] = {}
    packages: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, settings: Mapping[str, Any] | None = None, env: SystemEnvLike | None = None
    ) -> None:
        given = dict(settings or {})
        unknown = sorted(set(given) - set(self.defaults))
        if unknown:
            allowed = ", ".join(sorted(self.defaults)) or "none"
            raise ValueError(
                f"unknown {self.name} setting(s): {', '.join(unknown)} (allowed: {allowed})"
            )
        self.settings: dict[str, Any] = {}
        for key, default in self.defaults.items():
            value = given.get(key, default)
            if isinstance(default, bool) and not isinstance(value, bool):
                raise ValueError(f"{self.name} setting {key} = {value!r} is not true or false")
            try:
                self.settings[key] = type(default)(value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{self.name} setting {key} = {value!r} is not a {type(default).__name__}"
                ) from None
        self.env = env
        self.check()

    def __getstate__(self) -> dict[str, Any]:
        # A parser sent to a worker process (a CPU stage) runs ``parse`` there, which needs
        # only its settings; its env (models, the registry, threads) stays in this process.
        return {**self.__dict__, "env": None}

    def check(self) -> None:
        """Validate settings (raise ValueError with the rule that failed)."""

    def fingerprint(self) -> dict[str, Any]:
        return {
            "system": self.name,
            "revision": self.revision,
            **{package: installed_version(package) for package in self.packages},
            **self.settings,
        }
