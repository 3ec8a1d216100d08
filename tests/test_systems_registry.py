"""Systems are found through the one `Registry`: built-ins (lazy), entry points,
`register_parser`, the conftest hook; every factory is called ``factory(settings, env)``."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.registry import Registry
from pytest_doceval.systems import SystemEnv, SystemRegistry, build_registry, register_parser
from pytest_doceval.systems import registry as registry_module
from pytest_doceval.systems.pymupdf_text import PyMuPDFText
from tests.conftest import WORKERS, read_report, write_suite

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[1] / "README.md"
BUILTINS = {"pymupdf", "rapidocr", "tesseract", "pymupdf4llm", "pymupdf+vlm", "rapidocr+vlm"}


@pytest.fixture
def systems(monkeypatch: pytest.MonkeyPatch) -> Iterator[SystemRegistry]:
    """A fresh process-wide registry, so this test's decorators leave no trace, and one
    entry point, ``from-package``."""
    fresh: SystemRegistry = Registry(
        "system",
        builtins=registry_module._BUILTINS,
        group=registry_module.ENTRY_POINT_GROUP,
        check=registry_module.check_system,
        origin=registry_module.DECORATED,
    )
    monkeypatch.setattr(registry_module, "SYSTEMS", fresh)
    ep = EntryPoint(
        name="from-package",
        value="pytest_doceval.systems.pymupdf_text:PyMuPDFText",
        group=registry_module.ENTRY_POINT_GROUP,
    )
    monkeypatch.setattr(
        "pytest_doceval.registry.entry_points",
        lambda group: [ep] if group == registry_module.ENTRY_POINT_GROUP else [],
    )
    yield fresh


class Recorder:
    """A parser that keeps what its factory was called with."""

    name = "recorder"

    def __init__(self, settings: Mapping[str, Any], env: SystemEnv) -> None:
        self.settings = settings
        self.env = env

    def fingerprint(self) -> dict[str, Any]:
        return {"system": self.name}

    def parse(self, pdf: Path) -> str:
        return "x"


def test_every_source_is_found_and_every_factory_gets_settings_and_env(
    systems: SystemRegistry,
) -> None:
    register_parser("decorated")(Recorder)

    def from_hook(registry: SystemRegistry) -> None:
        registry.register("hooked", lambda settings, env: Recorder(settings, env))

    registry = build_registry([from_hook])
    assert BUILTINS | {"decorated", "hooked", "from-package"} <= set(registry.names())
    env = SystemEnv(registry, {"decorated": {"a": 1}, "from-package": {"tables": False}})
    decorated = env.system("decorated")
    assert isinstance(decorated, Recorder)
    assert decorated.settings == {"a": 1} and decorated.env is env
    hooked = env.system("hooked")
    assert isinstance(hooked, Recorder) and hooked.env is env
    packaged = env.system("from-package")
    assert isinstance(packaged, PyMuPDFText) and packaged.env is env
    assert packaged.settings == {"tables": False}
    assert env.system("decorated") is decorated  # built once per suite
    assert registry.origin("hooked") == registry_module.HOOK
    assert registry.origin("from-package") == (
        "entry point pytest_doceval.systems.pymupdf_text:PyMuPDFText"
    )


def test_hook_registrations_stay_in_their_session(systems: SystemRegistry) -> None:
    def from_hook(registry: SystemRegistry) -> None:
        registry.register("hooked", Recorder)

    assert "hooked" in build_registry([from_hook])
    assert "hooked" not in build_registry() and "hooked" not in systems


@pytest.mark.parametrize(
    "factory",
    [
        lambda settings: None,
        type("OneArgument", (), {"__init__": lambda self, settings: None}),
        lambda settings, env, third: None,
    ],
    ids=["function", "class", "three-required"],
)
def test_a_factory_that_cannot_take_settings_and_env_is_refused_at_registration(
    systems: SystemRegistry, factory: Any
) -> None:
    message = r"system 'old-style': .* a system factory takes \(settings, env\)"
    with pytest.raises(TypeError, match=message):
        register_parser("old-style")(factory)
    registry = build_registry()
    with pytest.raises(TypeError, match=message):
        registry.register("old-style", factory)
    assert "old-style" not in registry


def test_factories_with_defaults_or_star_args_are_accepted(systems: SystemRegistry) -> None:
    registry = build_registry()
    registry.register("star", lambda *args: Recorder(*args))
    registry.register("defaults", lambda settings=None, env=None, extra=1: Recorder(settings, env))
    registry.register("builtin-class", PyMuPDFText)
    assert {"star", "defaults", "builtin-class"} <= set(registry.names())


def test_unknown_system_lists_builtins_entry_points_and_conftest_systems(
    systems: SystemRegistry,
) -> None:
    register_parser("decorated")(Recorder)
    registry = build_registry([lambda registry: registry.register("hooked", Recorder)])
    env = SystemEnv(registry, {}, source="cases/x/suite.toml")
    with pytest.raises(SuiteConfigError) as error:
        env.system("nope")
    message = str(error.value)
    match = re.fullmatch(r"cases/x/suite\.toml: unknown system 'nope' \(known: (.*)\)", message)
    assert match, message
    assert match.group(1).split(", ") == sorted(BUILTINS | {"decorated", "hooked", "from-package"})


def test_a_name_from_two_places_is_refused(systems: SystemRegistry) -> None:
    register_parser("mine")(Recorder)
    register_parser("mine")(Recorder)  # the same place again (a conftest imported twice)
    registry = build_registry()
    with pytest.raises(
        ValueError,
        match=r"system 'mine' is registered twice \(@register_parser and "
        r"pytest_doceval_register_systems\)",
    ):
        registry.register("mine", Recorder)
    # A built-in is refused before it was ever imported; so is an entry point's name.
    with pytest.raises(ValueError, match=r"'rapidocr' is registered twice \(built-in and"):
        register_parser("rapidocr")(Recorder)
    with pytest.raises(ValueError, match=r"'from-package' is registered twice \(entry point"):
        registry.register("from-package", Recorder)
    with pytest.raises(ValueError, match="must be non-empty without"):
        registry.register("bad name", Recorder)


def test_bad_settings_name_the_system_and_the_suite(systems: SystemRegistry) -> None:
    env = SystemEnv(build_registry(), {"pymupdf": {"colour": 1}}, source="s.toml")
    with pytest.raises(SuiteConfigError, match=r"s\.toml: \[systems\.pymupdf\]: unknown pymupdf"):
        env.system("pymupdf")


def test_builtins_are_imported_only_when_used() -> None:
    script = textwrap.dedent(
        """
        import sys
        from pytest_doceval.systems import SystemEnv, build_registry

        modules = ("pytest_doceval.systems.pymupdf_text", "pytest_doceval.systems.rapidocr_ocr",
                   "pytest_doceval.systems.two_stage", "pymupdf", "rapidocr")
        registry = build_registry()
        assert "rapidocr" in registry and "pymupdf" in registry.names()
        assert not [m for m in modules if m in sys.modules], sys.modules.keys()
        SystemEnv(registry, {}).system("pymupdf")
        assert "pytest_doceval.systems.pymupdf_text" in sys.modules
        assert "pytest_doceval.systems.rapidocr_ocr" not in sys.modules
        assert "rapidocr" not in sys.modules
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


CONFTEST = '''
import pytest_doceval


class Fixed:
    """Answers a fixed text (its setting `text`)."""

    def __init__(self, name, settings, env):
        self.name = name
        self.text = settings.get("text", "Tides moved water")

    def fingerprint(self):
        return {"system": self.name, "version": "1", "text": self.text}

    def parse(self, pdf):
        return self.text


@pytest_doceval.register_parser("decorated-e2e")
def decorated(settings, env):
    return Fixed("decorated-e2e", settings, env)


def pytest_doceval_register_systems(registry):
    # Stage 1 of this one is another system of the suite, reached through env.
    registry.register("hooked-e2e", lambda settings, env: Fixed(
        "hooked-e2e", {"text": env.system("decorated-e2e").text + " twice"}, env))
'''


def readme_parser() -> str:
    match = re.search(r"<!-- example-parser.*?-->\n```python\n(.*?)```", README.read_text(), re.S)
    assert match, "README lost its example parser"
    return match.group(1)


@pytest.mark.parametrize("workers", WORKERS)
def test_conftest_hook_decorator_and_readme_parser_end_to_end(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makeconftest(CONFTEST + "\n\n" + readme_parser())
    write_suite(
        pytester.path,
        "docs",
        {"c": {"truth": "# Tides moved water\n", "pdf": "Tides moved water"}},
        systems=["decorated-e2e", "hooked-e2e", "my-parser"],
        gates="",
    )
    pytester.runpytest("--doceval", *workers).assert_outcomes(passed=3)
    report = read_report(pytester.path / "doceval-report.json")
    rows = {r["system"]: r for r in report["suites"]["docs"]["results"]}
    assert set(rows) == {"decorated-e2e", "hooked-e2e", "my-parser"}
    assert rows["decorated-e2e"]["metrics"]["cer"] == 0.0
    assert rows["my-parser"]["metrics"]["cer"] == 0.0
    assert rows["hooked-e2e"]["metrics"]["cer"] > 0.0  # stage 1's text and more


def test_an_old_style_conftest_parser_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest_doceval

def pytest_doceval_register_systems(registry):
    registry.register("old-e2e", lambda settings: None)
"""
    )
    write_suite(pytester.path, "docs", {"c": {"truth": "x\n", "pdf": "x"}}, systems=["old-e2e"])
    result = pytester.runpytest("--doceval")
    result.stdout.fnmatch_lines(
        [
            "*pytest_doceval_register_systems: system 'old-e2e': *<lambda>(settings) cannot be "
            "called as factory(settings, env): a system factory takes (settings, env)*"
        ]
    )
    assert result.ret != 0 and "Traceback" not in result.stdout.str()


def test_an_entry_point_that_cannot_take_settings_and_env_fails_its_suite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ep = EntryPoint(name="old-package", value="json:loads", group="pytest_doceval.systems")
    monkeypatch.setattr("pytest_doceval.registry.entry_points", lambda group: [ep])
    fresh: SystemRegistry = Registry(
        "system", group=registry_module.ENTRY_POINT_GROUP, check=registry_module.check_system
    )
    monkeypatch.setattr(registry_module, "SYSTEMS", fresh)
    env = SystemEnv(build_registry(), {}, source="s.toml")
    assert "old-package" in env  # listed, and refused when a suite uses it
    with pytest.raises(
        SuiteConfigError,
        match=r"s\.toml: system 'old-package': loads\(s, \*, .*a system factory takes",
    ):
        env.system("old-package")
