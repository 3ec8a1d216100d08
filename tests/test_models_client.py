"""The model client against the test server: answers, every fault, retries, and the API key."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import socket
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from model_fixtures import FAST_RETRY, ask, model_config, model_server, png_bytes
from model_server import ModelServer, embedding, reply_text

from pytest_doceval.errors import SuiteConfigError, SystemRunError
from pytest_doceval.models.client import ModelClient, ModelError
from pytest_doceval.models.config import ModelConfig
from pytest_doceval.models.retry import RetryPolicy, retry_after_seconds
from pytest_doceval.models.secrets import redact

__all__ = ["model_server"]  # the fixture, imported for the tests below

SECRET = "sk-test-0123456789abcdef-SECRET"


def client_for(config: ModelConfig, **kw: Any) -> ModelClient:
    kw.setdefault("retry", FAST_RETRY)
    return ModelClient({config.name: config}, env={"ECHO_KEY": SECRET}, **kw)


def test_answer_is_the_servers_and_images_arrive_unchanged(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, api_key_env="ECHO_KEY", max_tokens=7)
    png = png_bytes(300, 200)
    request = ask(config, "what is this?", images=[png])
    response = client_for(config).complete_sync(request)
    assert response.text == reply_text(request.body()["messages"])
    assert response.text.splitlines() == [
        "user: what is this?",
        f"user: image {len(png)} {hashlib.sha256(png).hexdigest()}",
    ]
    assert response.finish_reason == "stop" and response.model == "echo-1"
    assert response.usage["total_tokens"] > 0 and response.source == "model"
    sent = model_server.requests[-1]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["Authorization"] == f"Bearer {SECRET}"
    body = json.loads(sent.body)
    assert (body["temperature"], body["max_tokens"]) == (0.0, 7)
    assert SECRET not in sent.body.decode()  # the key travels in the header only
    assert model_server.count(request.body()) == 1


def test_no_key_configured_sends_no_authorization(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url)
    client_for(config).complete_sync(ask(config, "hello"))
    assert "Authorization" not in model_server.requests[-1].headers


def test_missing_key_variable_is_an_error_naming_it(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, api_key_env="NOT_SET_ANYWHERE")
    with pytest.raises(ModelError, match=r"NOT_SET_ANYWHERE .* is not set"):
        client_for(config).complete_sync(ask(config, "hello"))
    assert model_server.total == 0


def test_unknown_model_name_is_a_config_error() -> None:
    config = model_config("http://127.0.0.1:9/v1")
    with pytest.raises(SuiteConfigError, match=r"no model 'nope'.*configured: echo"):
        client_for(config).config("nope")


def test_5xx_is_retried_until_success(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, max_retries=3)
    request = ask(config, "flaky [fault:500 times=2]")
    response = client_for(config).complete_sync(request)
    assert response.text == "user: flaky [fault:500 times=2]"
    assert model_server.count(request.body()) == 3


def test_retries_exhausted_error_names_model_case_status_and_message(
    model_server: ModelServer,
) -> None:
    config = model_config(model_server.base_url, max_retries=2)
    request = ask(config, "down [fault:503]", case="papers/attention")
    with pytest.raises(ModelError) as info:
        client_for(config).complete_sync(request)
    error = info.value
    assert isinstance(error, SystemRunError)
    assert (error.model, error.case, error.status) == ("echo", "papers/attention", 503)
    assert error.server_message == "injected 503 on request 3 with this body"
    text = str(error)
    for part in ("model 'echo'", "echo-1", "case 'papers/attention'", "HTTP 503", "3 attempts"):
        assert part in text
    assert "injected 503 on request 3" in text
    assert model_server.count(request.body()) == 3


def test_4xx_other_than_429_is_not_retried(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, max_retries=3)
    request = ask(config, "bad [fault:400]")
    with pytest.raises(ModelError, match="HTTP 400: injected 400"):
        client_for(config).complete_sync(request)
    assert model_server.count(request.body()) == 1


def test_429_retry_after_seconds_is_honoured(
    model_server: ModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    config = model_config(model_server.base_url)
    request = ask(config, "busy [fault:429 retry_after=0.4 times=1]")
    caplog.set_level(logging.WARNING)
    start = time.perf_counter()
    response = client_for(config).complete_sync(request)
    assert response.text.startswith("user: busy")
    assert model_server.count(request.body()) == 2
    # FAST_RETRY alone would wait at most 4 ms; the server asked for 0.4 s, and it was waited
    # (said by the client's retry line, not read off a clock a busy machine slows).
    assert re.search(r"retry 1/\d+ in 0\.400 s", caplog.text), caplog.text
    assert time.perf_counter() - start >= 0.4


def test_retry_after_is_capped(model_server: ModelServer, caplog: pytest.LogCaptureFixture) -> None:
    config = model_config(model_server.base_url)
    request = ask(config, "busy [fault:429 retry_after=3600 times=1]")
    retry = RetryPolicy(base=0.001, cap=0.004, retry_after_cap=0.05)
    caplog.set_level(logging.WARNING)
    client_for(config, retry=retry).complete_sync(request)
    assert re.search(r"retry 1/\d+ in 0\.050 s", caplog.text), caplog.text  # not 3600 s


def test_retry_after_parsing() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds(" 0.5 ") == 0.5
    assert retry_after_seconds("-3") == 0.0
    later = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(later, now=now) == 90.0
    earlier = format_datetime(now - timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(earlier, now=now) == 0.0
    for junk in (None, "", "soon", "inf", "nan"):
        assert retry_after_seconds(junk) is None


def test_backoff_is_full_jitter_within_exponential_caps() -> None:
    import random

    policy = RetryPolicy(base=0.1, cap=1.0)
    rng = random.Random(1)
    for attempt, ceiling in [(0, 0.1), (1, 0.2), (2, 0.4), (3, 0.8), (4, 1.0), (9, 1.0)]:
        waits = [policy.backoff(attempt, rng) for _ in range(300)]
        assert all(0 <= w <= ceiling for w in waits)
        assert max(waits) > 0.8 * ceiling and min(waits) < 0.2 * ceiling  # spread, not fixed


def test_timeout_is_an_error_not_an_answer(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, timeout=0.3, max_retries=3)
    request = ask(config, "slow [fault:sleep seconds=30]", case="c7")
    start = time.perf_counter()
    with pytest.raises(ModelError, match=r"case 'c7': no complete response within .* 0.3 s"):
        client_for(config).complete_sync(request)  # (the server would answer after 30 s)
    assert time.perf_counter() - start >= 0.3
    assert model_server.count(request.body()) == 1  # timeouts are not retried by default


def test_timeouts_are_retried_when_asked(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, timeout=0.2, max_retries=2)
    request = ask(config, "slow once [fault:sleep seconds=30 times=1]")
    retry = RetryPolicy(base=0.001, cap=0.004, retry_timeouts=True)
    assert client_for(config, retry=retry).complete_sync(request).text.startswith("user: slow")
    assert model_server.count(request.body()) == 2


def test_a_body_that_never_ends_times_out(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, timeout=0.5)
    request = ask(config, "stream forever [fault:endless]")
    start = time.perf_counter()
    with pytest.raises(ModelError, match="no complete response within"):
        client_for(config).complete_sync(request)  # (the body would never end)
    assert time.perf_counter() - start >= 0.5


def test_malformed_json_is_an_error(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url)
    with pytest.raises(ModelError, match="malformed JSON in the response"):
        client_for(config).complete_sync(ask(config, "[fault:malformed]"))


def test_empty_choices_is_an_error_not_an_empty_answer(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url)
    with pytest.raises(ModelError, match="the response has no choices"):
        client_for(config).complete_sync(ask(config, "[fault:empty]"))


def test_dropped_connection_is_retried(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, max_retries=2)
    request = ask(config, "hang up once [fault:close times=1]")
    assert client_for(config).complete_sync(request).text.startswith("user: hang up once")
    assert model_server.count(request.body()) == 2


def test_connection_refused_after_retries_names_the_model() -> None:
    with socket.socket() as probe:  # a port with nobody listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = model_config(f"http://127.0.0.1:{port}/v1", max_retries=2)
    with pytest.raises(ModelError, match=r"model 'echo'.*connection error.*after 3 attempts"):
        client_for(config).complete_sync(ask(config, "anyone?"))


def test_max_concurrency_is_honoured(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url, max_concurrency=3)
    client = client_for(config)
    requests = [ask(config, f"q{i} [latency:0.05]") for i in range(15)]
    model_server.hold_until(3)  # the peak is reached by waiting for it, however busy the machine

    async def all_of_them() -> list[str]:
        try:
            return [r.text for r in await asyncio.gather(*map(client.complete, requests))]
        finally:
            await client.aclose()

    start = time.perf_counter()
    answers = asyncio.run(all_of_them())
    elapsed = time.perf_counter() - start
    assert answers == [f"user: q{i} [latency:0.05]" for i in range(15)]
    assert model_server.peak_active == 3
    assert elapsed >= 5 * 0.05  # 15 requests, 3 at a time, 50 ms each


def test_concurrency_share_divides_the_limit() -> None:
    config = model_config("http://127.0.0.1:9/v1", max_concurrency=16)
    assert client_for(config, concurrency_share=2).concurrency("echo") == 8
    assert client_for(config, concurrency_share=64).concurrency("echo") == 1


def test_complete_sync_works_inside_a_running_loop(model_server: ModelServer) -> None:
    config = model_config(model_server.base_url)

    async def inside() -> str:
        return client_for(config).complete_sync(ask(config, "nested")).text

    assert asyncio.run(inside()) == "user: nested"


@pytest.mark.parametrize(
    ("fault", "where"),
    [
        ("[fault:echo-auth]", "error"),  # every attempt echoes: the final error
        ("[fault:echo-auth times=1]", "log"),  # the first attempt echoes: the retry's log line
        ("[fault:echo-auth-ok]", "answer"),  # a 200 whose answer echoes it
    ],
)
def test_key_never_in_errors_logs_or_answers(
    model_server: ModelServer, caplog: pytest.LogCaptureFixture, fault: str, where: str
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, httpx and httpcore included
    config = model_config(model_server.base_url, api_key_env="ECHO_KEY", max_retries=2)
    request = ask(config, f"who am I {fault}")
    seen: dict[str, str] = {}
    try:
        seen["answer"] = client_for(config).complete_sync(request).text
    except ModelError as error:
        seen["error"] = f"{error} {error!r} {error.server_message}"
    seen["log"] = caplog.text + " ".join(str(r.args) for r in caplog.records)
    assert model_server.requests[-1].headers["Authorization"] == f"Bearer {SECRET}"
    assert "Bearer [REDACTED]" in seen[where]  # the echo happened, and was redacted
    assert all(SECRET not in text for text in seen.values())


def test_redact_replaces_longest_secrets_first() -> None:
    assert redact("a sk-1 b sk-12 c", ["sk-1", "sk-12", ""]) == "a [REDACTED] b [REDACTED] c"


def test_embeddings_are_deterministic(model_server: ModelServer) -> None:
    url = model_server.base_url + "/embeddings"
    body = {"model": "e", "input": ["alpha", "beta"]}
    first = httpx.post(url, json=body).json()
    second = httpx.post(url, json=body).json()
    assert first == second
    vectors = [d["embedding"] for d in first["data"]]
    assert vectors == [embedding("alpha"), embedding("beta")] and vectors[0] != vectors[1]
    assert all(abs(sum(v * v for v in vec) - 1) < 1e-9 for vec in vectors)
    assert model_server.count(body) == 2


def test_key_not_in_a_failing_tests_report_even_with_showlocals(
    pytester: pytest.Pytester, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCEVAL_TEST_KEY", SECRET)
    table = {
        "base_url": model_server.base_url,
        "model": "m",
        "api_key_env": "DOCEVAL_TEST_KEY",
        "max_retries": 1,
    }
    pytester.makepyfile(
        f"""
        from pytest_doceval.models.client import ModelClient
        from pytest_doceval.models.retry import RetryPolicy
        from pytest_doceval.models.config import ModelConfig
        from pytest_doceval.models.requests import ChatRequest, message

        def test_call():
            cfg = ModelConfig.from_table("echo", {table!r}, source="pyproject.toml")
            client = ModelClient({{"echo": cfg}}, retry=RetryPolicy(base=0.001, cap=0.002))
            client.complete_sync(ChatRequest.build(cfg, [message("user", "[fault:echo-auth]")]))

        def test_bad_json():
            cfg = ModelConfig.from_table("echo", {table!r}, source="pyproject.toml")
            client = ModelClient({{"echo": cfg}})
            client.complete_sync(ChatRequest.build(cfg, [message("user", "[fault:malformed]")]))
        """
    )
    result = pytester.runpytest("--showlocals", "--tb=long", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "bad credentials: Bearer [REDACTED]" in out and "malformed JSON" in out
    assert SECRET not in out


def test_model_error_survives_pickling() -> None:
    import pickle

    error = ModelError("m: HTTP 500", model="m", case="c", status=500, server_message="boom")
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.model, again.case, again.status, again.server_message) == (
        "m: HTTP 500",
        "m",
        "c",
        500,
        "boom",
    )
