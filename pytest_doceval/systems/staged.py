"""A system's parse of one input as engine stages -- the one home of the cached (two-stage)
parse, used by every kind that parses (documents: a PDF; facts: a page of a PDF).

A parser's output is keyed by ``cache_key(fingerprint, input digest)``; a two-stage system's by
``cache_key(its fingerprint, stage 1's key)``, so its stage 1 is the very parse the parser gets
when evaluated alone (one run, one cache entry). The keys are the output cache's keys of
before the engine: cached outputs and baselines' cache keys stay valid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_doceval.engine import CpuStage, ModelStage, Stage
from pytest_doceval.store import cache_key
from pytest_doceval.systems.base import Parser, RefiningParser, run_system


def parse_file(system: str, parser: Parser, pdf: Path) -> str:
    """A CPU stage's call: `parser` on `pdf` (in a worker process, or a thread)."""
    return run_system(system, pdf, lambda: parser.parse(pdf))


def refine_text(system: str, parser: RefiningParser, what: str, case: str, text: str) -> str:
    """A CPU stage's call: a two-stage system's second stage on its stage 1's `text`."""
    return run_system(system, what, lambda: parser.refine(text, case=case))


def parse_stages(
    system: str,
    lookup: Callable[[str], Parser],
    *,
    input_digest: str,
    call: Callable[..., str],
    args: tuple[Any, ...],
    what: str,
    case: str,
) -> list[Stage]:
    """The stages of `system`'s output for one input: ``call(system, parser, *args)`` for a
    parser, and for a two-stage system its stage 1's stages then a model stage. `what` names
    the input in messages; `case` is what model requests are made for."""
    parser = lookup(system)
    if isinstance(parser, RefiningParser):
        first = parse_stages(
            parser.stage1,
            lookup,
            input_digest=input_digest,
            call=call,
            args=args,
            what=what,
            case=case,
        )
        fingerprint = parser.fingerprint()
        key = cache_key(fingerprint, first[-1].key)
        if not (hasattr(parser, "combine") and hasattr(parser, "model")):
            second = CpuStage(
                key=key,
                label=f"{system} on {what}",
                call=refine_text,
                args=(system, parser, what, case),
                needs=(first[-1].key,),
                fingerprint=fingerprint,
                portable=False,  # its refine may reach models or state of this process
                system=system,
            )
            return [*first, second]
        model = parser.model()  # SystemUnavailable (no model configured): the test skips
        refining: Any = parser

        def build(inputs: Sequence[Any]) -> Sequence[Any]:
            requests: Sequence[Any] = refining.requests(inputs[0], case=case)
            return requests

        def read(answers: Sequence[str]) -> str:
            return str(refining.combine(answers, case=case))

        return [
            *first,
            ModelStage(
                key=key,
                label=f"{system} (model {model.name!r}) on {what}",
                model=model.name,
                build=build,
                read=read,
                needs=(first[-1].key,),
                fingerprint=fingerprint,
                system=system,
            ),
        ]
    fingerprint = parser.fingerprint()
    return [
        CpuStage(
            key=cache_key(fingerprint, input_digest),
            label=f"{system} on {what}",
            call=call,
            args=(system, parser, *args),
            fingerprint=fingerprint,
            portable=_importable(parser),
            # The files it reads (its path arguments): a failure names the test's own.
            inputs=tuple(arg for arg in args if isinstance(arg, Path)),
            system=system,
        )
    ]


def _importable(parser: Parser) -> bool:
    """Whether a worker process can rebuild `parser` (a built-in one; a user's parser may be
    defined in a conftest.py, which another process cannot import by name)."""
    return type(parser).__module__.startswith("pytest_doceval.")
