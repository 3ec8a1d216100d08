"""Systems under evaluation: parsers (and, later, models), found through a registry."""

from pytest_doceval.systems.base import Parser, ParserFactory
from pytest_doceval.systems.registry import SystemRegistry, build_registry, register_parser

__all__ = ["Parser", "ParserFactory", "SystemRegistry", "build_registry", "register_parser"]
