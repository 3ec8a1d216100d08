"""registry: one way to find kinds, systems and renderers by name."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.registry import Registry, load_object


def test_builtins_are_imported_on_first_use_only() -> None:
    registry: Registry[object] = Registry("renderer", builtins={"dumps": "json:dumps"})
    assert registry.origin("dumps") is None
    import json

    assert registry.get("dumps") is json.dumps
    assert registry.origin("dumps") == "built-in"
    assert "dumps" in registry and registry.names() == ["dumps"]


def test_decorator_registers_and_unknown_names_list_the_known_ones() -> None:
    registry: Registry[object] = Registry("system", builtins={"pymupdf": "json:dumps"})

    @registry.add("mine")
    def mine() -> None: ...

    assert registry.get("mine") is mine
    with pytest.raises(SuiteConfigError, match=r"unknown system 'nope' \(known: mine, pymupdf\)"):
        registry.get("nope")


def test_a_name_from_two_places_is_an_error_the_same_place_may_repeat() -> None:
    registry: Registry[int] = Registry("kind")
    registry.register("a", 1, origin="conftest.py")
    registry.register("a", 1, origin="conftest.py")
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("a", 2, origin="plugin")


def test_check_refuses_bad_objects() -> None:
    def positive(name: str, value: int) -> None:
        if value <= 0:
            raise TypeError(f"{name}: must be positive")

    registry: Registry[int] = Registry("count", check=positive)
    with pytest.raises(TypeError, match="must be positive"):
        registry.register("zero", 0)


def test_entry_points_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_doceval.registry as module

    found = [EntryPoint(name="ext", value="json:loads", group="test.group")]
    monkeypatch.setattr(
        module, "entry_points", lambda group: found if group == "test.group" else []
    )
    registry: Registry[object] = Registry("kind", group="test.group")
    import json

    assert registry.names() == ["ext"]
    assert registry.get("ext") is json.loads
    assert registry.origin("ext") == "entry point json:loads"
    assert load_object("json:loads") is json.loads
