"""The answer budget of model requests: the model's own max_tokens, then the system's setting,
then the kind's default (README "Models")."""

from __future__ import annotations

from typing import Any

import pytest
from model_fixtures import model_config

from pytest_doceval.models.runtime import ModelRuntime
from pytest_doceval.systems import SystemEnv, build_registry


def env(model_table: dict[str, Any], system: dict[str, Any]) -> SystemEnv:
    config = model_config("http://127.0.0.1:9/v1", **model_table)
    runtime = ModelRuntime({"echo": config}, workers=1, source="x")
    return SystemEnv(
        build_registry([]), {"pymupdf+vlm": system}, models=runtime, defaults={"vlm": "echo"}
    )


@pytest.mark.parametrize(
    ("model_table", "system", "expected"),
    [
        ({"max_tokens": 1024}, {"max_tokens": 2000}, 1024),  # the model's own wins
        ({}, {"max_tokens": 2000}, 2000),  # then the system's setting
        ({}, {}, 4096),  # then the kind's default
        ({"max_tokens": 512}, {}, 512),
    ],
)
def test_two_stage_max_tokens_precedence(
    model_table: dict[str, Any], system: dict[str, Any], expected: int
) -> None:
    parser: Any = env(model_table, system).system("pymupdf+vlm")
    (request,) = parser.requests("some text", case="c")
    assert request.generation["max_tokens"] == expected
    assert parser.fingerprint()["max_tokens"] == expected  # and the cache key knows it


def test_the_rule_has_one_home() -> None:
    handle = env({"max_tokens": 300}, {}).models.handle("echo")  # type: ignore[union-attr]
    assert handle.max_tokens(100, 10) == 300
    bare = env({}, {}).models.handle("echo")  # type: ignore[union-attr]
    assert (bare.max_tokens(100, 10), bare.max_tokens(None, 10)) == (100, 10)
    assert bare.max_tokens(None, None) is None


def test_a_negative_system_max_tokens_is_refused() -> None:
    with pytest.raises(Exception, match="max_tokens must be at least 1"):
        env({}, {"max_tokens": -1}).system("pymupdf+vlm")
