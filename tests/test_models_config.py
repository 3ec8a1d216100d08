"""`[tool.doceval.models.NAME]` checking, and what the request cache key does and does not cover."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from model_fixtures import ask, model_config, png_bytes

import pytest_doceval.models
from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.models.config import ModelConfig, load_models
from pytest_doceval.models.requests import ChatRequest, ChatResponse, image_part, message
from pytest_doceval.models.retry import retry_after_seconds

BASE = "http://127.0.0.1:9/v1"


def write_pyproject(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_models_reads_every_table(tmp_path: Path) -> None:
    path = write_pyproject(
        tmp_path,
        """
[tool.doceval]
suites = ["cases"]

[tool.doceval.models.qwen]
base_url = "http://localhost:8000/v1/"
model = "Qwen/Qwen2-VL-7B-Instruct"
api_key_env = "VLLM_KEY"
max_concurrency = 16
timeout = 30
temperature = 0.0
max_tokens = 10
top_p = 1.0
extra = { response_format = { type = "json_object" }, seed = 7 }

[tool.doceval.models.small]
base_url = "https://api.example.com/v1"
model = "small-1"
""",
    )
    models = load_models(path)
    assert sorted(models) == ["qwen", "small"]
    qwen = models["qwen"]
    assert qwen.base_url == "http://localhost:8000/v1"  # trailing slash dropped
    assert qwen.url == "http://localhost:8000/v1/chat/completions"
    assert (qwen.max_concurrency, qwen.timeout, qwen.max_tokens, qwen.top_p) == (16, 30.0, 10, 1.0)
    assert qwen.generation() == {
        "temperature": 0.0,
        "max_tokens": 10,
        "top_p": 1.0,
        "response_format": {"type": "json_object"},
        "seed": 7,
    }
    small = models["small"]
    assert (small.api_key_env, small.max_concurrency, small.temperature) == (None, 4, 0.0)
    assert small.generation() == {"temperature": 0.0}


def test_no_pyproject_or_no_models_means_no_models(tmp_path: Path) -> None:
    assert load_models(tmp_path / "pyproject.toml") == {}
    assert load_models(write_pyproject(tmp_path, "[tool.doceval]\nsuites = ['x']\n")) == {}


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({"temprature": 0}, "unknown key(s) temprature"),
        ({"max_concurrency": 0}, "max_concurrency must be an integer >= 1"),
        ({"max_concurrency": True}, "max_concurrency must be an integer >= 1"),
        ({"max_concurrency": 2.5}, "max_concurrency must be an integer >= 1"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"timeout": "30"}, "timeout must be a positive number"),
        ({"temperature": -1}, "temperature must be a number >= 0"),
        ({"temperature": float("nan")}, "temperature must be a number >= 0"),
        ({"max_tokens": 0}, "max_tokens must be an integer >= 1"),
        ({"model": ""}, "model must be a non-empty string"),
        ({"base_url": "localhost:8000"}, "base_url must start with http:// or https://"),
        ({"api_key_env": "sk-live-123"}, "api_key_env must name an environment variable"),
        ({"extra": {"temperature": 1}}, "extra may not set temperature"),
        ({"extra": {"messages": []}}, "extra may not set messages"),
        ({"extra": 3}, "extra must be a table"),
    ],
)
def test_bad_tables_are_errors_naming_file_table_and_key(
    table: dict[str, Any], expected: str
) -> None:
    full = {"base_url": BASE, "model": "m", **table}
    with pytest.raises(SuiteConfigError) as info:
        ModelConfig.from_table("qwen", full, source="/repo/pyproject.toml")
    message = str(info.value)
    assert message.startswith("/repo/pyproject.toml: [tool.doceval.models.qwen]")
    assert expected in message


def test_missing_required_key_and_non_table(tmp_path: Path) -> None:
    with pytest.raises(SuiteConfigError, match=r"qwen\]: missing key model"):
        ModelConfig.from_table("qwen", {"base_url": BASE}, source="pyproject.toml")
    path = write_pyproject(tmp_path, "[tool.doceval]\nmodels = 3\n")
    with pytest.raises(SuiteConfigError, match=r"pyproject.toml: \[tool.doceval.models\] must be"):
        load_models(path)


def test_request_body_sends_image_bytes_unchanged_and_settings() -> None:
    config = model_config(BASE, max_tokens=10, extra={"response_format": {"type": "json_object"}})
    png = png_bytes(31, 17)
    request = ask(config, "read this", images=[png])
    body = request.body()
    assert body["model"] == "echo-1"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 10
    assert body["response_format"] == {"type": "json_object"}
    text, image = body["messages"][0]["content"]
    assert text == {"type": "text", "text": "read this"}
    url = image["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png


def test_key_payload_holds_image_digest_never_bytes() -> None:
    config = model_config(BASE)
    png = png_bytes(40, 40)
    payload = ask(config, "x", images=[png]).key_payload()
    image = payload["messages"][0]["content"][1]
    assert image == {"type": "image", "sha256": hashlib.sha256(png).hexdigest(), "bytes": len(png)}
    text = json.dumps(payload)  # builtin types only
    assert base64.b64encode(png).decode()[:40] not in text


def test_image_part_rejects_non_png() -> None:
    with pytest.raises(ValueError, match="PNG"):
        image_part(b"\xff\xd8\xff\xe0 a jpeg")


def test_build_rejects_overriding_wire_fields() -> None:
    config = model_config(BASE)
    with pytest.raises(ValueError, match="cannot override model, stream"):
        ChatRequest.build(config, [message("user", "x")], stream=True, model="other")
    # generation settings may be overridden, also ones the config leaves unset
    request = ChatRequest.build(config, [message("user", "x")], max_tokens=5, top_p=0.5)
    assert request.generation == {"temperature": 0.0, "max_tokens": 5, "top_p": 0.5}


def test_key_ignores_what_does_not_change_the_answer() -> None:
    png = png_bytes(8, 8)
    reference = ask(model_config(BASE), "q", images=[png], case="a").cache_key()
    same = [
        model_config(BASE, timeout=5),
        model_config(BASE, max_concurrency=64),
        model_config(BASE, max_retries=0),
        model_config(BASE, api_key_env="SOME_KEY"),
        model_config(BASE, name="other-name"),
        model_config(BASE + "/"),
    ]
    for config in same:
        assert ask(config, "q", images=[png], case="b").cache_key() == reference, config


def test_key_covers_what_changes_the_answer() -> None:
    config = model_config(BASE)
    png = png_bytes(8, 8)
    reference = ask(config, "q", images=[png]).cache_key()
    different = [
        ask(model_config(BASE, temperature=0.7), "q", images=[png]),
        ask(model_config(BASE, max_tokens=10), "q", images=[png]),
        ask(model_config(BASE, top_p=0.9), "q", images=[png]),
        ask(model_config(BASE, extra={"seed": 1}), "q", images=[png]),
        ask(model_config(BASE, model="echo-2"), "q", images=[png]),
        ask(model_config("http://127.0.0.1:10/v1"), "q", images=[png]),
        ask(config, "q", images=[png_bytes(8, 8, shade=1)]),
        ask(config, "q", images=[png_bytes(8, 9)]),
        ask(config, "Q", images=[png]),
        ChatRequest.build(config, [message("user", "q", image_part(png))], prompt_version="v2"),
    ]
    keys = {reference} | {r.cache_key() for r in different}
    assert len(keys) == len(different) + 1


@given(
    text=st.text(max_size=50),
    temperature=st.floats(0, 2),
    timeout=st.floats(0.1, 1000),
    concurrency=st.integers(1, 256),
)
def test_key_property(text: str, temperature: float, timeout: float, concurrency: int) -> None:
    base = model_config(BASE, temperature=temperature)
    tweaked = model_config(
        BASE, temperature=temperature, timeout=timeout, max_concurrency=concurrency
    )
    assert ask(base, text).cache_key() == ask(tweaked, text).cache_key()
    hotter = model_config(BASE, temperature=temperature + 0.5)
    assert ask(base, text).cache_key() != ask(hotter, text).cache_key()
    # The key is a digest of the canonical payload: independent of dict insertion order.
    request = ask(base, text)
    payload = json.dumps(
        request.key_payload(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert request.cache_key() == hashlib.sha256(payload.encode()).hexdigest()


def test_response_payload_round_trip_and_rejects_garbage() -> None:
    response = ChatResponse("hi", {"total_tokens": 3}, "stop", "m")
    again = ChatResponse.from_payload(response.to_payload(), source="cache")
    assert again == response and again.source == "cache"
    for bad in ({"text": 3}, {"text": "x", "usage": []}, {"text": "x", "finish_reason": 1}):
        with pytest.raises(ValueError):
            ChatResponse.from_payload(bad, source="cache")


def test_package_facade_is_lazy_and_complete() -> None:
    code = (
        "import sys, pytest_doceval.models as m\n"
        "assert 'httpx' not in sys.modules, 'httpx imported eagerly'\n"
        "assert all(getattr(m, name) for name in m.__all__)\n"
        "assert 'httpx' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError):
        _ = pytest_doceval.models.NoSuchName


@given(st.floats(0, 1e6, allow_nan=False))
def test_retry_after_delta_seconds_property(seconds: float) -> None:
    assert retry_after_seconds(repr(seconds)) == seconds
