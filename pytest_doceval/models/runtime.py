"""The models of one run: configurations, a lazily started hub, and handles for systems.

Systems reach a model through `ModelHandle` (``env.model(name)``); the engine's model stages
reach the hub (`ModelRuntime.hub`) directly, so requests go out concurrently while the tests
consume their answers. Nothing here starts a thread or imports
httpx until a model is actually asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.models.counts import SENT

if TYPE_CHECKING:
    from pytest_doceval.models.config import ModelConfig
    from pytest_doceval.models.hub import Hub
    from pytest_doceval.models.requests import ChatRequest, Message
    from pytest_doceval.store import Store


@dataclass(frozen=True)
class ModelHandle:
    """One configured model as a system sees it: build requests, get answers (cached)."""

    config: ModelConfig
    runtime: ModelRuntime

    @property
    def name(self) -> str:
        return self.config.name

    def fingerprint(self) -> dict[str, Any]:
        """What about the model changes its answers (never the key or the timeout)."""
        return {"model": self.config.model, "base_url": self.config.base_url}

    def max_tokens(self, system: int | None, default: int | None) -> int | None:
        """The answer budget of a request: the model's own ``max_tokens`` (its
        ``[tool.doceval.models.NAME]`` table) first, then the system's setting, then the
        kind's default (None: the server's). The one home of this rule."""
        for value in (self.config.max_tokens, system, default):
            if value:
                return value
        return None

    def request(
        self, messages: Sequence[Message], *, case: str, prompt_version: str, **overrides: Any
    ) -> ChatRequest:
        from pytest_doceval.models.requests import ChatRequest

        return ChatRequest.build(
            self.config, messages, prompt_version=prompt_version, case=case, **overrides
        )

    def complete(self, request: ChatRequest) -> str:
        """The answer's text; a `ModelError` (naming model, case and the server's message)
        when the call failed after its retries: never an empty answer in its place."""
        return self.runtime.hub().complete_sync(request).text


class ModelRuntime:
    def __init__(
        self,
        configs: Mapping[str, ModelConfig],
        *,
        store: Store | None = None,
        workers: int,
        source: str,
    ) -> None:
        self.configs = dict(configs)
        from pytest_doceval.store import Store

        # Responses live in the run's one store; without one, nothing is kept.
        self.store = store if store is not None else Store(None, "off")
        self.workers = workers
        self.source = source
        self._hub: Hub | None = None

    def handle(self, name: str) -> ModelHandle:
        config = self.configs.get(name)
        if config is None:
            known = ", ".join(sorted(self.configs)) or "none configured"
            raise SuiteConfigError(
                f"model {name!r} is not configured: add [tool.doceval.models.{name}] with "
                f"base_url and model to {self.source} (configured: {known})"
            )
        return ModelHandle(config, self)

    def hub(self) -> Hub:
        if self._hub is None:
            from pytest_doceval.models.client import ModelClient
            from pytest_doceval.models.hub import Hub

            client = ModelClient(self.configs, concurrency_share=self.workers)
            self._hub = Hub(client, self.store)
        return self._hub

    def request_counts(self) -> dict[str, int]:
        """Distinct requests of this process by where their answer came from (``model``,
        ``cache``, ``peer``) or ``failed``, and the HTTP attempts ``sent``
        (models/counts.py); empty when no model was asked."""
        if self._hub is None:
            return {}
        return {**self._hub.counts, SENT: self._hub.client.wire.sent()}

    def on_wire(self) -> dict[str, int]:
        """HTTP attempts on the wire now, per model."""
        return {} if self._hub is None else self._hub.client.wire.in_flight()

    def close(self) -> None:
        if self._hub is not None:
            self._hub.close()
