"""The extraction kind's inputs and its LLM extractor: reading JSON from files and answers, and
the versioned prompt sent with the schema through ``response_format``.

**Reading a prediction** (`read_prediction`) never raises: a saved output or a model answer that
is empty, is not UTF-8 or is not JSON (``NaN`` and ``Infinity`` included, which Python's parser
would accept) is read as *no prediction* (``null``) and says why. The kind then scores it as an
empty prediction -- every gold field unfound, every gold entry missing -- with ``json_valid``
0: an extractor that emitted broken JSON failed on that page, and leaving the page out would
flatter it exactly where seed 003 looks (raw OCR). A value nested more than `MAX_DEPTH` levels
deep is read the same way. One fenced block (```` ```json ````) is
unwrapped first, as the two-stage parsers do. The truth, in contrast, must read
(`read_truth`): a broken ``truth.json`` is an error of the test naming the file and the place.

**The LLM extractor** sends one request per (page, variant): a system prompt, then the task
(entries or fields), the suite's ``instructions``, the JSON Schema and the page's OCR text, at
temperature 0. The schema also goes into ``response_format`` (``json_schema``, the default when
there is one), or ``{"type": "json_object"}``, or nothing (``none``: the model's configured
``extra`` applies). Everything that changes the answer -- prompt version, texts, schema, format --
is hashed into the request's ``prompt_version`` and the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from pytest_doceval.engine import ModelStage
from pytest_doceval.errors import CaseInputError, SuiteConfigError, SystemRunError
from pytest_doceval.files import output_digest
from pytest_doceval.store import cache_key
from pytest_doceval.systems.two_stage import unfence

if TYPE_CHECKING:
    from pytest_doceval.models.requests import ChatRequest
    from pytest_doceval.models.runtime import ModelHandle

PROMPT_VERSION: Final = "extract-v1"
SYSTEM_PROMPT: Final = (
    "You extract structured data from the OCR text of one document page. The text may contain "
    "OCR errors and broken lines. Answer with one JSON value and nothing else: no prose, no code "
    "fences. Copy names and values as the page writes them, correcting only obvious OCR "
    "character errors, and never add a value the page does not show."
)
ENTRIES_TASK: Final = (
    "The page lists entries. Extract every complete entry, in page order, as {shape}. Leave "
    "out an entry that is cut off at the top or the bottom of the page."
)
FIELDS_TASK: Final = (
    "Extract the fields the JSON Schema below describes. Use null for a field the page does "
    "not show."
)
USER_TEMPLATE: Final = (
    "{task}{instructions}\n\nJSON Schema of the answer:\n{schema}\n\n"
    "OCR text of the page:\n<<<\n{text}\n>>>"
)
FORMATS: Final = ("json_schema", "json_object", "none")
ResponseFormat = Literal["json_schema", "json_object", "none"]
SETTINGS: Final = frozenset({"instructions", "response_format", "max_tokens"})
# No extraction nests this deep; past it the metrics' tree walks and jsonschema's recursion
# would fail, so a deeper prediction is read as no prediction.
MAX_DEPTH: Final = 100


@dataclass(frozen=True)
class Prediction:
    """A prediction as read: the JSON value (None when there was none) and, when it could not
    be read, why."""

    value: Any
    problem: str | None = None

    @property
    def valid(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class Answer:
    """An extractor's answer for one (page, variant), as its plan's stage reads it: the
    prediction, where it came from (for notes) and the fingerprint of what made it (the row's)."""

    prediction: Prediction
    source: str
    fingerprint: Mapping[str, Any]


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str) -> Any:
    """Strict JSON: a `ValueError` (with line and column for syntax errors) for anything RFC
    8259 does not allow, ``NaN`` and too deep nesting included."""
    try:
        return json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def depth(value: Any) -> int:
    """How many lists and objects deep `value` nests (0 for a scalar, 1 for ``[1]``), without
    recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, level + 1) for child in children)
    return deepest


def read_prediction(data: bytes | str) -> Prediction:
    """A saved output's bytes or a model's answer, read as described in the module docstring."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Prediction(None, f"not UTF-8 (byte 0x{data[exc.start]:02x} at {exc.start})")
    text = unfence(data.removeprefix("\ufeff"))
    if not text.strip():
        return Prediction(None, "empty")
    try:
        value = parse_json(text)
    except ValueError as exc:
        return Prediction(None, f"not JSON ({exc})")
    if depth(value) > MAX_DEPTH:
        return Prediction(None, f"nested more than {MAX_DEPTH} levels deep")
    return Prediction(value)


def read_saved_answer(path: Path, extractor: str, source: str) -> Answer:
    """A precomputed extractor's saved output (`source` as the notes show it), read as bytes:
    one that is not UTF-8 is no prediction, not an error. Module-level: a stage's call."""
    try:
        data = path.read_bytes()
    except OSError as exc:  # removed or made unreadable since it was planned
        what = f"precomputed output of {extractor}"
        raise CaseInputError(f"{path}: {what} cannot be read ({exc.strerror or exc})") from None
    digest = output_digest(data)
    fingerprint = {"extractor": extractor, "kind": "precomputed", "output_sha256": digest}
    return Answer(read_prediction(data), source, fingerprint)


def read_json_file(path: Path, what: str, error: type[CaseInputError | SuiteConfigError]) -> Any:
    """A JSON file that must read (a truth, a schema), or `error` naming it and the cause."""
    if not path.is_file():
        raise error(f"{path}: missing {what}")
    try:
        return parse_json(path.read_bytes().decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {what} is not UTF-8 (offset {exc.start})") from None
    except ValueError as exc:
        raise error(f"{path}: {what} is not JSON: {exc}") from None


def read_truth(path: Path) -> Any:
    return read_json_file(path, "truth file", CaseInputError)


def entries_schema(list_key: str | None, name: str, set_key: str) -> dict[str, Any]:
    """The JSON Schema an entries answer follows, when the suite has no ``schema.json``."""
    entry = {
        "type": "object",
        "properties": {
            name: {"type": "string"},
            set_key: {"type": "array", "items": {"type": ["string", "integer"]}},
        },
        "required": [name, set_key],
    }
    entries: dict[str, Any] = {"type": "array", "items": entry}
    if list_key is None:
        return entries
    return {"type": "object", "properties": {list_key: entries}, "required": [list_key]}


def entries_shape(list_key: str | None, name: str, set_key: str) -> str:
    items = f'objects with "{name}" (a string) and "{set_key}" (a list)'
    if list_key is None:
        return f"a JSON list of {items}"
    return f'a JSON object whose key "{list_key}" holds a list of {items}'


@dataclass(frozen=True)
class LLMExtractor:
    """A configured model used as an extractor, with its prompt fixed for the suite."""

    name: str
    model: ModelHandle
    task: str
    schema: Mapping[str, Any] | None
    instructions: str
    response_format: ResponseFormat
    max_tokens: int | None

    @classmethod
    def build(
        cls,
        name: str,
        model: ModelHandle,
        settings: Mapping[str, Any],
        *,
        task: str,
        schema: Mapping[str, Any] | None,
        where: str,
    ) -> LLMExtractor:
        """`settings` is the extractor's ``[systems.NAME]`` table; bad keys are errors."""
        unknown = sorted(set(settings) - SETTINGS)
        if unknown:
            raise SuiteConfigError(
                f"{where}: [systems.{name}]: unknown key(s) {', '.join(unknown)}; "
                f"allowed for an LLM extractor: {', '.join(sorted(SETTINGS))}"
            )
        instructions = settings.get("instructions", "")
        fmt = settings.get("response_format", "json_schema" if schema else "json_object")
        max_tokens = settings.get("max_tokens")
        if not isinstance(instructions, str):
            raise SuiteConfigError(f"{where}: [systems.{name}] instructions must be a string")
        if fmt not in FORMATS or (fmt == "json_schema" and schema is None):
            raise SuiteConfigError(
                f"{where}: [systems.{name}] response_format must be one of {', '.join(FORMATS)} "
                "(json_schema needs the suite's schema.json)"
            )
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise SuiteConfigError(f"{where}: [systems.{name}] max_tokens must be an integer >= 1")
        return cls(name, model, task, schema, instructions.strip(), fmt, max_tokens)

    def _schema_text(self) -> str:
        return "{}" if self.schema is None else json.dumps(self.schema, sort_keys=True)

    @property
    def prompt_hash(self) -> str:
        """What the answer depends on besides the model and the page: prompt and format."""
        parts = [PROMPT_VERSION, SYSTEM_PROMPT, USER_TEMPLATE, self.task, self.instructions]
        parts += [self._schema_text(), self.response_format]
        return hashlib.sha256("\n\x00".join(parts).encode("utf-8")).hexdigest()[:16]

    def fingerprint(self) -> dict[str, Any]:
        return {
            "extractor": self.name,
            "kind": "llm",
            "model": self.model.fingerprint(),
            "prompt": self.prompt_hash,
            "response_format": self.response_format,
            "max_tokens": self.model.max_tokens(self.max_tokens, None),
        }

    def _overrides(self) -> dict[str, Any]:
        out: dict[str, Any] = {"temperature": 0.0}
        max_tokens = self.model.max_tokens(self.max_tokens, None)  # the model's first
        if max_tokens is not None:
            out["max_tokens"] = max_tokens
        if self.response_format == "json_object":
            out["response_format"] = {"type": "json_object"}
        elif self.response_format == "json_schema":
            schema = {"name": "extraction", "schema": self.schema}
            out["response_format"] = {"type": "json_schema", "json_schema": schema}
        return out

    def request(self, text: str, *, case: str) -> ChatRequest:
        """The one request for a page's OCR `text` (the prefetch builds the same one)."""
        from pytest_doceval.models.requests import message

        instructions = f"\n{self.instructions}" if self.instructions else ""
        user = USER_TEMPLATE.format(
            task=self.task, instructions=instructions, schema=self._schema_text(), text=text
        )
        return self.model.request(
            [message("system", SYSTEM_PROMPT), message("user", user)],
            case=case,
            prompt_version=self.prompt_hash,
            **self._overrides(),
        )

    def stage(self, text: str, *, case: str) -> ModelStage:
        """The request for `text` as an engine stage; its output is the read `Answer` (a
        `ModelError` when the call failed, a `SystemRunError` for an empty answer: never
        scored as an empty prediction). Its key: the fingerprint and the text's digest."""
        request = self.request(text, case=case)
        key = cache_key(self.fingerprint(), hashlib.sha256(text.encode("utf-8")).hexdigest())
        label = f"{self.name} (model {self.model.name!r}) on {case}"
        return ModelStage(key, label, self.model.name, lambda _: [request], self._reader(case))

    def _reader(self, case: str) -> Callable[[Sequence[Any]], Answer]:
        source, fingerprint = f"model {self.model.name!r}'s answer", self.fingerprint()

        def read(answers: Sequence[Any]) -> Answer:
            answer = str(answers[0])
            if not answer.strip():
                raise SystemRunError(
                    f"model {self.model.name!r} answered with nothing for {case!r}"
                )
            return Answer(read_prediction(answer), source, fingerprint)

        return read
