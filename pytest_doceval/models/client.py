"""The async client for OpenAI-compatible ``/chat/completions`` endpoints.

Each configured model gets a semaphore of ``max_concurrency`` slots; each request is retried on
connection errors, 5xx and 429 with exponential backoff and full jitter (``Retry-After``
honoured, capped: see `retry.RetryPolicy`), and every attempt runs under a deadline covering
the whole body, so a server that never finishes its answer cannot hang a run. After the last
attempt the request fails with a `ModelError` naming the model, the case and the server's
message: a failed call is an error of its test, never an empty or wrong answer, and is never
cached.

The API key is read from the environment when a request is sent and travels only in the
``Authorization`` header; every message this module produces (errors and log lines) is passed
through `redact` first, so not even a server that echoes the header can leak it into a report.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import random
import ssl
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, overload

import httpx

from pytest_doceval.errors import SuiteConfigError, SystemRunError
from pytest_doceval.models.config import ModelConfig
from pytest_doceval.models.counts import Wire
from pytest_doceval.models.requests import ChatRequest, ChatResponse
from pytest_doceval.models.retry import RetryPolicy, retry_after_seconds
from pytest_doceval.models.secrets import redact

if TYPE_CHECKING:
    from pytest_doceval.models.embedding_requests import EmbeddingsRequest, EmbeddingsResponse

log = logging.getLogger("pytest_doceval.models")
T = TypeVar("T")
MAX_SERVER_MESSAGE = 500


class ModelError(SystemRunError):
    """A model call that failed for good (after its retries), or an unusable response."""

    def __init__(
        self,
        message: str,
        *,
        model: str,
        case: str = "",
        status: int | None = None,
        server_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.model = model
        self.case = case
        self.status = status
        self.server_message = server_message

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields: the default pickling (cls(*args)) would lose them.
        return (_model_error, (str(self), self.model, self.case, self.status, self.server_message))


def _model_error(
    message: str, model: str, case: str, status: int | None, server_message: str | None
) -> ModelError:
    return ModelError(message, model=model, case=case, status=status, server_message=server_message)


@dataclass
class _Failure:
    what: str
    retry: bool
    status: int | None = None
    server_message: str | None = None
    retry_after: float | None = None


@dataclass
class _LoopState:
    """What must not cross event loops: the HTTP connection pool and the semaphores."""

    http: httpx.AsyncClient
    slots: dict[str, asyncio.Semaphore] = field(default_factory=dict)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from synchronous code, also inside a running event loop (then
    in a helper thread, since a loop cannot be re-entered)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


class ModelClient:
    """Sends `ChatRequest`s to the models of `models` (``{name: ModelConfig}``).

    `concurrency_share` divides every model's ``max_concurrency`` among that many processes
    (xdist workers prefetching the same run), so that together they stay within it.
    """

    def __init__(
        self,
        models: Mapping[str, ModelConfig],
        *,
        retry: RetryPolicy | None = None,
        env: Mapping[str, str] | None = None,
        concurrency_share: int = 1,
        rng: random.Random | None = None,
        trust_env: bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.models = dict(models)
        self.retry = retry or RetryPolicy()
        self._env = env if env is not None else os.environ
        self.concurrency_share = max(1, concurrency_share)
        self._rng = rng or random.Random()
        self._trust_env = trust_env
        self._transport = transport
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )
        self._ssl: ssl.SSLContext | None = None
        self.wire = Wire()  # HTTP attempts on the wire and made (models/counts.py)

    def __repr__(self) -> str:
        return f"ModelClient(models={sorted(self.models)})"

    def config(self, name: str) -> ModelConfig:
        try:
            return self.models[name]
        except KeyError:
            known = ", ".join(sorted(self.models)) or "none"
            raise SuiteConfigError(
                f"no model {name!r} in [tool.doceval.models] of pyproject.toml "
                f"(configured: {known})"
            ) from None

    def concurrency(self, name: str) -> int:
        return max(1, self.config(name).max_concurrency // self.concurrency_share)

    def secrets(self) -> list[str]:
        """The API keys currently in the environment for the configured models."""
        names = {cfg.api_key_env for cfg in self.models.values() if cfg.api_key_env}
        return [self._env[n] for n in sorted(names) if self._env.get(n)]

    def redact(self, text: str) -> str:
        return redact(text, self.secrets())

    def worst_case_seconds(self, name: str) -> float:
        """An upper bound on one `send` of model `name`: every attempt times out and every
        wait is the longest allowed. A peer waiting for this request gives up after it."""
        cfg = self.config(name)
        wait = max(self.retry.cap, self.retry.retry_after_cap)
        return (cfg.max_retries + 1) * cfg.timeout + cfg.max_retries * wait

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            total = sum(self.concurrency(name) for name in self.models) or 1
            limits = httpx.Limits(max_connections=total, max_keepalive_connections=total)
            if self._ssl is None:
                # Loading the CA bundle costs ~50 ms; a client per loop (one per
                # `complete_sync`) shares one context.
                self._ssl = httpx.create_ssl_context(trust_env=self._trust_env)
            http = httpx.AsyncClient(
                limits=limits,
                trust_env=self._trust_env,
                transport=self._transport,
                verify=self._ssl,
            )
            state = self._states[loop] = _LoopState(http)
        return state

    @asynccontextmanager
    async def slot(self, name: str) -> AsyncIterator[None]:
        """Hold one of model `name`'s concurrency slots (in this event loop)."""
        slots = self._state().slots
        if name not in slots:
            slots[name] = asyncio.Semaphore(self.concurrency(name))
        async with slots[name]:
            yield

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send `request` within its model's concurrency limit."""
        async with self.slot(request.model):
            return await self.send(request)

    def complete_sync(self, request: ChatRequest) -> ChatResponse:
        """`complete` for synchronous callers (a test item); uses a loop of its own."""

        async def once() -> ChatResponse:
            try:
                return await self.complete(request)
            finally:
                await self.aclose()

        return run_sync(once())

    async def aclose(self) -> None:
        """Close this event loop's connections (call before the loop ends)."""
        state = self._states.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.http.aclose()

    def _check_key(self, cfg: ModelConfig, request: ChatRequest | EmbeddingsRequest) -> None:
        if cfg.api_key_env is not None and not self._env.get(cfg.api_key_env):
            raise ModelError(
                f"{request.label()}: the environment variable {cfg.api_key_env} (api_key_env) "
                "is not set",
                model=request.model,
                case=request.case,
            )

    def _headers(self, cfg: ModelConfig) -> dict[str, str]:
        # Built at the call and never bound to a name in a frame that can be in a traceback:
        # `pytest --showlocals` prints every local of every frame of a failing test.
        headers = {"Content-Type": "application/json"}
        if cfg.api_key_env is not None:
            headers["Authorization"] = f"Bearer {self._env.get(cfg.api_key_env, '')}"
        return headers

    @overload
    async def send(self, request: ChatRequest) -> ChatResponse: ...

    @overload
    async def send(self, request: EmbeddingsRequest) -> EmbeddingsResponse: ...

    async def send(
        self, request: ChatRequest | EmbeddingsRequest
    ) -> ChatResponse | EmbeddingsResponse:
        """Send `request` now (no concurrency slot taken), retrying as the policy says; an
        `EmbeddingsRequest` goes to the model's ``/embeddings`` the same way."""
        cfg = self.config(request.model)
        self._check_key(cfg, request)
        content = json.dumps(request.body(), ensure_ascii=False).encode("utf-8")
        http = self._state().http
        attempts = cfg.max_retries + 1
        for attempt in range(attempts):
            failure = await self._attempt(http, cfg, content, request)
            if not isinstance(failure, _Failure):
                return failure
            last = attempt == attempts - 1
            if not failure.retry or last:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                detail = f": {failure.server_message}" if failure.server_message else ""
                raise ModelError(
                    self.redact(f"{request.label()}: {failure.what}{tries}{detail}"),
                    model=request.model,
                    case=request.case,
                    status=failure.status,
                    server_message=failure.server_message,
                )
            delay = self.retry.backoff(attempt, self._rng)
            if failure.retry_after is not None:
                delay = min(failure.retry_after, self.retry.retry_after_cap)
            log.warning(
                self.redact(
                    f"{request.label()}: {failure.what}"
                    f"{': ' + failure.server_message if failure.server_message else ''}; "
                    f"retry {attempt + 1}/{cfg.max_retries} in {delay:.3f} s"
                )
            )
            await asyncio.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _attempt(
        self,
        http: httpx.AsyncClient,
        cfg: ModelConfig,
        content: bytes,
        request: ChatRequest | EmbeddingsRequest,
    ) -> ChatResponse | EmbeddingsResponse | _Failure:
        try:
            # The deadline covers connecting, waiting and the whole body: httpx's own timeouts
            # are per read, so a body trickling forever would never trip them.
            with self.wire.attempt(request.model):
                async with asyncio.timeout(cfg.timeout):
                    response = await http.post(
                        request.url,
                        content=content,
                        headers=self._headers(cfg),
                        timeout=cfg.timeout,
                    )
        except (TimeoutError, httpx.TimeoutException):
            what = f"no complete response within the timeout of {cfg.timeout:g} s"
            return _Failure(what, retry=self.retry.retry_timeouts)
        except httpx.TransportError as exc:
            what = self.redact(f"connection error ({type(exc).__name__}: {exc})")
            return _Failure(what, retry=True)
        except Exception as exc:
            # E.g. a key httpx cannot put in a header. Reported, not raised: the frames below
            # hold the request's headers, and a traceback would show them.
            return _Failure(
                self.redact(f"request failed ({type(exc).__name__}: {exc})"), retry=False
            )
        status = response.status_code
        if 200 <= status < 300:
            return self._parse(response, request)
        retry = status == 429 or status >= 500
        retry_after = None
        if status in (429, 503):
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        return _Failure(
            f"HTTP {status}",
            retry=retry,
            status=status,
            # Redacted at once: no frame of a failing test may hold an echoed key.
            server_message=self.redact(server_message(response)),
            retry_after=retry_after,
        )

    def _parse(
        self, response: httpx.Response, request: ChatRequest | EmbeddingsRequest
    ) -> ChatResponse | EmbeddingsResponse:
        if isinstance(request, ChatRequest):
            answer: ChatResponse | EmbeddingsResponse | str = read_answer(response, self.redact)
        else:
            answer = request.read_response(response, self.redact)
        if isinstance(answer, str):
            raise ModelError(
                f"{request.label()}: {answer}",
                model=request.model,
                case=request.case,
                status=response.status_code,
            )
        return answer


def read_answer(response: httpx.Response, redact: Callable[[str], str]) -> ChatResponse | str:
    """The answer in a 2xx `response`, or what is wrong with it. Never raises, so that its
    locals (the body, which may echo the key) never appear in a traceback; what it returns
    has passed through `redact`."""
    try:
        data = response.json()
    except (ValueError, UnicodeDecodeError):
        return redact(f"malformed JSON in the response: {_clip(response.text)!r}")
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        return redact(f"the response has no choices: {_clip(response.text)!r}")
    first = choices[0] if isinstance(choices[0], dict) else {}
    message = first.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # some servers answer in content parts
        texts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
        content = "".join(str(p.get("text", "")) for p in texts)
    finish = first.get("finish_reason")
    if not isinstance(content, str):
        return redact(f"the response's first choice has no text (finish_reason={finish!r})")
    usage, model = data.get("usage"), data.get("model")
    return ChatResponse(
        # A server (or a model) that repeats the key must not carry it into the cache and the
        # report; a real answer never contains the caller's key.
        text=redact(content),
        usage=usage if isinstance(usage, dict) else {},
        finish_reason=finish if isinstance(finish, str) else None,
        model=model if isinstance(model, str) else None,
        source="model",
    )


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SERVER_MESSAGE else text[:MAX_SERVER_MESSAGE] + "..."


def server_message(response: httpx.Response) -> str:
    """The error message an OpenAI-compatible server put in its body, else the body's start."""
    try:
        data = response.json()
    except (ValueError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            return _clip(error if isinstance(error, str) else json.dumps(error))
    text = response.text.strip()
    return _clip(text) if text else response.reason_phrase
