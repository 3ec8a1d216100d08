"""Chat requests and responses, and the key a response is cached under.

A request is plain data (builtin types, picklable, so it crosses to xdist workers): the model's
endpoint and id, the messages, the generation settings and the prompt's version. Its cache key
is a SHA-256 over exactly those -- everything that changes the answer -- and over nothing that
does not (timeouts, concurrency, retries, the API key, the case it was made for).

Messages use the OpenAI shapes, except that an image is written as
``{"type": "image", "png": <bytes>}`` (see `image_part`): the key holds the image's SHA-256 and
length instead of its bytes, and the wire form is a base64 ``data:image/png`` URL of the very
same bytes -- images are never re-encoded or resized.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from pytest_doceval.models.config import GENERATION_KEYS, RESERVED_BODY_FIELDS, ModelConfig

KEY_SCHEMA = "doceval-chat/1"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

Message = dict[str, Any]
Source = Literal["model", "cache", "peer"]


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(png: bytes) -> dict[str, Any]:
    """An image content part: the PNG's bytes exactly as they will be sent."""
    if not isinstance(png, bytes | bytearray) or not bytes(png).startswith(PNG_SIGNATURE):
        raise ValueError("image_part expects the bytes of a PNG file")
    return {"type": "image", "png": bytes(png)}


def message(role: str, *parts: str | dict[str, Any]) -> Message:
    """A message; a single string part stays a plain string content, as APIs prefer."""
    if len(parts) == 1 and isinstance(parts[0], str):
        return {"role": role, "content": parts[0]}
    return {
        "role": role,
        "content": [text_part(p) if isinstance(p, str) else p for p in parts],
    }


def _map_images(messages: Sequence[Message], image: Any) -> list[Message]:
    """`messages` with every image part replaced by ``image(png_bytes)``."""
    out: list[Message] = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list):
            parts = [
                image(part["png"])
                if isinstance(part, dict) and part.get("type") == "image"
                else part
                for part in content
            ]
            msg = {**msg, "content": parts}
        out.append(msg)
    return out


def _image_key(png: bytes) -> dict[str, Any]:
    return {"type": "image", "sha256": hashlib.sha256(png).hexdigest(), "bytes": len(png)}


def _image_wire(png: bytes) -> dict[str, Any]:
    url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url}}


def canonical_json(data: Any) -> str:
    """One spelling per value: the text a digest is taken over."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to ask of the model configured as `model`.

    Build it with `ChatRequest.build` from the model's `ModelConfig`, so that the endpoint,
    model id and generation settings the key covers are the ones the request is sent with.
    `case` only labels errors; it is not part of the key (two tests asking the same thing share
    one answer).
    """

    model: str
    base_url: str
    model_id: str
    messages: tuple[Message, ...] = field(hash=False)
    generation: dict[str, Any] = field(hash=False)
    prompt_version: str = ""
    case: str = field(default="", compare=False)

    @classmethod
    def build(
        cls,
        config: ModelConfig,
        messages: Sequence[Message],
        *,
        prompt_version: str = "",
        case: str = "",
        **overrides: Any,
    ) -> ChatRequest:
        """A request to `config`; `overrides` replace generation settings (``max_tokens=10``)."""
        clashes = sorted(set(overrides) & (RESERVED_BODY_FIELDS - GENERATION_KEYS))
        if clashes:
            raise ValueError(f"cannot override {', '.join(clashes)} of a chat request")
        generation = config.generation()
        generation.update(overrides)
        generation = {k: v for k, v in generation.items() if v is not None}
        for msg in messages:
            if not isinstance(msg, dict) or "role" not in msg:
                raise ValueError(f"a message is a dict with a role, not {msg!r}")
        return cls(
            model=config.name,
            base_url=config.base_url,
            model_id=config.model,
            messages=tuple(messages),
            generation=generation,
            prompt_version=prompt_version,
            case=case,
        )

    def key_payload(self) -> dict[str, Any]:
        """What the key is a digest of (also stored beside the cached response, for humans)."""
        return {
            "schema": KEY_SCHEMA,
            "base_url": self.base_url,
            "model": self.model_id,
            "messages": _map_images(self.messages, _image_key),
            "generation": self.generation,
            "prompt_version": self.prompt_version,
        }

    @cached_property
    def _key(self) -> str:
        return hashlib.sha256(canonical_json(self.key_payload()).encode("utf-8")).hexdigest()

    def cache_key(self) -> str:
        return self._key

    @property
    def url(self) -> str:
        """Where it is sent: the endpoint its key names (the configuration supplies only what
        does not change the answer -- timeout, retries, concurrency, the key)."""
        return f"{self.base_url}/chat/completions"

    def body(self) -> dict[str, Any]:
        """The JSON body POSTed to ``/chat/completions``."""
        return {
            "model": self.model_id,
            "messages": _map_images(self.messages, _image_wire),
            **self.generation,
        }

    def label(self) -> str:
        """How errors name the request: the configured model and the case."""
        case = f", case {self.case!r}" if self.case else ""
        return f"model {self.model!r} ({self.model_id} at {self.base_url}){case}"


@dataclass(frozen=True)
class ChatResponse:
    """A model's answer. `source` says where this copy came from: the model itself, the cache,
    or another process that sent the request (xdist); it is not stored."""

    text: str
    usage: dict[str, Any] = field(default_factory=dict, hash=False)
    finish_reason: str | None = None
    model: str | None = None
    source: Source = field(default="model", compare=False)

    def to_payload(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "usage": self.usage,
            "finish_reason": self.finish_reason,
            "model": self.model,
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], *, source: Source) -> ChatResponse:
        """The response stored as `payload`; `ValueError` if it is not one."""
        text, usage = payload.get("text"), payload.get("usage", {})
        finish, model = payload.get("finish_reason"), payload.get("model")
        if not isinstance(text, str) or not isinstance(usage, dict):
            raise ValueError("not a chat response payload")
        if not (finish is None or isinstance(finish, str)) or not (
            model is None or isinstance(model, str)
        ):
            raise ValueError("not a chat response payload")
        return cls(text=text, usage=usage, finish_reason=finish, model=model, source=source)
