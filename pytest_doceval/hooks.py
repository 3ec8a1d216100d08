"""Hook specifications that pytest-doceval adds (implement them in a conftest.py or plugin)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_doceval.systems import SystemRegistry


def pytest_doceval_register_systems(registry: SystemRegistry) -> None:
    """Register systems for this session: ``registry.register("name", factory)``, where
    ``factory(settings, env)`` (the ``[systems.name]`` settings and the suite's `SystemEnv`)
    returns a parser (``name``, ``fingerprint()``, ``parse(pdf) -> str``). A factory that
    cannot take those two arguments, a name with ``[]/\\`` or a space, or a name that is
    already a built-in, an entry point or a ``register_parser`` system is refused."""
