"""Stages as data: what produces a test's output, declared before anything runs.

A `CpuStage` is a picklable call (a parser on a PDF, an OCR of a page) run on the engine's
executor; a `ModelStage` builds its requests (chat, or embeddings) from its inputs' outputs and
reads the answers. Both name the stages they need (`needs`, by key) and carry their content `key`: a
SHA-256 over everything that changes the output (input bytes or upstream keys, the system's
fingerprint, prompt, generation settings) and nothing else (timeouts, concurrency, API keys).
Two tests needing the same key share one run of the stage.

A stage whose `fingerprint` is not None has its output kept in the run's store under `key`,
exactly as the cache keyed it before the engine existed, so baselines' cache keys do not move.
How it is kept is the stage's `codec` (text by default; a score is a `CaseResult`, a page count
JSON): the engine stores and reads every kind of output itself, so no kind writes beside it.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_doceval.metrics.cost import StageCost
from pytest_doceval.store import TEXT, Codec


@dataclass(frozen=True)
class CpuStage:
    """``call(*args, *outputs_of(needs))`` on the executor; `portable` says the call may
    cross to another process (a function importable by name there: a parser defined in a
    conftest is not, and runs on a thread of this process instead)."""

    key: str
    label: str
    call: Callable[..., Any]
    args: tuple[Any, ...] = ()
    needs: tuple[str, ...] = ()
    fingerprint: Mapping[str, Any] | None = None
    portable: bool = True
    # A stage that scores an output (embedding it for a metric) rather than making it: its
    # cost is the evaluation's, not the system's (`Engine.cost` leaves it out).
    scoring: bool = False
    # Work that costs the system nothing (reading an output it saved earlier, drawing a random
    # answer): run in the thread of the test that asks for it (at planning when another stage
    # needs it), never queued behind parsing; no cost is reported for it, and progress lines
    # do not count it.
    free: bool = False
    saved_file: Path | None = None  # the saved output it reads (`engine.plan.saved_output_stage`)
    # How its output is kept in the store (when it has a fingerprint).
    codec: Codec[Any] = TEXT
    # Stages of one group (a suite's scores) whose placement is measured: they run in the
    # thread of the test asking for them until what they cost says the executor is worth the
    # hand-off (`engine.placement`).
    measured: str | None = None
    # The files it reads, as this stage names them: a test sharing the stage of another test
    # (byte-identical inputs in two cases) is told of its own file when it fails.
    inputs: tuple[Path, ...] = ()
    # The test's own verdict (its score, `run.score_stage`): what it raises is the test's error
    # as raised (a kind's input error, a skip), not a stage failure of the test.
    verdict: bool = False
    system: str | None = None  # the system whose output it makes (a parse)


def answer_text(response: Any) -> str:
    """What a chat request's `ModelStage.read` gets of each response: its text."""
    text: str = response.text
    return text


@dataclass(frozen=True)
class ModelStage:
    """``read(answers)`` of the requests ``build(outputs_of(needs))`` sends to `model`, each
    answer being ``answer(response)`` (a chat response's text by default; an embeddings
    stage's requests are `EmbeddingsRequest`s and it takes their vectors). ``build`` and
    ``read`` run in this process (they are cheap)."""

    key: str
    label: str
    model: str
    build: Callable[[Sequence[Any]], Sequence[Any]]
    read: Callable[[Sequence[Any]], Any]
    needs: tuple[str, ...] = ()
    fingerprint: Mapping[str, Any] | None = None
    answer: Callable[[Any], Any] = answer_text
    scoring: bool = False  # as `CpuStage.scoring`
    codec: Codec[Any] = TEXT  # as `CpuStage.codec`
    inputs: tuple[Path, ...] = ()  # as `CpuStage.inputs`
    system: str | None = None  # as `CpuStage.system`


Stage = CpuStage | ModelStage


class StaysHome(Exception):
    """Raised by a stage's call in a process it cannot run in (its code does not travel
    there: a kind or system only the pytest session knows): the engine runs it in the test's
    own process instead."""


@dataclass(frozen=True)
class StageInfo:
    """What scoring may know of the stage that made a result (its key and fingerprint say which
    output was scored; `saved_file` the file a saved output was read from, `system` the system
    that made it): a stage without its call, cheap to send to another process."""

    key: str
    label: str
    fingerprint: Mapping[str, Any] | None = None
    saved_file: Path | None = None
    system: str | None = None  # the system whose output it is (a parse)


def info_of(stage: Stage) -> StageInfo:
    saved = stage.saved_file if isinstance(stage, CpuStage) else None
    return StageInfo(stage.key, stage.label, stage.fingerprint, saved, stage.system)


def chat_stage(
    model: Any, prompt: str | Sequence[Any], *, case: str, prompt_version: str, label: str
) -> ModelStage:
    """One chat request to `model` (a handle, ``SystemEnv.model(name)``) as a stage whose
    output is the answer's text. `prompt` is the user's text or a list of messages
    (`pytest_doceval.models.requests.message`). Its key is the request's: the model, the
    messages and the generation settings; the model hub keeps the response in the run's store."""
    from pytest_doceval.models.requests import message

    messages = [message("user", prompt)] if isinstance(prompt, str) else list(prompt)
    request = model.request(messages, case=case, prompt_version=prompt_version)
    return ModelStage(
        key=request.cache_key(),
        label=label,
        model=model.name,
        build=lambda _: [request],
        read=lambda answers: answers[0],
    )


# How a stage's CPU time is read where it runs. A thread shares its process with others (the
# model hub, other stages), so by default only its own thread's CPU time counts; a pool
# process runs one stage at a time, so there the whole process's CPU time counts -- including
# the threads a library starts for itself (onnxruntime's, under RapidOCR) and the programs it
# runs and waits for (Tesseract). Wall time would count waiting for a core as work: under load
# or ``-n 2`` it doubled the figure.
_cpu_clock: Callable[[], float] = time.thread_time
# Peak memory is measured only where a process runs one stage at a time (`count_whole_process`):
# a thread's stage shares its process's memory with everything else running there.
_whole_process = False
_child_peak_kib = 0
_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def _process_and_children_time() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def count_whole_process() -> None:
    """Called by a process that runs one stage at a time (a process pool's worker): count the
    CPU time of all its threads and of the programs it waits for, and measure each stage's
    peak memory."""
    global _cpu_clock, _whole_process
    _cpu_clock = _process_and_children_time
    _whole_process = True


def child_finished(peak_rss_kib: int) -> None:
    """A parser that ran a program and waited for it (``os.wait4``) reports the program's peak
    resident memory in KiB: a stage's peak is its own process's or its children's, the larger."""
    global _child_peak_kib
    _child_peak_kib = max(_child_peak_kib, peak_rss_kib)


def _reset_peak() -> bool:
    """Reset this process's peak resident memory (VmHWM) to its current size (Linux: writing
    5 to ``/proc/self/clear_refs``); False where that cannot be done."""
    global _child_peak_kib
    _child_peak_kib = 0
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def _peak_mib() -> float | None:
    """The larger of this process's peak resident memory since `_reset_peak` and its
    children's (`child_finished`), in MiB."""
    try:
        status = _STATUS.read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return max(int(line.split()[1]), _child_peak_kib) / 1024.0
    return None


def timed_call(call: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, StageCost]:
    """Run `call` and say what it cost where it ran: its CPU seconds (neither queueing nor
    waiting for a core is work), its wall seconds from start to end (not the time it waited
    for an executor) and, in a process running one stage at a time on Linux, the peak resident
    memory of that process (and of the programs it ran) while it ran `call`. Module-level so
    that process pools and Dask can pickle it by name."""
    measure_peak = _whole_process and _reset_peak()
    cpu_started, wall_started = _cpu_clock(), time.perf_counter()
    output = call(*args)
    cpu, wall = _cpu_clock() - cpu_started, time.perf_counter() - wall_started
    return output, StageCost(cpu, wall, peak_rss_mib=_peak_mib() if measure_peak else None)
