"""Where a system's outputs come from, decided once for every kind: a registered parser (a
two-stage one too), or the outputs it saved where the kind keeps them (a precomputed system).

A kind names its systems (``[suite] systems``) and says where saved outputs would be and how the
user sees that place (`resolve_sources`'s `saved`); the registry says which names are parsers.
A name that is both is the parser (a note says the saved outputs are not read); a name that is
neither is the suite's error, naming both places. What the kind plans is then the source's: a
parser's stages (`systems.staged.parse_stages`) or a saved output's stage
(`engine.saved_output_stage`), and what a row records of a saved output is
`precomputed_fingerprint`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pytest_doceval.errors import SuiteConfigError
from pytest_doceval.files import output_digest
from pytest_doceval.registry import did_you_mean
from pytest_doceval.systems.base import Parser
from pytest_doceval.systems.registry import SystemEnv


@dataclass(frozen=True)
class SavedOutputs:
    """Where a kind keeps a system's saved outputs: whether any exist, and the place as the
    user sees it (``outputs/<name>.md in a case``)."""

    exist: bool
    shown: str


@dataclass(frozen=True)
class Source:
    """One system of a suite: its registered parser, or None for saved outputs."""

    system: str
    parser: Parser | None = None

    @property
    def parsed(self) -> bool:
        return self.parser is not None


def resolve_sources(
    env: SystemEnv,
    systems: Sequence[str],
    saved: Callable[[str], SavedOutputs],
    *,
    reads: str,
    saved_names: Callable[[], Iterable[str]] = tuple,
) -> tuple[dict[str, Source], list[str]]:
    """Each system's `Source`, in order, and notes; a `SuiteConfigError` for a name that is
    neither a registered parser nor has saved outputs. `reads` says what a parser reads
    itself (``parses the PDFs``), for the note on saved outputs it leaves unread;
    `saved_names` lists the systems with saved outputs, asked only to suggest a misspelt name."""
    sources: dict[str, Source] = {}
    notes: list[str] = []
    for name in systems:
        outputs = saved(name)
        if name in env:
            sources[name] = Source(name, env.system(name))
            if outputs.exist:
                notes.append(
                    f"{name} is a registered parser: it {reads} itself, and "
                    f"{outputs.shown} is not read"
                )
            continue
        if not outputs.exist:
            known = env.registry.names()
            hint = did_you_mean(name, [*known, *saved_names()])
            raise SuiteConfigError(
                f"{env.source}: unknown system {name!r}{hint}: not a registered parser (known: "
                f"{', '.join(known)}) and no {outputs.shown} of saved outputs"
            )
        sources[name] = Source(name)
    return sources, notes


def precomputed_fingerprint(system: str, *texts: str, repeats: bool = False) -> dict[str, object]:
    """What a row records of the saved output(s) it scored: the system, that they were saved,
    and the digest of their text (`repeats`: how many there were, for kinds that read
    several)."""
    fingerprint: dict[str, object] = {"system": system, "kind": "precomputed"}
    if repeats:
        fingerprint["repeats"] = len(texts)
    fingerprint["output_sha256"] = output_digest(*texts)
    return fingerprint


# The languages of a suite (``[suite] language``) a parser must read.
SUITE_LANGUAGES: dict[str, tuple[str, ...]] = {"en": ("en",), "ko": ("ko",), "mixed": ("en", "ko")}
LANGUAGE_NAMES = {"en": "English", "ko": "Korean"}


def cannot_read(system: str, parser: object, language: str) -> str | None:
    """Why `parser` (system `system`) cannot read text of a suite in `language`, from what it
    declares (``languages``: what it reads, ``reads``: the same in words), or None."""
    languages = getattr(parser, "languages", None)
    if languages is None:
        return None  # it declares none: any
    missing = [code for code in SUITE_LANGUAGES.get(language, ()) if code not in languages]
    if not missing:
        return None
    names = " or ".join(LANGUAGE_NAMES.get(code, code) for code in missing)
    reads = getattr(parser, "reads", None)
    return f"{system} does not read {names}" + (f" (it reads {reads})" if reads else "")


def unread_language_notes(sources: Iterable[Source], language: str) -> list[str]:
    """A note for each parser of `sources` that cannot read the suite's language: its numbers
    there measure that gap."""
    notes = []
    for source in sources:
        why = cannot_read(source.system, source.parser, language)
        if why is not None:
            notes.append(f"{why}: its numbers on that text measure that gap, not its quality")
    return notes
