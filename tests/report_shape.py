"""Checking a JSON-like value against a TypedDict at run time: the test that holds real
reports to `pytest_doceval.report.schema`'s declared shape (so the two cannot drift apart)."""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any, Literal, NotRequired

# -- checking a value against the declared shape at run time -------------------------------

# (TypedDict, its value) -> the undeclared keys the value may hold
ExtraKeys = Callable[[type, Mapping[str, object]], Container[str]]


def no_extra_keys(shape: type, value: Mapping[str, object]) -> Container[str]:
    return ()


def shape_problems(
    value: object, shape: object, where: str = "report", extra: ExtraKeys = no_extra_keys
) -> list[str]:
    """Every place `value` (JSON-like) departs from the type `shape`: a missing required key,
    an undeclared key (unless `extra` allows it), a value of another type. An int passes for
    a float, as for mypy (and JSON does not tell 1 from 1.0 for every writer); a bool passes
    for neither."""
    if shape is Any or shape is object:
        return []
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if typing.is_typeddict(shape):
        assert isinstance(shape, type)
        return _typeddict_problems(value, shape, where, extra)
    if origin is typing.Union or origin is types.UnionType:
        found = [shape_problems(value, option, where, extra) for option in args]
        if any(not problems for problems in found):
            return []
        return [f"{where}: {value!r:.80} is none of {shape}"]
    if origin is Literal:
        return [] if value in args else [f"{where}: {value!r:.80} is not one of {args}"]
    if origin is list or origin is Sequence:  # a report's rows: a list, or rows read from disk
        expected = list if origin is list else Sequence
        if not isinstance(value, expected) or isinstance(value, str):
            return [f"{where}: expected a list, found {type(value).__name__}"]
        return [
            p
            for i, item in enumerate(value)
            for p in shape_problems(item, args[0], f"{where}[{i}]", extra)
        ]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: expected an object, found {type(value).__name__}"]
        problems = [f"{where}: key {k!r} is not a string" for k in value if not isinstance(k, str)]
        for key, item in value.items():
            problems += shape_problems(item, args[1], f"{where}.{key}", extra)
        return problems
    if shape is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif shape is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif shape is None or shape is type(None):
        ok = value is None
    elif isinstance(shape, type):
        ok = isinstance(value, shape)
    else:
        raise TypeError(f"shape_problems cannot check {shape!r}")
    return (
        []
        if ok
        else [f"{where}: expected {getattr(shape, '__name__', shape)}, found {value!r:.80}"]
    )


@functools.cache
def _fields(shape: type) -> tuple[dict[str, object], frozenset[str]]:
    """A TypedDict's keys with their types, and its required keys. Read from the hints, not
    ``__required_keys__``: under ``from __future__ import annotations`` Python 3.11 cannot see
    ``NotRequired`` in a string annotation and counts every key as required."""
    hints = typing.get_type_hints(shape, include_extras=True)
    optional = {k for k, hint in hints.items() if typing.get_origin(hint) is NotRequired}
    types_ = {k: typing.get_args(hint)[0] if k in optional else hint for k, hint in hints.items()}
    return types_, frozenset(hints) - optional


def _typeddict_problems(value: object, shape: type, where: str, extra: ExtraKeys) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: expected an object ({shape.__name__}), found {type(value).__name__}"]
    hints, required = _fields(shape)
    problems = [f"{where}: no {key!r} ({shape.__name__})" for key in sorted(required - set(value))]
    allowed = extra(shape, value)
    for key, item in value.items():
        if key in hints:
            problems += shape_problems(item, hints[key], f"{where}.{key}", extra)
        elif key not in allowed:
            problems.append(f"{where}: {key!r} is not declared in {shape.__name__}")
    return problems
