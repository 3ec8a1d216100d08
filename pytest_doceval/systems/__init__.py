"""Systems under evaluation: parsers (and, later, models), found through a registry."""

from pytest_doceval.systems.base import BuiltinParser, Parser, ParserFactory
from pytest_doceval.systems.registry import (
    SystemEnv,
    SystemRegistry,
    build_registry,
    register_parser,
)

__all__ = [
    "BuiltinParser",
    "Parser",
    "ParserFactory",
    "SystemEnv",
    "SystemRegistry",
    "build_registry",
    "register_parser",
]
