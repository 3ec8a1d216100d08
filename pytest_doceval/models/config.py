"""``[tool.doceval.models.NAME]``: where a model is served and how it is asked.

A model's table is checked like every other table a user writes: unknown keys and values of the
wrong type are errors naming the file and the key, because a typo (``temprature = 0``) must not
silently keep a default and change every answer.

The API key is never part of the configuration: only the *name* of the environment variable
holding it is, and the client reads the variable when it sends a request.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_doceval.errors import SuiteConfigError

# Body fields the client writes itself; `extra` may not override them (a second spelling of
# `temperature` would make the key and the request disagree).
GENERATION_KEYS = frozenset({"temperature", "max_tokens", "top_p"})
RESERVED_BODY_FIELDS = frozenset({"model", "messages", "stream", "n"}) | GENERATION_KEYS
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class ModelConfig:
    """One configured model endpoint (OpenAI-compatible ``/v1/chat/completions``).

    ``base_url`` is the API root including its version segment, as OpenAI clients take it
    (``http://localhost:8000/v1``); requests go to ``{base_url}/chat/completions``.
    ``timeout`` bounds one attempt, from connecting to the last byte of the body.
    """

    name: str
    base_url: str
    model: str
    api_key_env: str | None = None
    max_concurrency: int = 4
    timeout: float = 120.0
    max_retries: int = 4
    temperature: float = 0.0
    max_tokens: int | None = None
    top_p: float | None = None
    # US dollars per million input / output tokens: what a row's ``usd_per_1000`` is priced at
    # (they change no answer, so no request key holds them).
    price_in: float | None = None
    price_out: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, hash=False)

    @classmethod
    def from_table(cls, name: str, table: Mapping[str, Any], *, source: Path | str) -> ModelConfig:
        """Check and build ``[tool.doceval.models.<name>]`` read from `source`."""
        where = f"{source}: [tool.doceval.models.{name}]"
        if not isinstance(table, Mapping):
            raise SuiteConfigError(f"{where} must be a table")
        allowed = set(cls.__dataclass_fields__) - {"name"}
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise SuiteConfigError(
                f"{where}: unknown key(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(sorted(allowed))}"
            )
        for required in ("base_url", "model"):
            if required not in table:
                raise SuiteConfigError(f"{where}: missing key {required}")
        check = _Checker(where, table)
        base_url = check.string("base_url")
        if not base_url.startswith(("http://", "https://")):
            raise SuiteConfigError(f"{where}: base_url must start with http:// or https://")
        api_key_env = check.optional_string("api_key_env")
        if api_key_env is not None and not _ENV_NAME.match(api_key_env):
            raise SuiteConfigError(
                f"{where}: api_key_env must name an environment variable (the key itself "
                "belongs in the environment, never in pyproject.toml)"
            )
        extra = table.get("extra", {})
        if not isinstance(extra, Mapping):
            raise SuiteConfigError(f"{where}: extra must be a table of request fields")
        clashes = sorted(set(extra) & RESERVED_BODY_FIELDS)
        if clashes:
            raise SuiteConfigError(
                f"{where}: extra may not set {', '.join(clashes)} (use the key of that name, or "
                "nothing for fields the client writes itself)"
            )
        return cls(
            name=name,
            base_url=base_url.rstrip("/"),
            model=check.string("model"),
            api_key_env=api_key_env,
            max_concurrency=check.integer("max_concurrency", cls.max_concurrency, minimum=1),
            timeout=check.number("timeout", cls.timeout, positive=True),
            max_retries=check.integer("max_retries", cls.max_retries, minimum=0),
            temperature=check.number("temperature", cls.temperature),
            max_tokens=check.optional_integer("max_tokens"),
            top_p=check.optional_number("top_p"),
            price_in=check.optional_number("price_in"),
            price_out=check.optional_number("price_out"),
            extra=dict(extra),
        )

    def generation(self) -> dict[str, Any]:
        """The body fields besides ``model`` and ``messages``: all of them change the output."""
        fields: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens is not None:
            fields["max_tokens"] = self.max_tokens
        if self.top_p is not None:
            fields["top_p"] = self.top_p
        fields.update(self.extra)
        return fields

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"


class _Checker:
    """Type checks for one table, each error naming the file, the table and the key."""

    def __init__(self, where: str, table: Mapping[str, Any]) -> None:
        self.where = where
        self.table = table

    def _fail(self, key: str, expected: str) -> SuiteConfigError:
        return SuiteConfigError(f"{self.where}: {key} must be {expected}, not {self.table[key]!r}")

    def string(self, key: str) -> str:
        value = self.table[key]
        if not isinstance(value, str) or not value.strip():
            raise self._fail(key, "a non-empty string")
        return value

    def optional_string(self, key: str) -> str | None:
        return None if key not in self.table else self.string(key)

    def integer(self, key: str, default: int, *, minimum: int) -> int:
        if key not in self.table:
            return default
        value = self.table[key]
        # bool is an int subclass; `max_concurrency = true` is a typo, not 1.
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self._fail(key, f"an integer >= {minimum}")
        return value

    def optional_integer(self, key: str) -> int | None:
        return None if key not in self.table else self.integer(key, 0, minimum=1)

    def number(self, key: str, default: float, *, positive: bool = False) -> float:
        if key not in self.table:
            return default
        value = self.table[key]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise self._fail(key, "a positive number" if positive else "a number >= 0")
        return float(value)

    def optional_number(self, key: str) -> float | None:
        return None if key not in self.table else self.number(key, 0.0)


def models_from_tool_table(
    doceval: Mapping[str, Any], *, source: Path | str
) -> dict[str, ModelConfig]:
    """The models of an already parsed ``[tool.doceval]`` table."""
    models = doceval.get("models", {})
    if not isinstance(models, Mapping):
        raise SuiteConfigError(f"{source}: [tool.doceval.models] must be a table of models")
    return {
        name: ModelConfig.from_table(name, table, source=source)
        for name, table in sorted(models.items())
    }


def load_models(pyproject_path: Path) -> dict[str, ModelConfig]:
    """Every ``[tool.doceval.models.NAME]`` of `pyproject_path` (none if the file is absent)."""
    if not pyproject_path.is_file():
        return {}
    try:
        data = tomllib.loads(pyproject_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SuiteConfigError(f"{pyproject_path}: {exc}") from exc
    tool = data.get("tool", {})
    doceval = tool.get("doceval", {}) if isinstance(tool, dict) else {}
    if not isinstance(doceval, dict):
        raise SuiteConfigError(f"{pyproject_path}: [tool.doceval] must be a table")
    return models_from_tool_table(doceval, source=pyproject_path)
