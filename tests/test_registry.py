"""registry: one way to find kinds, systems and renderers by name."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from pytest_doceval.config import ProjectConfig
from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.registry import Registry, did_you_mean, load_object, unknown_names


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
    hint = r"unknown system 'pymupf' \(did you mean 'pymupdf'\?\) \(known"
    with pytest.raises(SuiteConfigError, match=hint):
        registry.get("pymupf")


def test_did_you_mean_names_the_closest_known_names() -> None:
    """difflib's ratio, at least 0.6: a close misspelling gets the closest name; other names
    none."""
    known = ["pymupdf", "pymupdf4llm", "rapidocr", "plain-pdf-words"]
    assert did_you_mean("pymupdf4lm", known) == " (did you mean 'pymupdf4llm'?)"
    assert did_you_mean("rapid-ocr", known) == " (did you mean 'rapidocr'?)"
    assert did_you_mean("tesseract", known) == ""
    assert did_you_mean("x", []) == ""
    assert unknown_names(["sytems", "colour"], ["systems", "kind"]) == (
        "sytems (did you mean 'systems'?), colour"
    )


def test_a_misspelled_project_key_is_named_with_what_was_meant(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.doceval]\nbaseline = "b"\n')
    with pytest.raises(SuiteConfigError, match=r"baseline \(did you mean 'baselines'\?\)"):
        ProjectConfig.load(tmp_path)


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


def test_a_layer_finds_what_is_below_and_keeps_its_own_registrations() -> None:
    below: Registry[object] = Registry("system", builtins={"dumps": "json:dumps"})
    below.register("shared", 1, origin="decorator")
    session = below.layer(origin="hook")
    session.register("mine", 2)
    import json

    assert session.names() == ["dumps", "mine", "shared"]
    assert session.get("shared") == 1 and session.get("dumps") is json.dumps
    assert session.origin("mine") == "hook" and session.origin("shared") == "decorator"
    assert "mine" in session and "mine" not in below and "mine" not in below.layer()
    with pytest.raises(SuiteConfigError, match=r"unknown system 'x' \(known: dumps, mine, shared"):
        session.get("x")


def test_a_layer_may_not_take_a_name_from_below() -> None:
    below: Registry[object] = Registry("system", builtins={"lazy": "json:dumps"})
    below.register("shared", 1, origin="decorator")
    session = below.layer(origin="hook")
    with pytest.raises(ValueError, match=r"'shared' is registered twice \(decorator and hook\)"):
        session.register("shared", 2)
    # A built-in is taken before it was ever imported, in the layer and below it.
    with pytest.raises(ValueError, match=r"'lazy' is registered twice \(built-in and hook\)"):
        session.register("lazy", 2)
    with pytest.raises(ValueError, match=r"'lazy' is registered twice \(built-in and decorator"):
        below.register("lazy", 2, origin="decorator")
    assert below.origin("lazy") is None  # still not imported
