"""What a system is: a parser turns a PDF into text or markdown.

A parser is anything with a ``name``, a ``fingerprint()`` and a ``parse(pdf)``. The fingerprint
names everything that changes the output (library versions, settings, model id, prompt hash) and
nothing that does not (timeouts, concurrency, keys): it keys the output cache and is written into
baselines, so a number is always traceable to what produced it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Parser(Protocol):
    """A document parser: ``parse`` returns the document's text (plain or markdown)."""

    name: str

    def fingerprint(self) -> dict[str, Any]: ...

    def parse(self, pdf: Path) -> str: ...


class ParserFactory(Protocol):
    """Builds a parser from the settings of ``[systems.<name>]`` in ``suite.toml``."""

    def __call__(self, settings: Mapping[str, Any]) -> Parser: ...
