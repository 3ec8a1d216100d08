"""Hook specifications that pytest-doceval adds (implement them in a conftest.py or plugin)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_doceval.systems import SystemRegistry


def pytest_doceval_register_systems(registry: SystemRegistry) -> None:
    """Register systems: ``registry.register("name", factory)`` where ``factory(settings)``
    returns a parser (``name``, ``fingerprint()``, ``parse(pdf) -> str``)."""
