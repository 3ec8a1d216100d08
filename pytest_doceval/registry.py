"""One registry for everything found by name: suite kinds, systems, HTML renderers.

Three sources, looked up in this order:

1. names registered in this process (`Registry.register`, or the decorator `Registry.add`
   from any module, a conftest.py included);
2. built-ins, given as ``"package.module:attr"`` and imported only when first asked for, so a
   run imports only the kinds and systems it uses;
3. an entry-point group (``pytest_doceval.kinds``, ``pytest_doceval.systems``, ...): entry-point
   name = the registered name, value = ``module:attr``.

An unknown name is a `SuiteConfigError` that lists the known ones, the closest first as "did
you mean ...?" (`did_you_mean`, also what `config` says of a misspelled key). A name registered
twice from two different places is an error, a built-in or an entry point's name included, even
before it was imported: a silent replacement would change numbers without a word.

`layer()` makes a registry on top of another: it finds what the one below finds, and what is
registered into it stays in it. A pytest session registers its conftest hooks' systems into a
layer of its own, above the process-wide registry that decorators fill at import time.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from pytest_doceval.errors import SuiteConfigError

T = TypeVar("T")
Obj = TypeVar("Obj")


def load_object(target: str) -> Any:
    """``"package.module:attr"`` imported."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'systems'?)`` for a misspelled `name`: the known name closest to it
    (`difflib.get_close_matches`, a ratio of at least 0.6; one name, since a list of three
    half-alike ones reads as a riddle); ``""`` when none is close. The one wording of every
    "unknown ..." message: keys, tables, systems, kinds."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_names(names: Iterable[str], known: Iterable[str]) -> str:
    """``sytems (did you mean 'systems'?), colour``: unknown `names`, each with its hint."""
    candidates = sorted(set(known))
    return ", ".join(f"{name}{did_you_mean(name, candidates)}" for name in names)


class Registry(Generic[T]):
    """Named objects of one sort (`what`: "suite kind", "system", "view renderer")."""

    def __init__(
        self,
        what: str,
        *,
        builtins: Mapping[str, str] | None = None,
        group: str | None = None,
        check: Callable[[str, T], None] | None = None,
        origin: str = "user",
    ) -> None:
        self.what = what
        self.group = group
        self._builtins = dict(builtins or {})
        self._check = check
        self._origin = origin  # what `register` records when not told
        self._below: Registry[T] | None = None
        self._entry_point_targets: dict[str, str] | None = None
        self._objects: dict[str, T] = {}
        self._origins: dict[str, str] = {}

    def layer(self, *, origin: str = "user") -> Registry[T]:
        """A registry that finds what this one finds, and keeps what is registered into it
        (recorded as from `origin` unless told otherwise) to itself."""
        above: Registry[T] = Registry(self.what, check=self._check, origin=origin)
        above._below = self
        return above

    def register(self, name: str, obj: T, *, origin: str | None = None) -> None:
        """Register `obj` as `name`; the same origin may register again (a conftest imported
        twice), another may not."""
        origin = origin or self._origin
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.what} needs a non-empty name, not {name!r}")
        if self._check is not None:
            self._check(name, obj)
        known = self.source(name)
        if known is not None and known != origin:
            raise ValueError(f"{self.what} {name!r} is registered twice ({known} and {origin})")
        self._objects[name] = obj
        self._origins[name] = origin

    def source(self, name: str) -> str | None:
        """Where `name` is or would be found (without importing it); None when nowhere."""
        if name in self._origins:
            return self._origins[name]
        if self._below is not None:
            return self._below.source(name)
        if name in self._builtins:
            return "built-in"
        target = self._entry_points().get(name)
        return None if target is None else f"entry point {target}"

    def add(self, name: str) -> Callable[[Obj], Obj]:
        """Decorator: ``@registry.add("name")`` registers what it decorates."""

        def decorate(obj: Obj) -> Obj:
            self.register(name, obj)  # type: ignore[arg-type]
            return obj

        return decorate

    def _entry_points(self) -> dict[str, str]:
        # Read once: a scan of the installed packages' metadata costs ~20 ms, and every
        # registration and every lookup of an unknown name asks.
        if self._entry_point_targets is None:
            found = entry_points(group=self.group) if self.group is not None else ()
            self._entry_point_targets = {ep.name: ep.value for ep in found}
        return self._entry_point_targets

    def get(self, name: str) -> T:
        """The object named `name`, imported on first use; a `SuiteConfigError` listing the
        known names when there is none."""
        if name in self._objects:
            return self._objects[name]
        if self._below is not None and name in self._below:
            return self._below.get(name)
        target = self._builtins.get(name)
        origin = "built-in"
        if target is None:
            target = self._entry_points().get(name)
            origin = f"entry point {target}"
        if target is None:
            known = self.names()
            raise SuiteConfigError(
                f"unknown {self.what} {name!r}{did_you_mean(name, known)} "
                f"(known: {', '.join(known) or 'none'})"
            )
        obj: T = load_object(target)
        self.register(name, obj, origin=origin)
        return obj

    def origin(self, name: str) -> str | None:
        """Where `name` came from, once it was looked up or registered."""
        if name not in self._origins and self._below is not None:
            return self._below.origin(name)
        return self._origins.get(name)

    def names(self) -> list[str]:
        below = self._below.names() if self._below is not None else []
        found = set(self._objects) | set(self._builtins) | set(self._entry_points())
        return sorted(found.union(below))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.source(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
